// Applies a CurveClient (core/curve_keys.h) to a ZeroMQ client socket before it connects.
// Header-only, for the libraries that already link cppzmq (trailmap::core itself does not).
#pragma once

#include <zmq.hpp>

#include "core/curve_keys.h"

namespace trailmap {

// Makes `socket` a CURVE client of `curve.server_key` with its own pair; nothing when plaintext
// (or unkeyed: callers check CurveClient::Usable first). Throws zmq::error_t on a bad key.
inline void ApplyCurveClient(zmq::socket_t& socket, const CurveClient& curve) {
  if (curve.plaintext || !curve.keyed()) return;
  socket.set(zmq::sockopt::curve_serverkey, curve.server_key);
  socket.set(zmq::sockopt::curve_publickey, curve.public_key);
  socket.set(zmq::sockopt::curve_secretkey, curve.secret_key);
}

}  // namespace trailmap
