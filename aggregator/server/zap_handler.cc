#include "aggregator/server/zap_handler.h"

#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
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

Result<std::vector<ClientKey>> ClientKeysForReload(std::string_view text, const std::string& path,
                                                   size_t current) {
  Result<std::vector<ClientKey>> keys = ParseClientKeys(text, path);
  if (!keys.ok() || !keys->empty() || current == 0) return keys;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) {
      line.remove_suffix(1);
    }
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    if (line == kNoClientsMarker) return keys;
    start = end + 1;
  }
  return Status::InvalidArgument("clients file " + path +
                                 " lists no client key (a file meant to admit no one must hold "
                                 "the line \"" +
                                 kNoClientsMarker + "\")");
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
  const char* status = decision.admitted    ? "200"
                       : malformed          ? "500"
                       : decision.temporary ? "300"
                                            : "400";
  return {"1.0",
          std::string(request_id),
          status,
          decision.reason,
          decision.admitted ? decision.key->name : "",
          ""};
}

struct ZapHandler::Watch {
  Watch(std::string d, std::string e, const ZapOptions& options)
      : domain(std::move(d)),
        endpoint(std::move(e)),
        cap({.max_admitted = options.max_connections,
             .reservation_ttl = options.reservation_ttl}) {}
  const std::string domain;
  const std::string endpoint;  // the socket's monitor endpoint
  std::unique_ptr<zmq::socket_t> monitor;
  ConnectionCap cap;
  std::atomic<size_t> admitted{0};  // cap.admitted() as of the last change, for other threads
};

ZapHandler::ZapHandler(zmq::context_t* context, std::vector<ClientKey> keys, ZapOptions options)
    : context_(context),
      options_(std::move(options)),
      keys_(std::make_shared<const std::vector<ClientKey>>(std::move(keys))) {
  for (const std::string& domain : options_.domains) {
    watches_.push_back(std::make_unique<Watch>(
        domain,
        "inproc://trailmap-connections-" + domain + "-" +
            std::to_string(reinterpret_cast<uintptr_t>(this)),
        options_));
  }
}

ZapHandler::~ZapHandler() { Stop(); }

