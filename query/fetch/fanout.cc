#include "query/fetch/fanout.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>

#include "core/clock.h"
#include "core/counts.h"
#include "net/curve_socket.h"
#include "query/fetch/replica_choice.h"

namespace trailmap {
namespace {

// How often a waiting fan-out asks FanoutOptions::cancelled.
constexpr std::chrono::milliseconds kCancelCheck{100};

// One aggregator's socket and what came of asking it.
struct Shard {
  std::string endpoint;
  std::unique_ptr<zmq::socket_t> socket;
  bool done = false;
  std::optional<Answer> answer;
  std::string failure;       // non-empty: why there is no answer
  std::string over_budget;   // non-empty: the shard's error when the query was over its budget
  bool key_refused = false;  // the failure is the shard refusing this client's key
  std::unique_ptr<HandshakeWatch> watch;  // keyed only; after `socket`: destroyed before it
};

// What the socket to `endpoint` connects with: the member's own server key when it has one.
CurveClient CurveFor(const FanoutOptions& options, const std::string& endpoint) {
  CurveClient curve = options.curve;
  auto it = options.server_keys.find(endpoint);
  if (it != options.server_keys.end() && curve.keyed() && !it->second.empty()) {
    curve.server_key = it->second;
  }
  return curve;
}

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
  // A stale answer to an earlier query is not ours. An error with id 0 is: an aggregator echoes
  // the id of every query it can read, so it could not read this one, and no other answer comes.
  const bool unread = answer->id == 0 && !answer->error.empty();
  if (answer->id != query_id && !unread) return;
  shard.done = true;
  if (answer->key_refused && !answer->error.empty()) {
    shard.failure = "refused this key: " + answer->error;
    shard.key_refused = true;
    return;
  }
  if (!answer->error.empty()) {
    shard.failure = "error: " + answer->error;
    if (answer->over_budget) shard.over_budget = answer->error;
    return;
  }
  if (answer->shard.empty()) answer->shard = shard.endpoint;
  answer->endpoint = shard.endpoint;
  shard.answer = std::move(answer).value();
}

// Sends requests[i] to endpoints[i], all at once, and waits for answers to `query_id`.
FanoutResult FanOutEach(zmq::context_t& context, const std::vector<std::string>& endpoints,
                        const std::vector<std::string>& requests, uint64_t query_id,
                        std::chrono::milliseconds wait, const FanoutOptions& options) {
  std::vector<Shard> shards(endpoints.size());
  for (size_t i = 0; i < endpoints.size(); ++i) {
    Shard& shard = shards[i];
    const std::string& request = requests[i];
    shard.endpoint = endpoints[i];
    try {
      shard.socket = std::make_unique<zmq::socket_t>(context, zmq::socket_type::dealer);
      shard.socket->set(zmq::sockopt::linger, 0);
      const CurveClient curve = CurveFor(options, shard.endpoint);
      ApplyCurveClient(*shard.socket, curve);
      if (curve.keyed() && !curve.plaintext) {
        shard.watch = std::make_unique<HandshakeWatch>(context, *shard.socket, curve.name);
      }
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

  const auto deadline = std::chrono::steady_clock::now() + wait;
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
    if (options.cancelled && options.cancelled()) {
      for (Shard* shard : waiting) shard->failure = "cancelled: nobody waits for the answer";
      break;
    }
    // In slices, so a cancellation is seen within kCancelCheck.
    const auto left =
        std::min(std::chrono::ceil<std::chrono::milliseconds>(deadline - now), kCancelCheck);
    try {
      zmq::poll(items, left);
    } catch (const zmq::error_t& e) {
      if (e.num() == EINTR) continue;
      for (Shard* shard : waiting) shard->failure = std::string("poll failed: ") + e.what();
      break;
    }
    for (size_t i = 0; i < items.size(); ++i) {
      if (items[i].revents & ZMQ_POLLIN) Handle(*waiting[i], query_id);
    }
  }

  FanoutResult result;
  for (Shard& shard : shards) {
    if (shard.answer) {
      result.answers.push_back(std::move(*shard.answer));
    } else {
      std::string reason = shard.failure;
      if (reason.empty()) {
        reason = "no answer within " + std::to_string(wait.count()) + " ms";
        // A CURVE handshake the server refuses is silence on the socket; the monitor saw it.
        if (shard.watch && !shard.watch->Failure().empty()) {
          reason += ": " + shard.watch->Failure();
        } else if (options.curve.keyed()) {
          reason += " (if it is up: is key " + options.curve.name + " listed there?)";
        }
      }
      result.failures.push_back({shard.endpoint, std::move(reason)});
      if (!shard.over_budget.empty())
        result.over_budget.push_back({shard.endpoint, shard.over_budget});
      if (shard.key_refused) result.key_refused.push_back(result.failures.back());
    }
  }
  return result;
}

// The preferences of a replicated query over [from, to) of `hosts` (empty = all): asks the
// `asked` members how far they have applied their hosts, then the other owners of the hosts
// named behind by name (query/fetch/replica_choice.h), within a tenth of the deadline (answers
// come from memory). A member that does not answer in time counts as holding nothing: the rounds
// ask it anyway.
std::vector<ReplicaPreference> ChooseByCompleteness(zmq::context_t& context, const Cluster& cluster,
                                                    const std::vector<size_t>& asked,
                                                    const std::vector<std::string>& hosts,
                                                    int64_t from, int64_t to, uint64_t id,
                                                    const FanoutOptions& options) {
  const int64_t now = UnixSecondsNow();
  const int64_t before = CompletenessBefore(to, now);
  const auto end = std::chrono::steady_clock::now() + options.deadline / 10;
  ReplicaCompleteness completeness(cluster.members.size());
  // One round: members[i] asked about names[i] (empty: the query's hosts, or when it names none
  // every host behind `before`).
  const auto ask = [&](const std::vector<size_t>& members,
                       const std::vector<std::vector<std::string>>& names) {
    std::vector<std::string> endpoints, requests;
    std::vector<const std::vector<std::string>*> named;
    for (size_t i = 0; i < members.size(); ++i) {
      Query q;
      q.id = id;
      q.kind = Query::Kind::kCompleteness;
      named.push_back(names[i].empty() ? &hosts : &names[i]);
      q.completeness.hosts = *named.back();
      q.completeness.before = named.back()->empty() ? before : INT64_MAX;
      endpoints.push_back(cluster.members[members[i]].query);
      requests.push_back(EncodeQuery(q));
    }
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
    const FanoutResult r = FanOutEach(context, endpoints, requests, id,
                                      std::max(left, std::chrono::milliseconds(1)), options);
    for (const Answer& a : r.answers) {
      if (a.kind != Query::Kind::kCompleteness) continue;
      for (size_t i = 0; i < members.size(); ++i) {
        if (endpoints[i] == a.endpoint) completeness.Add(members[i], a.completeness, *named[i]);
      }
    }
  };
  ask(asked, std::vector<std::vector<std::string>>(asked.size()));
  const std::vector<std::vector<std::string>> follow = FollowUps(cluster, from, to, completeness);
  std::vector<size_t> again;
  std::vector<std::vector<std::string>> names;
  for (size_t m = 0; m < follow.size(); ++m) {
    if (follow[m].empty()) continue;
    again.push_back(m);
    names.push_back(follow[m]);
  }
  if (!again.empty()) ask(again, names);
  return ChooseReplicas(cluster, from, to, before, completeness);
}

// Which members a round's failures leave without a live replica: simulates each possible owner
// list's choice round by round (failed_round[m] = the round member m failed in, or -1). The
// orders preferences give (core/cluster.h "Replicas by completeness") are simulated too.
std::vector<std::vector<size_t>> LostOwnerSets(const Cluster& cluster,
                                               const std::vector<size_t>& asked,
                                               const std::vector<int>& failed_round,
                                               const ReplicaSelection& selection, int64_t from,
                                               int64_t to) {
  std::vector<std::vector<size_t>> lost;
  for (size_t e = 0; e < cluster.epochs.size(); ++e) {
    const int64_t begin = e == 0 ? INT64_MIN : cluster.epochs[e].from;
    const int64_t end = e + 1 < cluster.epochs.size() ? cluster.epochs[e + 1].from : INT64_MAX;
    if (end <= from || begin >= to) continue;
    std::vector<std::vector<size_t>> lists;
    const bool all = PossibleOwnerLists(cluster, cluster.epochs[e], 100'000, &lists);
    if (!all) lists.clear();
    for (const ReplicaPreference& p : selection.prefer) {
      if (p.epoch != e) continue;
      std::vector<size_t> owners = cluster.Owners(p.host, begin);
      ApplyPreference(cluster, selection, p.host, e, &owners);
      lists.push_back(std::move(owners));
    }
    for (const std::vector<size_t>& owners : lists) {
      // The chosen owner of round k is the first not failed before k; lost when each chosen
      // one failed in its round.
      int round = 0;
      bool answered = false;
      for (size_t o : owners) {
        const bool was_asked = std::find(asked.begin(), asked.end(), o) != asked.end();
        const int f = was_asked ? failed_round[o] : 0;  // never asked: as if down from the start
        if (f >= 0 && f < round) continue;              // found down before this round
        if (f != round) {  // the chosen one this round, and it answered
          answered = true;
          break;
        }
        round = f + 1;
      }
      if (answered) continue;
      std::vector<size_t> set = owners;
      std::sort(set.begin(), set.end());
      if (std::find(lost.begin(), lost.end(), set) == lost.end()) lost.push_back(std::move(set));
    }
  }
  std::sort(lost.begin(), lost.end());
  return lost;
}

}  // namespace

FanoutResult FanOut(zmq::context_t& context, const std::vector<std::string>& endpoints,
                    const Query& query, const FanoutOptions& options) {
  return FanOutEach(context, endpoints,
                    std::vector<std::string>(endpoints.size(), EncodeQuery(query)), query.id,
                    options.deadline, options);
}

bool PossibleOwnerLists(const Cluster& cluster, const ClusterEpoch& epoch, size_t limit,
                        std::vector<std::vector<size_t>>* lists) {
  const size_t r = std::min<size_t>(cluster.replication, epoch.members.size());
  std::vector<std::string_view> zones;
  for (size_t m : epoch.members) zones.push_back(cluster.members[m].zone);
  std::sort(zones.begin(), zones.end());
  zones.erase(std::unique(zones.begin(), zones.end()), zones.end());
  const size_t distinct = std::min(r, zones.size());  // the first `distinct` owners differ in zone
  std::vector<size_t> list;
  std::vector<bool> used(cluster.members.size(), false);
  bool complete = true;
  // Depth-first over the members in order; the first `distinct` places take new zones only.
  std::function<void()> extend = [&] {
    if (!complete) return;
    if (list.size() == r) {
      if (lists->size() >= limit) {
        complete = false;
        return;
      }
      lists->push_back(list);
      return;
    }
    for (size_t m : epoch.members) {
      if (used[m]) continue;
      if (list.size() < distinct) {
        bool zone_taken = false;
        for (size_t o : list) zone_taken |= cluster.members[o].zone == cluster.members[m].zone;
        if (zone_taken) continue;
      }
      used[m] = true;
      list.push_back(m);
      extend();
      list.pop_back();
      used[m] = false;
    }
  };
  extend();
  return complete;
}

FanoutResult FanOutReplicas(zmq::context_t& context, const Cluster& cluster,
                            const std::vector<size_t>& asked, Query query,
                            const FanoutOptions& options) {
  const bool stacks = query.kind == Query::Kind::kStacks;
  const int64_t from = stacks ? query.stacks.from : query.histograms.from;
  const int64_t to = stacks ? query.stacks.to : query.histograms.to;
  std::optional<ReplicaScope>& scope = stacks ? query.stacks.replicas : query.histograms.replicas;
  scope.emplace();
  scope->cluster = cluster;
  for (ClusterMember& m : scope->cluster.members) m.ingest = m.query = "";  // not sent

  FanoutResult result;
  std::vector<int> failed_round(cluster.members.size(), -1);
  std::vector<std::string> reasons(cluster.members.size());
  std::vector<size_t> up = asked;
  const auto start = std::chrono::steady_clock::now();
  if (cluster.replication > 1) {
    const std::vector<std::string>& hosts = stacks ? query.stacks.hosts : query.histograms.hosts;
    scope->selection.prefer =
        ChooseByCompleteness(context, cluster, asked, hosts, from, to, query.id, options);
  }
  for (uint32_t round = 0; round < std::max<uint32_t>(1, cluster.replication) && !up.empty();
       ++round) {
    std::vector<std::string> endpoints, requests;
    for (size_t m : up) {
      scope->selection.member = cluster.members[m].name;
      endpoints.push_back(cluster.members[m].query);
      requests.push_back(EncodeQuery(query));
    }
    const auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
    std::chrono::milliseconds wait = options.deadline - spent;
    if (round == 0 && cluster.replication > 1) wait = std::min(wait, options.deadline / 2);
    wait = std::max(wait, std::chrono::milliseconds(1));
    FanoutResult answered = FanOutEach(context, endpoints, requests, query.id, wait, options);
    for (Answer& a : answered.answers) result.answers.push_back(std::move(a));
    for (ShardFailure& f : answered.key_refused) result.key_refused.push_back(std::move(f));
    // Over budget on one replica is over budget on the others: no further round.
    if (!answered.over_budget.empty()) {
      result.over_budget = std::move(answered.over_budget);
      return result;
    }
    bool any_failed = false;
    std::vector<size_t> still_up;
    for (size_t m : up) {
      auto f = std::find_if(
          answered.failures.begin(), answered.failures.end(),
          [&](const ShardFailure& x) { return x.endpoint == cluster.members[m].query; });
      if (f == answered.failures.end()) {
        still_up.push_back(m);
        continue;
      }
      failed_round[m] = static_cast<int>(round);
      reasons[m] = f->reason;
      scope->selection.down.push_back(cluster.members[m].name);
      scope->selection.down_in.push_back(round);
      any_failed = true;
    }
    if (!any_failed) break;
    scope->selection.round = round + 1;
    up = std::move(still_up);
  }

  const std::vector<std::vector<size_t>> lost =
      LostOwnerSets(cluster, asked, failed_round, scope->selection, from, to);
  std::vector<bool> in_lost(cluster.members.size(), false);
  for (const std::vector<size_t>& set : lost) {
    std::string names, why;
    for (size_t m : set) {
      in_lost[m] = true;
      names += (names.empty() ? "" : "+") + cluster.members[m].name;
      why += (why.empty() ? "" : "; ") + cluster.members[m].name + ": " +
             (reasons[m].empty() ? std::string("not asked") : reasons[m]);
    }
    result.failures.push_back(
        {names, "no live replica for the hosts placed on these members (" + why + ")"});
  }
  for (size_t m : asked) {
    if (failed_round[m] < 0 || in_lost[m]) continue;
    result.skipped.push_back({cluster.members[m].name + " (" + cluster.members[m].query + ")",
                              reasons[m] + "; its hosts were answered by their other replicas"});
  }
  return result;
}

FoldedStacks MergeStackAnswers(const std::vector<Answer>& answers, bool baseline) {
  std::unordered_map<std::string, uint64_t> counts;
  bool saturated = false;  // past kMaxTotalCount a count stops there, as in the store
  for (const Answer& answer : answers) {
    if (answer.kind != Query::Kind::kStacks) continue;
    if (baseline && !answer.stacks.baseline) continue;
    for (const FoldedStack& s : baseline ? *answer.stacks.baseline : answer.stacks.stacks) {
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
