// AcceptLoop: the accepting side of a TCP listener, bounded and quiet under pressure. Used by
// trailmap-query's HTTP server (query/http/server.h) and by net/metrics_http.h (the agent's
// OTLP/HTTP and --metrics listeners, the aggregator's --metrics).
//
// - At most `max_connections` are open at once. A connection past it is accepted and closed at
//   once, without a reply: its client learns at once, where one left in the kernel's backlog
//   would wait for nothing. Each is counted (`refused`).
// - An accept that fails (no descriptor left: EMFILE, ENFILE; no memory: ENOBUFS, ENOMEM) is
//   retried after a pause of `first_pause`, doubling up to `longest_pause`, or sooner when one of
//   the listener's own connections closes (that frees a descriptor). Without the pause the
//   listener spins on a full core: the pending connection stays in the backlog and the next
//   accept fails at once again.
// - Each episode, at the cap or failing, is logged once when it starts and once when it ends,
//   with how many connections it refused or how many accepts failed; a flood writes two lines.
//
// Threads: Start() and the accepting run on the acceptor's executor, which must be a single
// thread (the server's I/O thread). A ConnectionSlot may be released on any thread. Destroy the
// AcceptLoop before the io_context: slots released later no longer wake it.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace trailmap {

struct AcceptLoopOptions {
  // Names the listener in the log: "http 127.0.0.1:7402".
  std::string name;
  // Connections open at once; past it, new ones are closed at once and counted. Default 512.
  size_t max_connections = 512;
  // The pause after a failed accept, doubled after each failure up to `longest_pause`.
  std::chrono::milliseconds first_pause{10};
  std::chrono::milliseconds longest_pause{1000};
};

// Since Start(), except `open`.
struct AcceptCounts {
  uint64_t open = 0;      // connections open now
  uint64_t accepted = 0;  // connections served
  uint64_t refused = 0;   // closed at once: max_connections were open
  uint64_t failed = 0;    // accepts that failed (EMFILE, ...)
};

// One connection's place under max_connections: the connection holds it (every copy) for as long
// as it is open; the place is free again when the last copy goes.
using ConnectionSlot = std::shared_ptr<void>;

// The connections a listener may hold within `open_file_limit` descriptors (the soft
// RLIMIT_NOFILE, core/open_files.h; 0 = unknown): `wanted`, or less so that descriptors remain
// for everything else a daemon opens (its files, its ZeroMQ sockets): half of a limit below
// 256, else all but 128 of it. At least 1.
size_t ConnectionsWithin(size_t wanted, uint64_t open_file_limit);

class AcceptLoop {
 public:
  // Called on the acceptor's executor for each connection under the cap.
  using Serve = std::function<void(boost::asio::ip::tcp::socket, ConnectionSlot)>;

  // `acceptor` is listening and outlives this.
  AcceptLoop(boost::asio::ip::tcp::acceptor& acceptor, AcceptLoopOptions options, Serve serve);
  ~AcceptLoop();
  AcceptLoop(const AcceptLoop&) = delete;
  AcceptLoop& operator=(const AcceptLoop&) = delete;

  // Accepts until the acceptor is closed or its io_context stops. Call once.
  void Start();
  // Any thread.
  AcceptCounts counts() const;
  const AcceptLoopOptions& options() const;

  struct State;  // accept_loop.cc

 private:
  std::shared_ptr<State> state_;
};

}  // namespace trailmap
