#include "aggregator/server/router_server.h"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <vector>
#include <zmq.hpp>

#include "core/log.h"

namespace trailmap::aggregator {

struct RouterServer::Request {
  std::vector<zmq::message_t> frames;
  size_t payload_at = 1;
  Peer peer;
  std::optional<Status> invalid;  // an envelope without exactly one payload frame
};

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
    socket->set(zmq::sockopt::rcvhwm, options_.receive_hwm);
    socket->set(zmq::sockopt::handshake_ivl, static_cast<int>(options_.handshake_timeout.count()));
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
    if (!options_.monitor_endpoint.empty() &&
        zmq_socket_monitor(socket->handle(), options_.monitor_endpoint.c_str(),
                           ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED |
                               ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH |
                               ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                               ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) != 0) {
      return Status::Unavailable(options_.name + ": cannot monitor its connections at " +
                                 options_.monitor_endpoint + ": " + zmq_strerror(zmq_errno()));
    }
    socket->bind(options_.endpoint);
    bound_ = socket->get(zmq::sockopt::last_endpoint);
    socket_ = std::move(socket);
    if (options_.workers > 0) {
      auto replies = std::make_unique<zmq::socket_t>(*context_, zmq::socket_type::pull);
      replies->set(zmq::sockopt::linger, 0);
      replies_endpoint_ = "inproc://trailmap-router-replies-" +
                          std::to_string(reinterpret_cast<uintptr_t>(this));
      replies->bind(replies_endpoint_);
      replies_ = std::move(replies);
    }
  } catch (const zmq::error_t& e) {
    return Status::Unavailable(options_.name + ": cannot bind " + options_.endpoint + ": " +
                               e.what());
  }
  stop_ = false;
  for (size_t i = 0; i < options_.workers; ++i) workers_.emplace_back([this] { Work(); });
  thread_ = std::thread([this] { Run(); });
  return Status::Ok();
}

void RouterServer::Stop() {
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    stop_ = true;
  }
  queue_cv_.notify_all();
  for (std::thread& w : workers_) w.join();
  workers_.clear();
  if (thread_.joinable()) thread_.join();
  queue_.clear();
  queued_bytes_ = 0;
  replies_.reset();
  socket_.reset();
}

bool RouterServer::Enqueue(Request& r) {
  size_t bytes = 0;
  if (r.invalid) {
    for (const zmq::message_t& frame : r.frames) bytes += frame.size();
  } else {
    bytes = r.frames[r.payload_at].size();
  }
  std::unique_lock<std::mutex> lock(queue_mu_);
  const size_t held = queued_bytes_.load();
  const bool over_bytes =
      options_.max_queued_bytes > 0 && held > 0 && held + bytes > options_.max_queued_bytes;
  if (!over_bytes && queue_.size() < options_.max_queued) {
    queued_bytes_ += bytes;
    queue_.push_back(std::make_unique<Request>(std::move(r)));
    lock.unlock();
    queue_cv_.notify_one();
    return true;
  }
  lock.unlock();
  if (!options_.busy) return false;
  if (r.invalid) return true;  // an odd envelope when full: dropped (the handler runs on workers)
  ++busy_answered_;
  const zmq::message_t& payload = r.frames[r.payload_at];
  if (std::optional<std::string> reply =
          options_.busy(std::string_view(payload.data<char>(), payload.size()), r.peer)) {
    Send(r, *reply);
  }
  return true;
}

void RouterServer::Run() {
  while (!stop_) {
    try {
      zmq::pollitem_t items[] = {{socket_->handle(), 0, ZMQ_POLLIN, 0},
                                 {replies_ ? replies_->handle() : nullptr, 0, ZMQ_POLLIN, 0}};
      zmq::poll(items, replies_ ? 2 : 1, std::chrono::milliseconds(options_.tick_ms));
      if (replies_ && (items[1].revents & ZMQ_POLLIN)) SendReplies();
      if (items[0].revents & ZMQ_POLLIN) Serve();
    } catch (const zmq::error_t& e) {
      if (e.num() == ETERM) return;  // the context is closing
      ++thread_failures_;
      Log(options_.name + ": socket error: " + e.what());
    } catch (const std::exception& e) {
      ++thread_failures_;
      Log(options_.name + ": request failed: " + e.what());
    } catch (...) {
      ++thread_failures_;
      Log(options_.name + ": request failed with an unknown exception");
    }
    try {
      if (tick_) tick_();
    } catch (const std::exception& e) {
      ++thread_failures_;
      Log(options_.name + ": tick failed: " + e.what());
    } catch (...) {
      ++thread_failures_;
      Log(options_.name + ": tick failed with an unknown exception");
    }
  }
}