Status ZapHandler::Start() {
  try {
    auto socket = std::make_unique<zmq::socket_t>(*context_, zmq::socket_type::rep);
    socket->set(zmq::sockopt::linger, 0);
    socket->bind(kZapEndpoint);
    // Connected before the servers' sockets start monitoring (inproc allows connect before
    // bind), so no event is lost; no bound on the queue, so none is dropped either.
    for (const std::unique_ptr<Watch>& w : watches_) {
      auto monitor = std::make_unique<zmq::socket_t>(*context_, zmq::socket_type::pair);
      monitor->set(zmq::sockopt::linger, 0);
      monitor->set(zmq::sockopt::rcvhwm, 0);
      monitor->connect(w->endpoint);
      w->monitor = std::move(monitor);
    }
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
  for (const std::unique_ptr<Watch>& w : watches_) w->monitor.reset();
  socket_.reset();
}

std::shared_ptr<const ClientKey> ZapHandler::Find(std::string_view name) const {
  std::shared_ptr<const std::vector<ClientKey>> keys;
  {
    std::lock_guard<std::mutex> lock(keys_mu_);
    keys = keys_;
  }
  for (const ClientKey& key : *keys) {
    if (key.name == name) return std::shared_ptr<const ClientKey>(keys, &key);
  }
  return nullptr;
}

void ZapHandler::ReloadKeys(std::vector<ClientKey> keys) {
  auto next = std::make_shared<const std::vector<ClientKey>>(std::move(keys));
  std::lock_guard<std::mutex> lock(keys_mu_);
  keys_ = std::move(next);
}

Result<std::string> ZapHandler::ReloadKeysFrom(const std::string& path) {
  const size_t current = key_count();
  Result<std::vector<ClientKey>> keys = Status::NotFound("cannot read " + path);
  if (std::ifstream file(path, std::ios::binary); file) {
    std::ostringstream text;
    text << file.rdbuf();
    if (!file.bad()) keys = ClientKeysForReload(text.str(), path, current);
  }
  if (!keys.ok()) {
    ++reloads_refused_;
    return Status::InvalidArgument(keys.status().message() + "; kept the " +
                                   std::to_string(current) + " client keys as they were");
  }
  const size_t taken = keys->size();
  ReloadKeys(std::move(keys).value());
  return "clients file " + path + " read again: " + std::to_string(taken) + " client keys (were " +
         std::to_string(current) + ")";
}

size_t ZapHandler::key_count() const {
  std::lock_guard<std::mutex> lock(keys_mu_);
  return keys_->size();
}

ZapCounters ZapHandler::counters() const {
  return {admitted_.load(), refused_.load(), refused_at_cap_.load(), malformed_.load(),
          failed_handshakes_.load(), reloads_refused_.load()};
}

std::string ZapHandler::MonitorEndpoint(std::string_view domain) const {
  for (const std::unique_ptr<Watch>& w : watches_) {
    if (w->domain == domain) return w->endpoint;
  }
  return "";
}

size_t ZapHandler::connections(std::string_view domain) const {
  for (const std::unique_ptr<Watch>& w : watches_) {
    if (w->domain == domain) return w->admitted.load();
  }
  return 0;
}

void ZapHandler::Run() {
  while (!stop_) {
    try {
      std::vector<zmq::pollitem_t> items = {{socket_->handle(), 0, ZMQ_POLLIN, 0}};
      for (const std::unique_ptr<Watch>& w : watches_) {
        items.push_back({w->monitor->handle(), 0, ZMQ_POLLIN, 0});
      }
      zmq::poll(items.data(), items.size(), std::chrono::milliseconds(100));
      // Events first: a handshake that completed frees its reservation before the next request.
      for (size_t i = 0; i < watches_.size(); ++i) {
        if (items[i + 1].revents & ZMQ_POLLIN) ReadEvents(*watches_[i]);
      }
      if (items[0].revents & ZMQ_POLLIN) Serve();
      // Refreshed every turn, not only when an event comes: a reservation that expires after
      // the last event (a client that got ZAP's 200 and left before its handshake completed)
      // must leave the count shown by status and self-metrics, which no later event may redo.
      const ConnectionCap::Clock::time_point now = ConnectionCap::Clock::now();
      for (const std::unique_ptr<Watch>& w : watches_) w->admitted = w->cap.admitted(now);
    } catch (const zmq::error_t& e) {
      if (e.num() == ETERM) return;
      ++thread_failures_;
      Log(std::string("ZAP handler: socket error: ") + e.what());
    } catch (const std::exception& e) {
      ++thread_failures_;
      Log(std::string("ZAP handler: request failed: ") + e.what());
    } catch (...) {
      ++thread_failures_;
      Log("ZAP handler: request failed with an unknown exception");
    }
  }
}

void ZapHandler::ReadEvents(Watch& watch) {
  // Each event: [uint16 event, uint32 value] in host order, then the endpoint (zmq_socket_monitor).
  for (int read = 0; read < 10'000; ++read) {
    zmq::message_t head;
    if (!watch.monitor->recv(head, zmq::recv_flags::dontwait)) break;
    bool more = head.more();
    while (more) {
      zmq::message_t rest;
      if (!watch.monitor->recv(rest, zmq::recv_flags::dontwait)) break;
      more = rest.more();
    }
    if (head.size() < 6) continue;
    uint16_t event = 0;
    uint32_t value = 0;
    std::memcpy(&event, head.data<char>(), 2);
    std::memcpy(&value, head.data<char>() + 2, 4);
    if (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL || event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL)
      ++failed_handshakes_;
    watch.cap.OnEvent(event, value, ConnectionCap::Clock::now());
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
    std::shared_ptr<const std::vector<ClientKey>> keys;  // holds decision.key
    {
      std::lock_guard<std::mutex> lock(keys_mu_);
      keys = keys_;
    }
    decision = DecideZap(*request, *keys);
    Watch* watch = nullptr;
    for (const std::unique_ptr<Watch>& w : watches_) {
      if (w->domain == request->domain) watch = w.get();
    }
    if (decision.admitted && watch != nullptr) {
      const auto now = ConnectionCap::Clock::now();
      if (!watch->cap.TryAdmit(now)) {
        const uint64_t refused = ++refused_at_cap_;
        const std::string name = decision.key->name;
        decision = {false, nullptr,
                    "too many connections: " + std::to_string(watch->cap.admitted(now)) + " " +
                        request->domain + " connections admitted, at most " +
                        std::to_string(options_.max_connections) +
                        " ([limits] max_connections); retry later",
                    /*temporary=*/true};
        if (refusal_logs_ < kMaxRefusalLogs || refused % 1000 == 0) {
          ++refusal_logs_;
          Log("ZAP handler: refused a connection of key " + name + " from " + request->address +
              ": " + decision.reason + " (" + std::to_string(refused) +
              " refused at the cap so far)");
        }
      }
      watch->admitted = watch->cap.admitted(now);
    }
    if (decision.admitted) {
      ++admitted_;
    } else if (!decision.temporary) {  // (refusals at the cap are counted above)
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
