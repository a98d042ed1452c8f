#include "aggregator/zap_handler.h"

#include <chrono>
#include <zmq.hpp>

#include "core/log.h"

namespace trailmap::aggregator {
namespace {

constexpr size_t kHeaderFrames = 6;  // version .. mechanism
constexpr size_t kCurveKeyBytes = 32;
constexpr int kMaxRefusalLogs = 100;  // then one line per 1,000 refusals

}  // namespace

Result<ZapRequest> ParseZapRequest(const std::vector<std::string>& frames) {
  if (frames.size() < kHeaderFrames) {
    return Status::InvalidArgument("ZAP request of " + std::to_string(frames.size()) +
                                   " frames; at least 6 expected");
  }
  if (frames[0] != "1.0") {
    return Status::InvalidArgument("ZAP version \"" + frames[0].substr(0, 16) +
                                   "\"; only 1.0 is known");
  }
  ZapRequest r{frames[1], frames[2], frames[3], frames[5], ""};
  if (r.mechanism == "CURVE") {
    if (frames.size() != kHeaderFrames + 1 || frames[6].size() != kCurveKeyBytes) {
      return Status::InvalidArgument("ZAP CURVE request without one 32-byte key frame");
    }
    r.public_key = Z85Encode(frames[6]);
  }
  return r;
}

ZapDecision DecideZap(const ZapRequest& request, const std::vector<ClientKey>& keys) {
  if (request.mechanism != "CURVE") {
    return {false, nullptr,
            "mechanism " + request.mechanism.substr(0, 16) + " refused; CURVE only"};
  }
  for (const ClientKey& key : keys) {
    if (key.public_key == request.public_key) return {true, &key, "OK"};
  }
  return {false, nullptr, "key " + request.public_key + " is not listed"};
}

std::vector<std::string> ZapReplyFrames(std::string_view request_id, const ZapDecision& decision,
                                        bool malformed) {
  const char* status = decision.admitted ? "200" : malformed ? "500" : "400";
  return {"1.0",
          std::string(request_id),
          status,
          decision.reason,
          decision.admitted ? decision.key->name : "",
          ""};
}

ZapHandler::ZapHandler(zmq::context_t* context, std::vector<ClientKey> keys)
    : context_(context), keys_(std::move(keys)) {}

ZapHandler::~ZapHandler() { Stop(); }

Status ZapHandler::Start() {
  try {
    auto socket = std::make_unique<zmq::socket_t>(*context_, zmq::socket_type::rep);
    socket->set(zmq::sockopt::linger, 0);
    socket->bind(kZapEndpoint);
    socket_ = std::move(socket);
  } catch (const zmq::error_t& e) {
    return Status::Unavailable(std::string("ZAP handler: cannot bind ") + kZapEndpoint + ": " +
                               e.what());
  }
  stop_ = false;
  thread_ = std::thread([this] { Run(); });
  return Status::Ok();
}

void ZapHandler::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  socket_.reset();
}

const ClientKey* ZapHandler::Find(std::string_view name) const {
  for (const ClientKey& key : keys_) {
    if (key.name == name) return &key;
  }
  return nullptr;
}

ZapCounters ZapHandler::counters() const {
  return {admitted_.load(), refused_.load(), malformed_.load()};
}

void ZapHandler::Run() {
  while (!stop_) {
    try {
      zmq::pollitem_t item{socket_->handle(), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, std::chrono::milliseconds(100));
      if (item.revents & ZMQ_POLLIN) Serve();
    } catch (const zmq::error_t& e) {
      if (e.num() == ETERM) return;
      Log(std::string("ZAP handler: socket error: ") + e.what());
    } catch (const std::exception& e) {
      Log(std::string("ZAP handler: request failed: ") + e.what());
    }
  }
}

void ZapHandler::Serve() {
  std::vector<std::string> frames;
  bool more = true;
  while (more) {
    zmq::message_t frame;
    if (!socket_->recv(frame, zmq::recv_flags::dontwait)) break;
    more = frame.more();
    if (frames.size() < 16) frames.push_back(frame.to_string());
  }
  Result<ZapRequest> request = ParseZapRequest(frames);
  ZapDecision decision;
  std::string request_id = frames.size() > 1 ? frames[1] : "";
  if (!request.ok()) {
    ++malformed_;
    decision.reason = request.status().message();
    Log("ZAP handler: " + request.status().message());
  } else {
    decision = DecideZap(*request, keys_);
    if (decision.admitted) {
      ++admitted_;
    } else {
      const uint64_t refused = ++refused_;
      if (refusal_logs_ < kMaxRefusalLogs || refused % 1000 == 0) {
        ++refusal_logs_;
        Log("ZAP handler: refused a connection from " + request->address + " to " +
            request->domain + ": " + decision.reason + " (" + std::to_string(refused) +
            " refused so far); list its .pub in the clients file to admit it");
      }
    }
  }
  // A REP socket must answer every request it took, even an unreadable one.
  const std::vector<std::string> reply = ZapReplyFrames(request_id, decision, !request.ok());
  for (size_t i = 0; i < reply.size(); ++i) {
    socket_->send(zmq::buffer(reply[i]),
                  i + 1 < reply.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
  }
}

}  // namespace trailmap::aggregator