void RouterServer::Serve() {
  // One waiting message is [identity, "" delimiters..., payload]: the identity and delimiters
  // form the reply envelope.
  std::vector<Request> requests;
  std::vector<Result<std::string_view>> payloads;
  std::vector<Peer> peers;
  const size_t max_group = options_.workers > 0 ? 1 : std::max<size_t>(options_.max_group, 1);
  requests.reserve(max_group);
  while (requests.size() < max_group) {
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
    // Every frame of a message carries its connection's metadata; the last one is always there.
    const char* user_id = zmq_msg_gets(frames.back().handle(), "User-Id");
    r.peer.key_name = user_id != nullptr ? user_id : "";
    if (frames.size() < 2) {
      r.invalid = Status::InvalidArgument("message without a payload frame");
    } else if (r.payload_at + 1 != frames.size()) {
      r.invalid = Status::InvalidArgument("message of " + std::to_string(frames.size() - 1) +
                                          " frames after the identity; expected one payload");
      r.payload_at = 1;
    }
    if (options_.workers > 0) {
      // Every request, even an odd one, goes to the workers: the handler then runs on them only.
      if (Enqueue(r)) continue;
      payloads.emplace_back(Status::ResourceExhausted(
          options_.name + ": " + std::to_string(options_.max_queued) +
          " requests are already waiting for a worker; try again later"));
    } else if (r.invalid) {
      payloads.emplace_back(*r.invalid);
    } else {
      const zmq::message_t& payload = frames[r.payload_at];
      payloads.emplace_back(std::string_view(payload.data<char>(), payload.size()));
    }
    peers.push_back(r.peer);
    requests.push_back(std::move(r));
  }
  if (requests.empty()) return;
  const std::vector<std::optional<std::string>> replies = handler_(payloads, peers);
  for (size_t k = 0; k < requests.size() && k < replies.size(); ++k) {
    if (replies[k]) Send(requests[k], *replies[k]);
  }
}

void RouterServer::Send(const Request& r, const std::string& reply) {
  for (size_t i = 0; i < r.payload_at; ++i) {
    socket_->send(zmq::buffer(r.frames[i].data(), r.frames[i].size()),
                  zmq::send_flags::sndmore | zmq::send_flags::dontwait);
  }
  socket_->send(zmq::buffer(reply), zmq::send_flags::dontwait);
}

void RouterServer::SendReplies() {
  // Each message from a worker is the request's envelope frames, then the reply.
  while (true) {
    std::vector<zmq::message_t> frames;
    do {
      zmq::message_t frame;
      if (!replies_->recv(frame, zmq::recv_flags::dontwait)) break;
      frames.push_back(std::move(frame));
    } while (frames.back().more());
    if (frames.empty()) return;
    for (size_t i = 0; i + 1 < frames.size(); ++i) {
      socket_->send(frames[i], zmq::send_flags::sndmore | zmq::send_flags::dontwait);
    }
    socket_->send(frames.back(), zmq::send_flags::dontwait);
  }
}

void RouterServer::Work() {
  std::optional<zmq::socket_t> out;  // this worker's end of the reply pipe
  try {
    out.emplace(*context_, zmq::socket_type::push);
    out->set(zmq::sockopt::linger, 0);
    out->connect(replies_endpoint_);
  } catch (const zmq::error_t& e) {
    ++thread_failures_;
    Log(options_.name + ": worker cannot reach the server thread: " + e.what());
    return;
  }
  const size_t max_group = std::max<size_t>(options_.max_group, 1);
  while (true) {
    std::vector<std::unique_ptr<Request>> group;
    {
      std::unique_lock<std::mutex> lock(queue_mu_);
      queue_cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      while (!queue_.empty() && group.size() < max_group) {
        group.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    size_t bytes = 0;
    try {
      std::vector<Result<std::string_view>> payloads;
      std::vector<Peer> peers;
      for (const std::unique_ptr<Request>& r : group) {
        peers.push_back(r->peer);
        if (r->invalid) {
          for (const zmq::message_t& frame : r->frames) bytes += frame.size();
          payloads.emplace_back(*r->invalid);
          continue;
        }
        const zmq::message_t& payload = r->frames[r->payload_at];
        bytes += payload.size();
        payloads.emplace_back(std::string_view(payload.data<char>(), payload.size()));
      }
      const std::vector<std::optional<std::string>> replies = handler_(payloads, peers);
      for (size_t k = 0; k < group.size() && k < replies.size(); ++k) {
        if (!replies[k]) continue;
        Request& r = *group[k];
        for (size_t i = 0; i < r.payload_at; ++i) {
          out->send(r.frames[i], zmq::send_flags::sndmore | zmq::send_flags::dontwait);
        }
        out->send(zmq::buffer(*replies[k]), zmq::send_flags::dontwait);
      }
    } catch (const zmq::error_t& e) {
      queued_bytes_ -= bytes;
      if (e.num() == ETERM) return;  // the context is closing
      ++thread_failures_;
      Log(options_.name + ": worker socket error: " + e.what());
      continue;
    } catch (const std::exception& e) {
      ++thread_failures_;
      Log(options_.name + ": request failed: " + e.what());
    } catch (...) {
      ++thread_failures_;
      Log(options_.name + ": request failed with an unknown exception");
    }
    queued_bytes_ -= bytes;
  }
}

}  // namespace trailmap::aggregator
