// ConnectionCap: how many connections of one CURVE server socket are admitted now, so the ZAP
// handler can refuse more than [limits] max_connections (aggregator/server/zap_handler.h). Pure
// bookkeeping: the ZAP handler's thread feeds it the ZAP decisions and the socket's monitor
// events, and asks it before admitting a key.
//
// What libzmq 4.3 tells (zmq_socket_monitor, events version 1; Debian's build has no version 2,
// which would name each connection's remote address):
//   ACCEPTED(fd), DISCONNECTED(fd)  every TCP connection of the listening socket, start and end;
//   HANDSHAKE_SUCCEEDED             a connection's handshake, ZAP included, completed (no fd);
//   HANDSHAKE_FAILED_AUTH(status)   ZAP refused one (no fd). Its DISCONNECTED comes later: a
//                                   refused libzmq 4.3 client usually neither retries nor closes,
//                                   so when its program closes the socket (the agent's shipper
//                                   reopens after an ack timeout) or at the handshake timeout
//                                   (ZMQ_HANDSHAKE_IVL, 30 s; measured: 30 s after the refusal);
//   HANDSHAKE_FAILED_PROTOCOL / _NO_DETAIL   (no fd) emitted right before the DISCONNECTED of a
//                                   connection whose handshake failed otherwise, from the same
//                                   call on the one I/O thread, so nothing comes in between.
// No event but ACCEPTED and DISCONNECTED names its connection, so the count goes by kinds:
//   admitted = reserved (ZAP said 200, the handshake not yet done)
//            + handshakes succeeded - disconnects of connections that had succeeded.
// A DISCONNECTED right after a handshake failure ends a connection never admitted; one while
// ZAP-refused connections are still open ends the oldest of those; any other ends an admitted
// one. The one guess: an admitted connection closing while a refused one is still open is taken
// for the refused one's close, so the count stays one too high until that one closes (within
// the handshake timeout): the cap errs on refusing, for at most 30 s, and only after refusals.
// Nothing can hold a slot forever: reservations expire (`reservation_ttl`) and so do refusals not
// seen closing
// (`refused_ttl`, past the handshake timeout), and admitted plus awaited refusals never exceed
// the connections open (ACCEPTED - DISCONNECTED): when all have gone, the count is 0. (The first
// version counted every accepted connection: 200 clients connecting at once were all past a cap of
// 50 when ZAP asked, and all refused.)
//
// Value type; not thread-safe (one thread feeds and asks).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>

namespace trailmap::aggregator {

class ConnectionCap {
 public:
  using Clock = std::chrono::steady_clock;

  struct Options {
    size_t max_admitted = 0;  // 0 = no cap (still counted)
    // A ZAP admission whose handshake has not completed holds its slot this long at most.
    std::chrono::milliseconds reservation_ttl{5000};
    // A ZAP refusal whose connection was not seen closing is forgotten after this: libzmq's
    // default handshake timeout (ZMQ_HANDSHAKE_IVL, 30 s) closes it by then.
    std::chrono::milliseconds refused_ttl{35000};
  };

  explicit ConnectionCap(Options options) : options_(options) {}

  // ZAP, for a listed key: true (and a slot reserved) when fewer than max_admitted are admitted
  // or reserved; false when the cap is reached.
  bool TryAdmit(Clock::time_point now);
  // One monitor event of this socket (ZMQ_EVENT_*, the event's value), in the order they came.
  void OnEvent(uint16_t event, uint32_t value, Clock::time_point now);

  // Admitted (handshake done, not disconnected) plus reserved, as of the events so far.
  size_t admitted(Clock::time_point now);
  size_t open() const { return open_; }  // accepted and not disconnected
  size_t max_admitted() const { return options_.max_admitted; }

 private:
  void Expire(Clock::time_point now);

  Options options_;
  std::deque<Clock::time_point> reserved_;  // ZAP 200s awaiting HANDSHAKE_SUCCEEDED, oldest first
  std::deque<Clock::time_point> refused_;   // ZAP refusals awaiting their DISCONNECTED
  size_t succeeded_ = 0;  // admitted connections open: handshakes done, not disconnected
  size_t open_ = 0;
  bool failed_handshake_ = false;  // the last event was a handshake failure (PROTOCOL/NO_DETAIL)
};

}  // namespace trailmap::aggregator
