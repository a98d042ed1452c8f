// Applies a CurveClient (net/curve_keys.h) to a ZeroMQ client socket before it connects, and
// watches its CURVE handshakes. Header-only, for the libraries that already link cppzmq
// (trailmap::core itself does not).
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <zmq.hpp>

#include "net/curve_keys.h"

namespace trailmap {

// Makes `socket` a CURVE client of `curve.server_key` with its own pair; nothing when plaintext
// (or unkeyed: callers check CurveClient::Usable first). Throws zmq::error_t on a bad key.
inline void ApplyCurveClient(zmq::socket_t& socket, const CurveClient& curve) {
  if (curve.plaintext || !curve.keyed()) return;
  socket.set(zmq::sockopt::curve_serverkey, curve.server_key);
  socket.set(zmq::sockopt::curve_publickey, curve.public_key);
  socket.set(zmq::sockopt::curve_secretkey, curve.secret_key);
}

// What a failed handshake of a CURVE client means, from the client's side (libzmq's socket
// monitor, ZMQ_EVENT_HANDSHAKE_FAILED_*):
//   - AUTH: the server's ZAP handler refused this client's key (status 400: not listed; 300:
//     temporarily, e.g. at its connection cap);
//   - NO_DETAIL: the server closed the connection during the handshake, which is what a client
//     sees when the server key it was given is not the server's (the server cannot open the
//     client's HELLO and hangs up);
//   - PROTOCOL: e.g. a plaintext server (mechanism mismatch).
// `client` is the client key's name. Pure.
inline std::string DescribeHandshakeFailure(uint16_t event, uint32_t value,
                                            const std::string& client) {
  if (event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) {
    if (value == 300) {
      return "CURVE handshake refused for now (ZAP status 300: the server is at its connection "
             "cap); retrying";
    }
    return "CURVE handshake refused (ZAP status " + std::to_string(value) + "): key " + client +
           " is not listed there (add it to that aggregator's clients file)";
  }
  if (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL) {
    if (value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH) {
      return "CURVE handshake failed: the server does not speak CURVE (started with "
             "--insecure-plaintext?)";
    }
    char code[16];
    std::snprintf(code, sizeof code, "0x%08x", value);
    return std::string("CURVE handshake failed: protocol error ") + code;
  }
  return "CURVE handshake failed: the server closed the connection, as it does when the server "
         "key given for it is not its own (check server_key in the cluster file, or "
         "--server-key)";
}

// Watches one client socket's handshakes through libzmq's socket monitor (an inproc PAIR).
// Create it before the socket connects and destroy it before the socket is closed (it stops the
// monitor). Failure() must be called now and then (it drains the monitor, whose queue is
// bounded). Not thread-safe: the thread that uses the socket owns it.
class HandshakeWatch {
 public:
  HandshakeWatch(zmq::context_t& context, zmq::socket_t& socket, std::string client)
      : socket_(socket.handle()), client_(std::move(client)) {
    static std::atomic<uint64_t> next{0};
    const std::string address = "inproc://trailmap-handshake-" + std::to_string(next.fetch_add(1));
    if (zmq_socket_monitor(
            socket_, address.c_str(),
            ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                ZMQ_EVENT_HANDSHAKE_FAILED_AUTH | ZMQ_EVENT_HANDSHAKE_SUCCEEDED) != 0) {
      return;  // no monitor: Failure() stays "" (callers still have their timeouts)
    }
    pair_ = std::make_unique<zmq::socket_t>(context, zmq::socket_type::pair);
    pair_->set(zmq::sockopt::linger, 0);
    pair_->connect(address);
  }
  ~HandshakeWatch() {
    if (pair_ == nullptr) return;
    zmq_socket_monitor(socket_, nullptr, 0);
    pair_.reset();
  }
  HandshakeWatch(const HandshakeWatch&) = delete;
  HandshakeWatch& operator=(const HandshakeWatch&) = delete;

  // Drains the events that came: the description of the latest failure when it came after the
  // latest success (DescribeHandshakeFailure), "" when none failed or one succeeded since.
  const std::string& Failure() {
    while (pair_ != nullptr) {
      zmq::message_t header, endpoint;
      if (!pair_->recv(header, zmq::recv_flags::dontwait)) break;
      if (header.more()) (void)pair_->recv(endpoint, zmq::recv_flags::dontwait);
      if (header.size() < 6) continue;
      uint16_t event = 0;
      uint32_t value = 0;
      std::memcpy(&event, header.data<char>(), 2);
      std::memcpy(&value, header.data<char>() + 2, 4);
      failure_ = event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED
                     ? std::string()
                     : DescribeHandshakeFailure(event, value, client_);
    }
    return failure_;
  }

 private:
  void* socket_;
  std::string client_;
  std::unique_ptr<zmq::socket_t> pair_;
  std::string failure_;
};

}  // namespace trailmap
