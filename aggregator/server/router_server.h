// RouterServer: a ZeroMQ ROUTER socket served by its own thread, answering each request message
// with at most one reply. The ingest and query servers are a RouterServer plus a handler.
//
// A request is [identity, payload] (a DEALER peer) or [identity, "", payload] (a REQ peer); the
// reply goes back with the same envelope. Anything else — no payload frame, or more than one — is
// handed to the handler as an InvalidArgument status instead of a payload, so it can answer with
// an error; nothing a peer sends stops the loop. A handler that throws is logged and its request
// gets no reply. Replies to a peer that has gone are dropped (ROUTER semantics).
//
// Workers. With Options::workers = 0 the handler runs on the server thread, one request after
// another. With workers > 0 the server thread only moves messages: each request is queued for a
// pool of that many threads, so a slow request never holds up another, and a worker's reply
// goes back to the server thread over an inproc PUSH/PULL pair (ZeroMQ sockets are not
// thread-safe: only the server thread touches the ROUTER socket), which sends it. Replies may
// then leave in another order than the requests came. A request that finds max_queued others
// waiting is handed to the handler on the server thread as a ResourceExhausted status instead of
// its payload, so it is answered at once (with an error) rather than queued without bound. A
// worker takes up to max_group waiting requests at once (in arrival order) for a GroupHandler;
// with one worker the requests are handled in the order they came.
//
// Bytes. With workers and max_queued_bytes > 0, the payload bytes of the requests queued or
// being handled are bounded: a request that would take them past max_queued_bytes (while any
// are held; one alone always fits) goes to the `busy` handler on the server thread instead,
// which answers it at once (its reply may overtake the replies to requests before it), so
// memory holds at most max_queued_bytes plus one message of requests read and not answered.
// Requests over max_queued go to `busy` too when it is set. The server thread only moves
// messages, so it reads the socket as fast as they come and ZeroMQ's queues stay short;
// receive_hwm bounds them per connection (in messages: libzmq has no byte bound) and then TCP
// holds the sender back.
//
// Thread safety: Start and Stop from one owning thread; the tick runs on the server thread only,
// the handler on the server thread (workers = 0) or on any worker (it must then be thread-safe).
// Stop waits for the requests being handled: a handler that may run long must watch a stop flag
// of its own, set before Stop. The zmq::context_t must outlive the server.
//
// With `curve_secret_key` set the socket is a CURVE server (every connection encrypted, the
// client's key checked by the ZAP handler of the context, aggregator/server/zap_handler.h, under
// `zap_domain`), and each request comes with its Peer: the ZAP User-Id of its connection, the
// client key's name. NOTE: libzmq accepts every CURVE client when no ZAP handler is bound to the
// context, so the owner binds one before Start. With workers, a request's Peer travels with it.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/status.h"

namespace zmq {
class context_t;
class socket_t;
}  // namespace zmq

namespace trailmap::aggregator {

class RouterServer {
 public:
  // Returns the reply bytes, or nullopt for no reply.
  using Handler =
      std::function<std::optional<std::string>(const Result<std::string_view>& payload)>;
  // Several requests that were already waiting, handled together (e.g. written with one fsync);
  // returns one reply (or nullopt) per request, in order.
  using GroupHandler = std::function<std::vector<std::optional<std::string>>(
      const std::vector<Result<std::string_view>>& payloads)>;
  // Called on the server thread at least every `tick_ms` (and after each request).
  using Tick = std::function<void()>;
  // Who sent a request.
  struct Peer {
    std::string key_name;  // the ZAP User-Id (the client key's name); "" on a plaintext socket
  };
  // As Handler and GroupHandler, with each request's peer (peers[i] sent payloads[i]).
  using PeerHandler = std::function<std::optional<std::string>(
      const Result<std::string_view>& payload, const Peer& peer)>;
  using PeerGroupHandler = std::function<std::vector<std::optional<std::string>>(
      const std::vector<Result<std::string_view>>& payloads, const std::vector<Peer>& peers)>;

