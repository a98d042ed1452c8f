// Shipper: delivers batches to one aggregator exactly once, over one ZeroMQ DEALER socket.
//
// Protocol (schemas/ingest.capnp): each batch gets the next sequence of this agent id (1, 2, 3,
// ...) and travels as one single-frame message; the aggregator applies only watermark + 1 and
// answers every batch with an Ack. The shipper keeps every unacknowledged batch, encoded, in
// order, and
//   - sends up to `window` of them without an ack;
//   - on `applied` or `duplicate` for sequence s is done with s and everything before it (the
//     watermark is past them); items the aggregator refused (named in the ack) are counted in
//     `items_refused` and logged with a reason, one line per 10 s at most;
//   - on `rejected` for sequence s is done with s alone (s was not applied and never will be:
//     schemas/ingest.capnp, "Rejection"); it is counted and logged with its reason. `rejected`
//     with sequence 0 (a message the aggregator could not read at all) names no batch: counted
//     in `unreadable`, and otherwise treated as no answer, so the ack timeout resends;
//   - on `outOfOrder` with expected E is done with everything before E and resends from E in
//     order (once per gap: the outOfOrder answers to batches already in flight are ignored);
//   - on `retryLater` for sequence s with a wait W (the aggregator's per-agent limits, or it is
//     busy: schemas/ingest.capnp, "Limits") still holds s and everything after it, sends nothing
//     for W (at least 1 ms, at most `max_retry_wait`), then resends from s in order, with half
//     the window it had (at least 1; each applied batch widens it by one, up to `window`). s is not
//     done with and not dropped: it stays in the spool until acked, so a limit slows the agent
//     down and loses nothing. Counted in `retry_later`, logged one line per 10 s at most;
//   - on `unauthorized` for sequence s (its key may not send it now: a key removed from the
//     clients file, or a host not its own; schemas/ingest.capnp, "Keys") holds s and everything
//     after it as for `retryLater`, and resends from s after a backoff of its own:
//     `unauthorized_backoff`, doubled by each refusal of a resend, up to
//     `max_unauthorized_backoff`. A refusal is never a drop: the batch stays in the spool until it
//     is accepted or the spool's bound drops it. Counted in `unauthorized`; logged once when the
//     refusals start and once when a batch is accepted again (an episode);
//   - when the oldest batch in flight has waited `ack_timeout` and no ack at all came in that
//     time, closes the socket, opens a new one and resends every unacknowledged batch in order;
//     so too when a batch is waiting and the socket has had no connection for `ack_timeout`
//     (libzmq does not always retry a handshake the aggregator refused).
// A failed CURVE handshake (a server key that is not the aggregator's, this agent's key not
// listed there; net/curve_socket.h HandshakeWatch) is logged naming the aggregator, once until
// an ack comes or it fails another way, and counted in `handshake_failures`; libzmq keeps retrying.
// Resends are safe because the aggregator's watermark turns them into `duplicate`. If the
// aggregator expects a sequence older than any batch still held, it has lost its state (a new
// data directory); the shipper then takes a new agent id (same host, new incarnation) and
// renumbers what it holds from 1, so nothing it holds is lost and nothing is applied twice.
//
// Stack definitions (schemas/ingest.capnp, "Stacks are interned"): a batch handed to Send
// carries the definitions of every stack it uses. The shipper keeps it so, and encodes it when
// first transmitted on a connection with only the definitions not yet sent on that connection
// (the encoding is kept for resends on the same connection). It forgets what it has sent, and
// re-encodes, on every new socket, on a new incarnation, and on `needDictionary` with expected
// E: then it is done with everything before E and resends from E in order, E now carrying every
// definition it uses. `stack_defs_sent` / `frame_defs_sent` count the definitions that went out.
//
// Storage (ingest/spool.h): Send appends every batch, with every definition it uses, to the
// spool before it can be sent, and a batch leaves the spool only when it is done with (acked,
// rejected, or past the watermark). The constructor takes what an earlier run left in the spool
// and sends it first, in order, at full speed. Held batches are read back from the spool when
// (re)encoded, so memory holds only the encodings in flight, whatever the spool holds. When the
// spool is full it drops its oldest batches (counted in `dropped` and in the spool's counters);
// their sequences still go out, as empty batches, so the aggregator's watermark passes them.
//
// Threading: the constructor starts one thread that owns the socket; Send, Flush and counters
// may be called from any thread. The destructor stops the thread without waiting for acks
// (call Flush first); unacknowledged batches then stay in the spool for the next start (an
// in-memory spool loses them, which is logged).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_set>
#include <vector>

#include "core/batch.h"
#include "core/status.h"
#include "ingest/spool.h"
#include "net/curve_keys.h"

