#include "query/fetch/fanout.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <unordered_map>

#include "core/counts.h"

namespace trailmap {
namespace {

// One aggregator's socket and what came of asking it.
struct Shard {
  std::string endpoint;
  std::unique_ptr<zmq::socket_t> socket;
  bool done = false;
  std::optional<Answer> answer;
  std::string failure;  // non-empty: why there is no answer
};

// Reads every frame of one message and keeps the last non-empty one.
bool ReceiveLastFrame(zmq::socket_t& socket, std::string* payload) {
  bool more = true;
  bool got = false;
  while (more) {
    zmq::message_t frame;
    if (!socket.recv(frame, zmq::recv_flags::dontwait)) return got;
    more = frame.more();
    if (frame.size() > 0) {
      *payload = frame.to_string();
      got = true;
    }
  }
  return got;
}

void Handle(Shard& shard, uint64_t query_id) {
  std::string payload;
  if (!ReceiveLastFrame(*shard.socket, &payload)) return;  // a bare delimiter: keep waiting
  Result<Answer> answer = DecodeAnswer(payload);
  if (!answer.ok()) {
    shard.failure = "answer does not decode: " + answer.status().ToString();
    shard.done = true;
    return;
  }
  if (answer->id != query_id) return;  // a stale answer to an earlier query: not ours
  shard.done = true;
  if (!answer->error.empty()) {
    shard.failure = "error: " + answer->error;
    return;
  }
  if (answer->shard.empty()) answer->shard = shard.endpoint;
  shard.answer = std::move(answer).value();
}

}  // namespace

FanoutResult FanOut(zmq::context_t& context, const std::vector<std::string>& endpoints,
                    const Query& query, const FanoutOptions& options) {
  const std::string request = EncodeQuery(query);
  std::vector<Shard> shards(endpoints.size());
  for (size_t i = 0; i < endpoints.size(); ++i) {
    Shard& shard = shards[i];
    shard.endpoint = endpoints[i];
    try {
      shard.socket = std::make_unique<zmq::socket_t>(context, zmq::socket_type::dealer);
      shard.socket->set(zmq::sockopt::linger, 0);
      shard.socket->connect(shard.endpoint);
      // DEALER queues the message for the pending connection; dontwait so a full queue is a
      // failure of this shard, not a hang of the whole query.
      if (!shard.socket->send(zmq::buffer(request), zmq::send_flags::dontwait)) {
        shard.failure = "could not queue the query";
        shard.done = true;
      }
    } catch (const zmq::error_t& e) {
      shard.failure = std::string("cannot connect: ") + e.what();
      shard.done = true;
    }
  }

  const auto deadline = std::chrono::steady_clock::now() + options.deadline;
  for (;;) {
    std::vector<zmq::pollitem_t> items;
    std::vector<Shard*> waiting;
    for (Shard& shard : shards) {
      if (shard.done) continue;
      items.push_back({static_cast<void*>(*shard.socket), 0, ZMQ_POLLIN, 0});
      waiting.push_back(&shard);
    }
    if (items.empty()) break;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) break;
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - now);
    try {
      zmq::poll(items, left);
    } catch (const zmq::error_t& e) {
      if (e.num() == EINTR) continue;
      for (Shard* shard : waiting) shard->failure = std::string("poll failed: ") + e.what();
      break;
    }
    for (size_t i = 0; i < items.size(); ++i) {
      if (items[i].revents & ZMQ_POLLIN) Handle(*waiting[i], query.id);
    }
  }

  FanoutResult result;
  for (Shard& shard : shards) {
    if (shard.answer) {
      result.answers.push_back(std::move(*shard.answer));
    } else {
      std::string reason = shard.failure;
      if (reason.empty()) {
        reason = "no answer within " + std::to_string(options.deadline.count()) + " ms";
      }
      result.failures.push_back({shard.endpoint, std::move(reason)});
    }
  }
  return result;
}

FoldedStacks MergeStackAnswers(const std::vector<Answer>& answers) {
  std::unordered_map<std::string, uint64_t> counts;
  bool saturated = false;  // past kMaxTotalCount a count stops there, as in the store
  for (const Answer& answer : answers) {
    if (answer.kind != Query::Kind::kStacks) continue;
    for (const FoldedStack& s : answer.stacks.stacks) {
      counts[s.stack] = SaturatingCountAdd(counts[s.stack], s.count, &saturated);
    }
  }
  FoldedStacks out;
  out.reserve(counts.size());
  for (auto& [stack, count] : counts) out.push_back(FoldedStack{stack, count});
  std::sort(out.begin(), out.end(),
            [](const FoldedStack& a, const FoldedStack& b) { return a.stack < b.stack; });
  return out;
}

}  // namespace trailmap
