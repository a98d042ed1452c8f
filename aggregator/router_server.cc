#include "aggregator/router_server.h"

#include <exception>
#include <vector>
#include <zmq.hpp>

#include "core/log.h"

namespace trailmap::aggregator {

RouterServer::RouterServer(zmq::context_t* context, Options options, Handler handler, Tick tick)
    : context_(context),
      options_(std::move(options)),
      handler_(std::move(handler)),
      tick_(std::move(tick)) {}

RouterServer::~RouterServer() { Stop(); }

Status RouterServer::Start() {
  try {
    auto socket = std::make_unique<zmq::socket_t>(*context_, zmq::socket_type::router);
    socket->set(zmq::sockopt::linger, 0);  // unsent replies are resent by the peers anyway
    socket->set(zmq::sockopt::maxmsgsize, options_.max_message_bytes);
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
  std::vector<zmq::message_t> frames;
  do {
    zmq::message_t frame;
    if (!socket_->recv(frame, zmq::recv_flags::dontwait)) break;
    frames.push_back(std::move(frame));
  } while (frames.back().more());
  if (frames.empty()) return;

  // [identity, "" delimiters..., payload]: the identity and delimiters form the reply envelope.
  size_t payload_at = 1;
  while (payload_at < frames.size() && frames[payload_at].size() == 0 &&
         payload_at + 1 < frames.size()) {
    ++payload_at;
  }
  std::optional<std::string> reply;
  if (frames.size() < 2) {
    reply = handler_(Status::InvalidArgument("message without a payload frame"));
  } else if (payload_at + 1 != frames.size()) {
    reply = handler_(Status::InvalidArgument("message of " + std::to_string(frames.size() - 1) +
                                             " frames after the identity; expected one payload"));
    payload_at = 1;
  } else {
    const zmq::message_t& payload = frames[payload_at];
    reply = handler_(std::string_view(payload.data<char>(), payload.size()));
  }
  if (!reply) return;
  for (size_t i = 0; i < payload_at; ++i) {
    socket_->send(zmq::buffer(frames[i].data(), frames[i].size()),
                  zmq::send_flags::sndmore | zmq::send_flags::dontwait);
  }
  socket_->send(zmq::buffer(*reply), zmq::send_flags::dontwait);
}

}  // namespace trailmap::aggregator