namespace trailmap {

struct ShipperOptions {
  // The aggregator's ingest socket, "tcp://127.0.0.1:7400".
  std::string endpoint;
  // "host/incarnation" (NewAgentId); sequences are per agent id. Used only without a spool of
  // its own (Shipper's constructor): a spool directory keeps its agent id.
  std::string agent_id;
  // Without a spool of its own: the bound of the in-memory one that holds unacknowledged
  // batches (their encoded bytes); beyond it the oldest are dropped.
  uint64_t max_bytes = uint64_t{256} << 20;
  // Batches in flight without an ack (at least 1).
  size_t window = 64;
  // With no ack for the oldest batch in flight this long: reconnect, resend from the oldest.
  std::chrono::milliseconds ack_timeout{2000};
  // The socket is polled this long at a time: how soon Send() and the destructor are noticed.
  std::chrono::milliseconds poll_interval{50};
  // The longest a `retryLater` ack makes it wait, whatever the ack asks.
  std::chrono::milliseconds max_retry_wait{60'000};
  // After an `unauthorized` ack: the first wait before resending, and the longest it doubles to.
  std::chrono::milliseconds unauthorized_backoff{500};
  std::chrono::milliseconds max_unauthorized_backoff{30'000};
  // The CURVE keys the socket connects with (net/curve_keys.h); plaintext when unkeyed.
  // SetCurve changes them while running.
  CurveClient curve;
  // The aggregator's name in the cluster file, for messages ("" = the endpoint alone).
  std::string name;
};

struct ShipperCounters {
  uint64_t sent = 0;           // batches sent for the first time
  uint64_t acked = 0;          // applied: acked so, or a later ack showed the watermark past it
  uint64_t duplicates = 0;     // acked `duplicate` (a resend the aggregator already had)
  uint64_t rejected = 0;       // acked `rejected` (malformed; dropped by the aggregator)
  uint64_t items_refused = 0;  // items the aggregator left out of applied batches (named in acks)
  uint64_t unreadable = 0;     // `rejected` acks with sequence 0 (a message it could not read)
  uint64_t resent = 0;         // transmissions after the first, of any batch
  uint64_t reconnects = 0;     // sockets reopened (ack timeout, new incarnation)
  uint64_t dropped = 0;        // dropped by the spool to make room, or that Send() could not spool
  uint64_t out_of_order = 0;   // `outOfOrder` acks received
  uint64_t incarnations = 0;   // new agent ids taken because the aggregator lost its state
  uint64_t need_dictionary = 0;     // `needDictionary` acks acted on (definitions resent)
  uint64_t stack_defs_sent = 0;     // stack definitions encoded into transmitted batches
  uint64_t frame_defs_sent = 0;     // frame definitions encoded into transmitted batches
  uint64_t retry_later = 0;         // `retryLater` acks acted on (waited, then resent)
  uint64_t handshake_failures = 0;  // CURVE handshake failures logged (once per kind until an ack)
  uint64_t unauthorized = 0;     // `unauthorized` acks: refused for its key, held and resent later
  uint64_t thread_failures = 0;  // unexpected errors its thread caught (logged; socket reopened)
  bool operator==(const ShipperCounters&) const = default;
};

class Shipper {
 public:
  // Starts the thread; connecting is lazy/async. Without `spool`, an in-memory one of
  // options.max_bytes under options.agent_id.
  explicit Shipper(ShipperOptions options, std::unique_ptr<Spool> spool = nullptr);
  ~Shipper();  // stops the thread (does not wait for acks)
  Shipper(const Shipper&) = delete;
  Shipper& operator=(const Shipper&) = delete;

  // Assigns the agent id and the next sequence, stamps sent_at_ms, encodes the batch and appends
  // it to the spool (which may drop its oldest batches for room). Returns false (counted in
  // `dropped` and logged) if it could not be spooled: a write error, or larger than the spool.
  bool Send(Batch batch);

  // Blocks until every batch Send() accepted before the call is acknowledged (or rejected).
  // Unavailable on timeout, saying how many are still unacknowledged.
  Status Flush(std::chrono::milliseconds timeout);

  ShipperCounters counters() const;
  SpoolCounters spool_counters() const;
  // The agent id batches are sent under now (changes only with a new incarnation).
  std::string agent_id() const;
  // Connects with `curve` from now on (a member's server key rolled: the cluster file read again
  // on SIGHUP): the socket is reopened and every unacknowledged batch resent on it.
  void SetCurve(CurveClient curve);

 private:
  struct Pending {
    uint64_t sequence = 0;
    bool dropped = false;  // dropped by the spool: goes out as an empty batch
    std::string bytes;     // its encoding for dictionary epoch `epoch` ("" = not yet encoded)
    uint64_t epoch = 0;
    bool sent_before = false;
    std::chrono::steady_clock::time_point sent_at;  // last transmission
  };
  void Run();
  // Handles one ack message; mu_ held.
  void OnAck(std::string_view bytes);
  // Pops every held batch with sequence < `below`; returns how many. mu_ held.
  size_t DoneBefore(uint64_t below);
  // Removes held batch `sequence` alone; false if it is not held. mu_ held.
  bool DoneWith(uint64_t sequence);
  // Counts and logs (rate-limited) the items an ack for held batch `sequence` names; mu_ held.
  void OnRefused(uint64_t sequence, const Refusals& refused);
  // A `retryLater` ack: hold, wait, resend from its batch; mu_ held.
  void OnRetryLater(const Ack& ack);
  // An `unauthorized` ack: hold, back off, resend from its batch; mu_ held.
  void OnUnauthorized(const Ack& ack);
  // Holds held batch `sequence` and what follows, sending nothing until `wait` from now (or
  // later, when a pause runs already); false when `sequence` is not held. *new_pause: no pause
  // ran before. mu_ held.
  bool PauseAt(uint64_t sequence, std::chrono::milliseconds wait, bool* new_pause);
  // After an applied (or duplicate) ack for `sequence`: ends a run of `unauthorized` refusals
  // when it is at or past the batch that began it, and says so; mu_ held.
  void EndUnauthorized(uint64_t sequence);
  // Takes a new agent id and renumbers every held batch from 1; mu_ held.
  void Reincarnate(uint64_t expected);
  // Forgets which definitions were sent (a new dictionary epoch); mu_ held.
  void ForgetDefinitions();
  // Marks the held batches the spool dropped for room; mu_ held.
  void MarkDropped(const std::vector<uint64_t>& sequences);
  // p.bytes for the current epoch, with the definitions not yet sent in it (the batch is read
  // back from the spool, which keeps every definition it uses), or "" while its record cannot
  // be read for now (out of descriptors: it stays held); mu_ held.
  const std::string& Encoded(Pending& p);

  // "agg-2 (tcp://...)" or the endpoint: what messages call the aggregator.
  std::string Peer() const;

  const ShipperOptions options_;
  mutable std::mutex mu_;
  CurveClient curve_;              // what the next socket connects with; guarded by mu_
  std::unique_ptr<Spool> spool_;   // guarded by mu_
  std::condition_variable acked_;  // signalled whenever held batches are done
  std::string agent_id_;           // guarded by mu_
  uint64_t next_sequence_ = 1;     // guarded by mu_
  std::deque<Pending> held_;       // unacknowledged, in sequence order; guarded by mu_
  size_t in_flight_ = 0;           // held_[0, in_flight_) sent on this socket; mu_
  uint64_t gap_resent_ = 0;        // outOfOrder gap already resent from (0 = none); mu_
  uint64_t gap_boundary_ = 0;      // highest sequence sent before that resend; mu_
  uint64_t highest_sent_ = 0;      // mu_
  std::chrono::steady_clock::time_point last_answer_at_;  // of any ack; mu_
  bool reconnect_now_ = false;                            // set by Reincarnate for the thread; mu_
  bool spool_read_failing_ = false;    // a record could not be read for now (logged once); mu_
  uint64_t dictionary_reset_for_ = 0;  // needDictionary gap definitions were reset for; mu_
  uint64_t dictionary_boundary_ = 0;   // highest sequence sent before that reset; mu_
  uint64_t epoch_ = 1;                 // dictionary epoch: what sent_* describe; mu_
  std::unordered_set<uint32_t> sent_stacks_, sent_frames_;  // defined in epoch_; mu_
  uint64_t accepted_total_ = 0;                             // batches Send() accepted, ever; mu_
  uint64_t done_total_ = 0;   // batches done with (acked/rejected), ever; mu_
  bool stop_ = false;         // guarded by mu_
  ShipperCounters counters_;  // guarded by mu_
  std::chrono::steady_clock::time_point refusal_log_quiet_until_;  // mu_
  uint64_t refusals_not_logged_ = 0;                               // mu_
  std::chrono::steady_clock::time_point resume_at_;  // nothing is sent before (retryLater); mu_
  size_t send_window_;  // in flight at most: `window`, halved by each retryLater pause; mu_
  std::chrono::steady_clock::time_point retry_log_quiet_until_;  // mu_
  uint64_t retries_not_logged_ = 0;                              // mu_
  // The refusals for its key since the last accepted batch (an episode): the backoff now (0 =
  // none), when it began, how many; mu_.
  std::chrono::milliseconds unauthorized_wait_{0};
  std::chrono::steady_clock::time_point unauthorized_since_;
  uint64_t unauthorized_in_episode_ = 0;
  uint64_t unauthorized_sequence_ = 0;  // the batch whose refusal began the episode
  std::thread thread_;                  // last: starts after everything above exists
};

// host + "/" + 16 random hex digits.
std::string NewAgentId(std::string_view host);

}  // namespace trailmap
