#include "aggregator/router_server.h"

#include <algorithm>
#include <exception>
#include <vector>
#include <zmq.hpp>

#include "core/log.h"

namespace trailmap::aggregator {

RouterServer::RouterServer(zmq::context_t* context, Options options, PeerGroupHandler handler,
                           Tick tick)
    : context_(context),
      options_(std::move(options)),
      handler_(std::move(handler)),
      tick_(std::move(tick)) {}

RouterServer::RouterServer(zmq::context_t* context, Options options, GroupHandler handler,
                           Tick tick)
    : RouterServer(context, std::move(options),
                   PeerGroupHandler([handler = std::move(handler)](
                                        const std::vector<Result<std::string_view>>& payloads,
                                        const std::vector<Peer>&) { return handler(payloads); }),
                   std::move(tick)) {}

RouterServer::RouterServer(zmq::context_t* context, Options options, PeerHandler handler, Tick tick)
    : RouterServer(context, std::move(options),
                   PeerGroupHandler([handler = std::move(handler)](
                                        const std::vector<Result<std::string_view>>& payloads,
                                        const std::vector<Peer>& peers) {
                     std::vector<std::optional<std::string>> replies;
                     replies.reserve(payloads.size());
                     for (size_t i = 0; i < payloads.size(); ++i)
                       replies.push_back(handler(payloads[i], peers[i]));
                     return replies;
                   }),
                   std::move(tick)) {}

RouterServer::RouterServer(zmq::context_t* context, Options options, Handler handler, Tick tick)
    : RouterServer(
          context, std::move(options),
          PeerHandler([handler = std::move(handler)](const Result<std::string_view>& payload,
                                                     const Peer&) { return handler(payload); }),
          std::move(tick)) {}

RouterServer::~RouterServer() { Stop(); }

Status RouterServer::Start() {
  try {
    auto socket = std::make_unique<zmq::socket_t>(*context_, zmq::socket_type::router);
    socket->set(zmq::sockopt::linger, 0);  // unsent replies are resent by the peers anyway
    socket->set(zmq::sockopt::maxmsgsize, options_.max_message_bytes);
    if (!options_.curve_secret_key.empty()) {
      try {
        socket->set(zmq::sockopt::curve_server, 1);
        socket->set(zmq::sockopt::curve_secretkey, options_.curve_secret_key);
      } catch (const zmq::error_t& e) {
        return Status::InvalidArgument(options_.name + ": the CURVE secret key is refused (" +
                                       e.what() + "); make one with trailmap keygen");
      }
    }
    if (!options_.zap_domain.empty()) socket->set(zmq::sockopt::zap_domain, options_.zap_domain);
    socket->bind(options_.endpoint);
    bound_ = socket->get(zmq::sockopt::last_endpoint);
    socket_ = std::move(socket);
  } catch (const zmq::error_t& e) {
    return Status::Unavailable(options_.name + ": cannot bind " + options_.endpoint + ": " +
                               e.what());
  }
  stop_ = false;
  thread_ = std::thread([this] { Run(); });
  return Status::Ok();
}

void RouterServer::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  socket_.reset();
}

void RouterServer::Run() {
  while (!stop_) {
    try {
      zmq::pollitem_t item{socket_->handle(), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, std::chrono::milliseconds(options_.tick_ms));
      if (item.revents & ZMQ_POLLIN) Serve();
    } catch (const zmq::error_t& e) {
      if (e.num() == ETERM) return;  // the context is closing
      Log(options_.name + ": socket error: " + e.what());
    } catch (const std::exception& e) {
      Log(options_.name + ": request failed: " + e.what());
    } catch (...) {
      Log(options_.name + ": request failed with an unknown exception");
    }
    try {
      if (tick_) tick_();
    } catch (const std::exception& e) {
      Log(options_.name + ": tick failed: " + e.what());
    }
  }
}

void RouterServer::Serve() {
  // One waiting message is [identity, "" delimiters..., payload]: the identity and delimiters
  // form the reply envelope.
  struct Request {
    std::vector<zmq::message_t> frames;
    size_t payload_at = 1;
  };
  std::vector<Request> requests;
  std::vector<Result<std::string_view>> payloads;
  std::vector<Peer> peers;
  requests.reserve(std::max<size_t>(options_.max_group, 1));
  while (requests.size() < std::max<size_t>(options_.max_group, 1)) {
    Request r;
    do {
      zmq::message_t frame;
      if (!socket_->recv(frame, zmq::recv_flags::dontwait)) break;
      r.frames.push_back(std::move(frame));
    } while (r.frames.back().more());
    if (r.frames.empty()) break;
    std::vector<zmq::message_t>& frames = r.frames;
    while (r.payload_at < frames.size() && frames[r.payload_at].size() == 0 &&
           r.payload_at + 1 < frames.size()) {
      ++r.payload_at;
    }
    if (frames.size() < 2) {
      payloads.emplace_back(Status::InvalidArgument("message without a payload frame"));
    } else if (r.payload_at + 1 != frames.size()) {
      payloads.emplace_back(
          Status::InvalidArgument("message of " + std::to_string(frames.size() - 1) +
                                  " frames after the identity; expected one payload"));
      r.payload_at = 1;
    } else {
      const zmq::message_t& payload = frames[r.payload_at];
      payloads.emplace_back(std::string_view(payload.data<char>(), payload.size()));
    }
    // Every frame of a message carries its connection's metadata; the last one is always there.
    const char* user_id = zmq_msg_gets(frames.back().handle(), "User-Id");
    peers.push_back({user_id != nullptr ? user_id : ""});
    requests.push_back(std::move(r));
  }
  if (requests.empty()) return;
  const std::vector<std::optional<std::string>> replies = handler_(payloads, peers);
  for (size_t k = 0; k < requests.size() && k < replies.size(); ++k) {
    if (!replies[k]) continue;
    const Request& r = requests[k];
    for (size_t i = 0; i < r.payload_at; ++i) {
      socket_->send(zmq::buffer(r.frames[i].data(), r.frames[i].size()),
                    zmq::send_flags::sndmore | zmq::send_flags::dontwait);
    }
    socket_->send(zmq::buffer(*replies[k]), zmq::send_flags::dontwait);
  }
}

}  // namespace trailmap::aggregator
