// What admission costs: how many connections a second an aggregator's socket takes
// through the whole ZMTP handshake — CURVE with its ZAP handler (and the connection cap's
// bookkeeping), or plaintext — from one client process. Not a Google Benchmark: real sockets to a
// real trailmap-aggregator (bench/connect-bench runs the variants).
//
// Rounds of --at-once DEALER sockets: each is connected with a socket monitor, the round waits
// until every one's handshake succeeded or failed (ZMQ_EVENT_HANDSHAKE_*), then closes them all.
// A connection refused at the aggregator's cap (ZAP "300") is dropped silently, by the CURVE RFC:
// the client sees either a failed handshake (the server closed the connection: EPIPE) or no event
// at all, libzmq closing it only at the handshake timeout (ZMQ_HANDSHAKE_IVL, 30 s;
// aggregator/server/connection_cap.h). So with --quiet-ms Q a round also ends Q ms after its last event,
// and the sockets still waiting then count as unanswered; the time counted is each round's time
// to its last event, so R is the rate of the decided handshakes, not of the waiting. One line:
//   "N handshakes in T ms: R handshakes/s (F failed, U unanswered, at once C)"
// R counts the succeeded ones; at a cap F + U are the refusals (the aggregator's refused_at_cap
// counts them exactly). Exit 1 when any failed or went unanswered.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "core/curve_keys.h"
#include "core/curve_socket.h"
#include "core/endpoint.h"

namespace trailmap {
namespace {

using Clock = std::chrono::steady_clock;

struct Probe {
  std::unique_ptr<zmq::socket_t> socket;
  std::unique_ptr<zmq::socket_t> monitor;  // PAIR of the socket's monitor
  int outcome = 0;  // 0 waiting (at the end: unanswered), 1 succeeded, -1 failed
};

int Run(int argc, char** argv) {
  CLI::App app{"connect_bench: handshakes/s against an aggregator's ingest or query socket"};
  std::string endpoint, key_path, server_key_path;
  size_t connections = 2000, at_once = 50;
  bool plaintext = false;
  int64_t quiet_ms = 0;
  app.add_option("--endpoint", endpoint, "HOST:PORT of the socket")->required();
  app.add_option("--connections", connections, "handshakes in all (default 2000)");
  app.add_option("--at-once", at_once, "connections handshaking at once (default 50)");
  app.add_option("--key", key_path, "client .key (default $TRAILMAP_KEY)");
  app.add_option("--server-key", server_key_path, "the aggregator's .pub ($TRAILMAP_SERVER_KEY)");
  app.add_flag("--insecure-plaintext", plaintext, "no CURVE");
  app.add_option("--quiet-ms", quiet_ms,
                 "end a round this long after its last event, counting the sockets still waiting "
                 "as unanswered, as a cap's refusals are (default 0: wait up to 30 s for each)");
  CLI11_PARSE(app, argc, argv);
  ClientKeyPathsFromEnvironment(plaintext, &key_path, &server_key_path);
  Result<CurveClient> curve = ResolveCurveClient(key_path, server_key_path, plaintext);
  if (curve.ok() && !curve->Usable().ok()) curve = curve->Usable();
  if (!curve.ok()) {
    std::fprintf(stderr, "connect_bench: %s\n", curve.status().message().c_str());
    return 2;
  }
  Result<std::string> address = ParseEndpoint(endpoint, kDefaultIngestPort);
  if (!address.ok()) {
    std::fprintf(stderr, "connect_bench: --endpoint: %s\n", address.status().message().c_str());
    return 2;
  }
  zmq::context_t context(1);
  context.set(zmq::ctxopt::max_sockets, 65536);
  size_t done = 0, failed = 0, unanswered = 0, serial = 0;
  Clock::duration counted{};  // each round's time to its last event
  while (done < connections) {
    const Clock::time_point round_start = Clock::now();
    Clock::time_point last_event = round_start;
    const size_t n = std::min(at_once, connections - done);
    std::vector<Probe> probes(n);
    for (Probe& p : probes) {
      p.socket = std::make_unique<zmq::socket_t>(context, zmq::socket_type::dealer);
      p.socket->set(zmq::sockopt::linger, 0);
      ApplyCurveClient(*p.socket, *curve);
      const std::string inproc = "inproc://connect-bench-" + std::to_string(serial++);
      zmq_socket_monitor(p.socket->handle(), inproc.c_str(),
                         ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                             ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH);
      p.monitor = std::make_unique<zmq::socket_t>(context, zmq::socket_type::pair);
      p.monitor->connect(inproc);
      p.socket->connect(*address);
    }
    const Clock::time_point deadline = Clock::now() + std::chrono::seconds(30);
    size_t waiting = n;
    while (waiting > 0 && Clock::now() < deadline &&
           (quiet_ms == 0 || Clock::now() - last_event < std::chrono::milliseconds(quiet_ms))) {
      std::vector<zmq::pollitem_t> items;
      std::vector<Probe*> of;
      for (Probe& p : probes) {
        if (p.outcome != 0) continue;
        items.push_back({p.monitor->handle(), 0, ZMQ_POLLIN, 0});
        of.push_back(&p);
      }
      zmq::poll(items, std::chrono::milliseconds(100));
      for (size_t i = 0; i < items.size(); ++i) {
        if ((items[i].revents & ZMQ_POLLIN) == 0) continue;
        zmq::message_t header, where;
        if (!of[i]->monitor->recv(header, zmq::recv_flags::dontwait)) continue;
        if (header.more()) (void)of[i]->monitor->recv(where, zmq::recv_flags::dontwait);
        uint16_t event = 0;
        std::memcpy(&event, header.data<char>(), 2);
        of[i]->outcome = event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED ? 1 : -1;
        last_event = Clock::now();
        --waiting;
      }
    }
    for (Probe& p : probes) {
      if (p.outcome == 0) ++unanswered;
      if (p.outcome == -1) ++failed;
      zmq_socket_monitor(p.socket->handle(), nullptr, 0);
      p.monitor.reset();
      p.socket.reset();
    }
    done += n;
    counted += (waiting == 0 ? Clock::now() : last_event) - round_start;
  }
  const double ms = std::chrono::duration<double, std::milli>(counted).count();
  std::printf(
      "%zu handshakes in %.0f ms: %.0f handshakes/s (%zu failed, %zu unanswered, at once %zu)\n",
      connections, ms, static_cast<double>(connections - failed - unanswered) * 1000 / ms, failed,
      unanswered, at_once);
  return failed + unanswered == 0 ? 0 : 1;
}

}  // namespace
}  // namespace trailmap

int main(int argc, char** argv) { return trailmap::Run(argc, argv); }