  struct Options {
    std::string name = "server";  // for log lines
    std::string endpoint;         // e.g. "tcp://127.0.0.1:7400"; port "*" picks a free one
    int64_t max_message_bytes =
        -1;                // larger messages drop the connection (ZMQ_MAXMSGSIZE); -1 = any
    int tick_ms = 100;     // also how quickly Stop() is noticed
    size_t max_group = 1;  // at most this many waiting requests go to a GroupHandler at once
    size_t workers = 0;       // threads that run the handler; 0 = the server thread itself
    size_t max_queued = 256;  // with workers: requests waiting for one beyond this are refused
    size_t max_queued_bytes = 0;  // with workers: payload bytes queued or in hand; 0 = no bound
    // With workers: answers (on the server thread) a request over max_queued_bytes or
    // max_queued. Unset: such a request goes to the handler as a ResourceExhausted status.
    std::function<std::optional<std::string>(std::string_view payload, const Peer& peer)> busy;
    int receive_hwm = 1000;  // ZMQ_RCVHWM: messages ZeroMQ queues per connection (0 = no bound)
    // The server's CURVE secret key in Z85 (40 characters); "" for a plaintext socket.
    std::string curve_secret_key;
    // The ZAP domain its connections are authenticated in (e.g. "ingest", "query").
    std::string zap_domain;
    // Where the socket sends its connection events (zmq_socket_monitor: accepted, handshakes,
    // disconnected), set before it binds; "" = none. The ZAP handler counts connections from
    // them (ZapHandler::MonitorEndpoint).
    std::string monitor_endpoint;
    // A connection that has not completed its ZMTP (and CURVE) handshake within this is closed
    // (ZMQ_HANDSHAKE_IVL), so silent or half-open connections hold a descriptor that long at
    // most. 0 = never.
    std::chrono::milliseconds handshake_timeout{10'000};
  };

  RouterServer(zmq::context_t* context, Options options, Handler handler, Tick tick = {});
  RouterServer(zmq::context_t* context, Options options, GroupHandler handler, Tick tick = {});
  RouterServer(zmq::context_t* context, Options options, PeerHandler handler, Tick tick = {});
  RouterServer(zmq::context_t* context, Options options, PeerGroupHandler handler, Tick tick = {});
  ~RouterServer();  // Stop()
  RouterServer(const RouterServer&) = delete;
  RouterServer& operator=(const RouterServer&) = delete;

  // Binds (so a busy port is reported here) and starts the thread. Unavailable on a bind error;
  // InvalidArgument when the CURVE key is refused.
  Status Start();
  // Asks the thread to finish, joins it and closes the socket. Safe to call twice.
  void Stop();
  // The endpoint actually bound (with the real port when "*" was asked); "" before Start.
  const std::string& endpoint() const { return bound_; }
  // Requests answered by `busy`, and the payload bytes queued or in hand now. Any thread.
  uint64_t busy_answered() const { return busy_answered_.load(); }
  size_t queued_bytes() const { return queued_bytes_.load(); }
  // Exceptions its threads caught (a socket error, a handler that threw), each logged: the
  // threads go on. Any thread.
  uint64_t thread_failures() const { return thread_failures_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> thread_failures_{0};
  // One request: its frames, of which [0, payload_at) are the reply envelope.
  struct Request;
  void Run();
  void Serve();  // the waiting messages, up to max_group
  void Work();   // a worker: handles queued requests until Stop
  void SendReplies();  // the workers' replies waiting on replies_, sent on socket_
  void Send(const Request& request, const std::string& reply);
  // With workers: queues `r`, or answers it with options_.busy; false when neither (the caller
  // then hands it to the handler as ResourceExhausted).
  bool Enqueue(Request& r);

  zmq::context_t* context_;
  const Options options_;
  PeerGroupHandler handler_;
  Tick tick_;
  std::unique_ptr<zmq::socket_t> socket_;
  std::string bound_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  // Workers only.
  std::unique_ptr<zmq::socket_t> replies_;  // PULL, bound at replies_endpoint_
  std::string replies_endpoint_;
  std::vector<std::thread> workers_;
  std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::deque<std::unique_ptr<Request>> queue_;  // guarded by queue_mu_
  std::atomic<size_t> queued_bytes_{0};         // payload bytes queued or being handled
  std::atomic<uint64_t> busy_answered_{0};
};

}  // namespace trailmap::aggregator
