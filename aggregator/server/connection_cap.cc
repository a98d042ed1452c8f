#include "aggregator/server/connection_cap.h"

#include <zmq.h>
#include <algorithm>

namespace trailmap::aggregator {

void ConnectionCap::Expire(Clock::time_point now) {
  while (!reserved_.empty() && now - reserved_.front() > options_.reservation_ttl) {
    reserved_.pop_front();
  }
  while (!refused_.empty() && now - refused_.front() > options_.refused_ttl) refused_.pop_front();
}

bool ConnectionCap::TryAdmit(Clock::time_point now) {
  Expire(now);
  if (options_.max_admitted > 0 && succeeded_ + reserved_.size() >= options_.max_admitted) {
    return false;
  }
  reserved_.push_back(now);
  return true;
}

void ConnectionCap::OnEvent(uint16_t event, uint32_t /*value*/, Clock::time_point now) {
  Expire(now);
  const bool after_failure = failed_handshake_;
  failed_handshake_ = false;
  switch (event) {
    case ZMQ_EVENT_ACCEPTED:
      ++open_;
      break;
    case ZMQ_EVENT_HANDSHAKE_SUCCEEDED:
      ++succeeded_;
      if (!reserved_.empty()) reserved_.pop_front();
      break;
    case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:
      refused_.push_back(now);
      break;
    case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
    case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL:
      failed_handshake_ = true;
      break;
    case ZMQ_EVENT_DISCONNECTED:
      if (open_ > 0) --open_;
      if (after_failure) break;  // never admitted
      if (!refused_.empty()) {
        refused_.pop_front();
      } else if (succeeded_ > 0) {
        --succeeded_;
      }
      break;
    default:
      break;
  }
  // However the guesses went, no more are admitted, and awaited as refused, than are open: a
  // refusal whose close came right after a handshake failure (the client gone while the ERROR
  // was still to be sent) would otherwise be awaited until it expires.
  succeeded_ = std::min(succeeded_, open_);
  while (!refused_.empty() && refused_.size() + succeeded_ > open_) refused_.pop_front();
}

size_t ConnectionCap::admitted(Clock::time_point now) {
  Expire(now);
  return succeeded_ + reserved_.size();
}

}  // namespace trailmap::aggregator
