// ZapHandler: the aggregator's ZeroMQ authentication (ZAP, ZeroMQ RFC 27) for CURVE. libzmq asks
// it, over inproc://zeromq.zap.01 in the servers' context, about every CURVE handshake; it admits
// a client only if the client's public key is in the clients list (core/curve_keys.h), and names
// the connection by the key's name (the reply's User-Id), which RouterServer hands to the ingest
// and query handlers with each request (RouterServer::Peer). What a key may do once admitted —
// ingest, for which hosts; query — is for those handlers to check (Rights).
//
// Request (frames): version "1.0", request id, domain, address, routing id, mechanism, then the
// mechanism's credentials: for "CURVE" one frame of the client's 32-byte public key.
// Reply (frames): version "1.0", the request id, status "200" (admitted) / "300" (refused for
// now: too many connections) / "400" (refused) / "500" (a request it cannot read), status text,
// user id, metadata (empty).
//
// Connections. For each watched domain ("ingest", "query": one server socket each) it reads the
// socket's monitor events (the socket monitors itself to MonitorEndpoint(domain), RouterServer
// Options::monitor_endpoint) and counts the connections admitted now (aggregator/
// connection_cap.h); a listed key asking when `max_connections` are admitted on that socket is
// refused with "300" and the reason, and counted (refused_at_cap). Per socket, so a crowd of
// agents never keeps the operator's queries out.
//
// Reload. ReloadKeys swaps the clients list (SIGHUP): new handshakes are decided by the new
// list, and Find answers from it at once, so a removed key's open connections lose their rights
// with their next request. ReloadKeysFrom reads the file first and refuses, keeping the list it
// has, a file that does not read or parse, and one that lists no key while keys are listed now
// (an editor or a config tool that truncates before it writes, a failed template): a file meant
// to admit no one must say so with the line kNoClientsMarker. Refusals are counted
// (reloads_refused). Agents refused meanwhile lose nothing (schemas/ingest.capnp, "Keys"), but
// every new connection would be, so an empty list is never taken by accident.
//
// Anything a peer sends is answered or dropped; nothing stops the thread. Counted: admitted,
// refused (unlisted keys), refused at the cap, malformed requests; each refused key is logged
// (rate-limited).
//
// Thread safety: Start/Stop from the owning thread; Find, ReloadKeys, counters and connections
// from any thread. The context must outlive the handler, and Start must come before any CURVE
// server binds (libzmq admits every client of a context with no ZAP handler).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "aggregator/server/connection_cap.h"
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
  bool temporary = false;          // refused for now (status 300: too many connections)
};

// The line a clients file that lists no key must hold to be taken on a reload.
inline constexpr char kNoClientsMarker[] = "# trailmap: no clients";

// The keys of clients file `text` (read from `path`) as a reload takes them, while `current` keys
// are listed: InvalidArgument naming the file (and line) when it does not parse, or when it lists
// no key, `current` is not 0 and it lacks a line kNoClientsMarker.
Result<std::vector<ClientKey>> ClientKeysForReload(std::string_view text, const std::string& path,
                                                   size_t current);

// Admits CURVE requests whose key is in `keys`; refuses every other.
ZapDecision DecideZap(const ZapRequest& request, const std::vector<ClientKey>& keys);

// The reply frames for `request_id`: status "200" with User-Id = the key's name, or "400" with
// the reason ("300" when temporary; "500" when the request could not be read).
std::vector<std::string> ZapReplyFrames(std::string_view request_id, const ZapDecision& decision,
                                        bool malformed = false);

struct ZapCounters {
  uint64_t admitted = 0;
  uint64_t refused = 0;         // unlisted keys (and other mechanisms)
  uint64_t refused_at_cap = 0;  // listed keys refused: max_connections were admitted
  uint64_t malformed = 0;       // requests that could not be read
  // Connections closed before their handshake completed: not ZMTP, another mechanism than
  // CURVE, a malformed command, or silent past the handshake timeout (monitor events).
  uint64_t failed_handshakes = 0;
  uint64_t reloads_refused = 0;  // clients files refused on a reload (ReloadKeysFrom)
};

struct ZapOptions {
  // Connections admitted at once on each watched socket ([limits] max_connections); 0 = no cap
  // (still counted).
  size_t max_connections = 10'000;
  // A ZAP admission whose handshake has not completed holds its slot this long at most
  // (ConnectionCap::Options::reservation_ttl).
  std::chrono::milliseconds reservation_ttl{5000};
  // The ZAP domains whose sockets it watches.
  std::vector<std::string> domains = {"ingest", "query"};
};

class ZapHandler {
 public:
  ZapHandler(zmq::context_t* context, std::vector<ClientKey> keys, ZapOptions options = {});
  ~ZapHandler();  // Stop()
  ZapHandler(const ZapHandler&) = delete;
  ZapHandler& operator=(const ZapHandler&) = delete;

  // Binds kZapEndpoint and starts the thread; Unavailable if it cannot bind.
  Status Start();
  void Stop();

  // The key listed under `name` (the User-Id of a connection) now, or nullptr. Lines sharing a
  // name share its rights (ParseClientKeys checks). The key stays valid while held.
  std::shared_ptr<const ClientKey> Find(std::string_view name) const;
  // Replaces the clients list (a SIGHUP's reread of the clients file).
  void ReloadKeys(std::vector<ClientKey> keys);
  // Reads the clients file `path` and takes its keys (ClientKeysForReload): the line to log,
  // "clients file PATH read again: N client keys (were M)", or, when refused (counted), a status
  // whose message says why and that the keys were kept.
  Result<std::string> ReloadKeysFrom(const std::string& path);
  size_t key_count() const;
  ZapCounters counters() const;
  // Exceptions its thread caught and logged (a socket error, a request that threw). Any thread.
  uint64_t thread_failures() const { return thread_failures_.load(std::memory_order_relaxed); }

  // Where the socket of `domain` sends its monitor events (RouterServer::Options::
  // monitor_endpoint), or "" when that domain is not watched.
  std::string MonitorEndpoint(std::string_view domain) const;
  // The connections admitted now on the socket of `domain` (0 when not watched).
  size_t connections(std::string_view domain) const;
  size_t max_connections() const { return options_.max_connections; }

 private:
  struct Watch;
  void Run();
  void Serve();
  void ReadEvents(Watch& watch);

  zmq::context_t* context_;
  const ZapOptions options_;
  mutable std::mutex keys_mu_;
  std::shared_ptr<const std::vector<ClientKey>> keys_;  // guarded by keys_mu_
  std::unique_ptr<zmq::socket_t> socket_;
  std::vector<std::unique_ptr<Watch>> watches_;  // one per options_.domains
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> thread_failures_{0};
  std::thread thread_;
  std::atomic<uint64_t> admitted_{0}, refused_{0}, refused_at_cap_{0}, malformed_{0},
      failed_handshakes_{0}, reloads_refused_{0};
  int refusal_logs_ = 0;  // server thread only
};

}  // namespace trailmap::aggregator
