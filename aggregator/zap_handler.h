// ZapHandler: the aggregator's ZeroMQ authentication (ZAP, ZeroMQ RFC 27) for CURVE. libzmq asks
// it, over inproc://zeromq.zap.01 in the servers' context, about every CURVE handshake; it admits
// a client only if the client's public key is in the clients list (core/curve_keys.h), and names
// the connection by the key's name (the reply's User-Id), which RouterServer hands to the ingest
// and query handlers with each request (RouterServer::Peer). What a key may do once admitted —
// ingest, for which hosts; query — is for those handlers to check (Rights).
//
// Request (frames): version "1.0", request id, domain, address, routing id, mechanism, then the
// mechanism's credentials: for "CURVE" one frame of the client's 32-byte public key.
// Reply (frames): version "1.0", the request id, status "200" (admitted) / "400" (refused) /
// "500" (a request it cannot read), status text, user id, metadata (empty).
//
// Anything a peer sends is answered or dropped; nothing stops the thread. Counted: admitted,
// refused (unlisted keys), malformed requests; each refused key is logged (rate-limited).
//
// Thread safety: Start/Stop from the owning thread; Find and counters from any thread (the list
// is fixed at construction). The context must outlive the handler, and Start must come before
// any CURVE server binds (libzmq admits every client of a context with no ZAP handler).
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/curve_keys.h"
#include "core/status.h"

namespace zmq {
class context_t;
class socket_t;
}  // namespace zmq

namespace trailmap::aggregator {

inline constexpr char kZapEndpoint[] = "inproc://zeromq.zap.01";

struct ZapRequest {
  std::string request_id;
  std::string domain;
  std::string address;
  std::string mechanism;   // "CURVE", "NULL", "PLAIN"
  std::string public_key;  // CURVE: the client's key in Z85; "" otherwise
};

// Reads a request's frames; InvalidArgument naming what is wrong (version, frame count, a CURVE
// key that is not 32 bytes).
Result<ZapRequest> ParseZapRequest(const std::vector<std::string>& frames);

struct ZapDecision {
  bool admitted = false;
  const ClientKey* key = nullptr;  // when admitted
  std::string reason;              // the status text
};

// Admits CURVE requests whose key is in `keys`; refuses every other.
ZapDecision DecideZap(const ZapRequest& request, const std::vector<ClientKey>& keys);

// The reply frames for `request_id`: status "200" with User-Id = the key's name, or "400" with
// the reason (or "500" when the request could not be read).
std::vector<std::string> ZapReplyFrames(std::string_view request_id, const ZapDecision& decision,
                                        bool malformed = false);

struct ZapCounters {
  uint64_t admitted = 0;
  uint64_t refused = 0;    // unlisted keys (and other mechanisms)
  uint64_t malformed = 0;  // requests that could not be read
};

class ZapHandler {
 public:
  ZapHandler(zmq::context_t* context, std::vector<ClientKey> keys);
  ~ZapHandler();  // Stop()
  ZapHandler(const ZapHandler&) = delete;
  ZapHandler& operator=(const ZapHandler&) = delete;

  // Binds kZapEndpoint and starts the thread; Unavailable if it cannot bind.
  Status Start();
  void Stop();

  // The key listed under `name` (the User-Id of a connection), or nullptr. Lines sharing a name
  // share its rights (ParseClientKeys checks).
  const ClientKey* Find(std::string_view name) const;
  ZapCounters counters() const;

 private:
  void Run();
  void Serve();

  zmq::context_t* context_;
  const std::vector<ClientKey> keys_;
  std::unique_ptr<zmq::socket_t> socket_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::atomic<uint64_t> admitted_{0}, refused_{0}, malformed_{0};
  int refusal_logs_ = 0;  // server thread only
};

}  // namespace trailmap::aggregator
