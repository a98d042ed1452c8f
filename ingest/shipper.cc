#include "ingest/shipper.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <memory>
#include <random>
#include <zmq.hpp>

#include "core/clock.h"
#include "core/failpoint.h"
#include "core/histogram.h"
#include "core/log.h"
#include "net/curve_socket.h"

namespace trailmap {
namespace {

using Clock = std::chrono::steady_clock;

// A DEALER that queues nothing toward a peer that is not connected and drops everything on
// close, so a reconnect starts clean and the resend order is ours alone.
// A keyed one gets a HandshakeWatch in *watch.
std::unique_ptr<zmq::socket_t> OpenSocket(zmq::context_t& context, const std::string& endpoint,
                                          const CurveClient& curve,
                                          std::unique_ptr<HandshakeWatch>* watch) {
  auto socket = std::make_unique<zmq::socket_t>(context, zmq::socket_type::dealer);
  socket->set(zmq::sockopt::linger, 0);
  socket->set(zmq::sockopt::immediate, 1);
  ApplyCurveClient(*socket, curve);
  if (curve.keyed() && !curve.plaintext) {
    *watch = std::make_unique<HandshakeWatch>(context, *socket, curve.name);
  }
  socket->connect(endpoint);
  return socket;
}

std::string HostOf(const std::string& agent_id) { return agent_id.substr(0, agent_id.rfind('/')); }

// Histogram events and stack samples in `batch` (for the spool's dropped_events).
uint64_t EventsIn(const Batch& batch) {
  uint64_t events = 0;
  for (const SecondDelta& second : batch.seconds) {
    for (const HistogramDelta& h : second.histograms) {
      if (Result<Histogram> decoded = Histogram::Decode(h.encoded); decoded.ok()) {
        events += decoded->count();
      }
    }
    for (const StackCount& c : second.stacks) events += c.count;
  }
  return events;
}

std::unique_ptr<Spool> MemorySpool(const ShipperOptions& options) {
  SpoolOptions spool_options;
  spool_options.max_bytes = options.max_bytes;
  Result<std::unique_ptr<Spool>> spool =
      Spool::Open(spool_options, HostOf(options.agent_id), options.agent_id);
  return std::move(*spool);  // in memory: cannot fail
}

}  // namespace

std::string NewAgentId(std::string_view host) {
  std::random_device device;
  const uint64_t r = (static_cast<uint64_t>(device()) << 32) ^ device();
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id(host);
  id.push_back('/');
  for (int shift = 60; shift >= 0; shift -= 4) id.push_back(kHex[(r >> shift) & 15]);
  return id;
}

Shipper::Shipper(ShipperOptions options, std::unique_ptr<Spool> spool)
    : options_(std::move(options)),
      curve_(options_.curve),
      spool_(spool ? std::move(spool) : MemorySpool(options_)),
      send_window_(std::max<size_t>(1, options_.window)) {
  agent_id_ = spool_->agent_id();
  next_sequence_ = spool_->next_sequence();
  // What an earlier run left: sent first, in order, as fast as the window allows.
  for (const SpooledBatch& b : spool_->Owed()) {
    held_.push_back({b.sequence, b.dropped, "", 0, false, {}});
    ++accepted_total_;
  }
  thread_ = std::thread([this] { Run(); });  // joined in the destructor
}

Shipper::~Shipper() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  thread_.join();
  if (!held_.empty()) {
    const std::string& dir = spool_->options().dir;
    Log("shipper " + options_.endpoint + ": stopping with " + std::to_string(held_.size()) +
        " unacknowledged batches, " +
        (dir.empty() ? std::string("which are lost") : "which stay in the spool " + dir));
  }
}

bool Shipper::Send(Batch batch) {
  batch.sent_at_ms = UnixMillisNow();
  const uint64_t events = EventsIn(batch);
  uint32_t stack_high = 0, frame_high = 0;
  for (const StackDef& d : batch.stacks) stack_high = std::max(stack_high, d.id);
  for (const FrameDef& f : batch.frames) frame_high = std::max(frame_high, f.id);
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t sequence = next_sequence_;
  batch.agent = agent_id_;
  batch.sequence = sequence;
  const std::string bytes = EncodeBatch(batch);  // with every definition it uses
  std::vector<uint64_t> dropped;
  const Status s = spool_->Append(sequence, events, stack_high, frame_high, bytes, &dropped);
  MarkDropped(dropped);
  if (!s.ok()) {
    ++counters_.dropped;
    Log("shipper " + options_.endpoint + ": dropped a batch of " +
        std::to_string(batch.seconds.size()) + " seconds (" + std::to_string(events) +
        " events): " + s.ToString() + "; dropped so far " + std::to_string(counters_.dropped));
    return false;
  }
  ++next_sequence_;
  held_.push_back({sequence, false, "", 0, false, {}});
  ++accepted_total_;
  // In the spool, not yet sent: a kill here loses nothing the spool holds.
  (void)TRAILMAP_FAILPOINT("agent.after_spool");
  return true;
}

void Shipper::MarkDropped(const std::vector<uint64_t>& sequences) {
  for (uint64_t sequence : sequences) {
    auto it = std::lower_bound(held_.begin(), held_.end(), sequence,
                               [](const Pending& p, uint64_t s) { return p.sequence < s; });
    if (it == held_.end() || it->sequence != sequence) continue;
    it->dropped = true;
    it->bytes.clear();  // a resend goes out empty (the first transmission may still apply)
    ++counters_.dropped;
  }
}

Status Shipper::Flush(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t target = accepted_total_;
  const bool done =
      acked_.wait_for(lock, timeout, [this, target] { return done_total_ >= target; });
  if (done) return Status::Ok();
  return Status::Unavailable(std::to_string(target - done_total_) + " batches still " +
                             "unacknowledged by " + options_.endpoint + " after " +
                             std::to_string(timeout.count()) + " ms");
}

ShipperCounters Shipper::counters() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counters_;
}

SpoolCounters Shipper::spool_counters() const {
  std::lock_guard<std::mutex> lock(mu_);
  return spool_->counters();
}

std::string Shipper::Peer() const {
  return options_.name.empty() ? options_.endpoint : options_.name + " (" + options_.endpoint + ")";
}

void Shipper::SetCurve(CurveClient curve) {
  std::lock_guard<std::mutex> lock(mu_);
  if (curve.server_key == curve_.server_key && curve.public_key == curve_.public_key) return;
  curve_ = std::move(curve);
  reconnect_now_ = true;
  Log("shipper " + Peer() + ": its server key changed; reconnecting with the new one to resend " +
      std::to_string(held_.size()) + " unacknowledged");
}

std::string Shipper::agent_id() const {
  std::lock_guard<std::mutex> lock(mu_);
  return agent_id_;
}

size_t Shipper::DoneBefore(uint64_t below) {
  size_t n = 0;
  while (!held_.empty() && held_.front().sequence < below) {
    spool_->Done(held_.front().sequence);
    held_.pop_front();
    ++n;
  }
  in_flight_ = in_flight_ > n ? in_flight_ - n : 0;
  done_total_ += n;
  if (n > 0) acked_.notify_all();
  return n;
}

bool Shipper::DoneWith(uint64_t sequence) {
  auto it = std::lower_bound(held_.begin(), held_.end(), sequence,
                             [](const Pending& p, uint64_t s) { return p.sequence < s; });
  if (it == held_.end() || it->sequence != sequence) return false;
  if (static_cast<size_t>(it - held_.begin()) < in_flight_) --in_flight_;
  held_.erase(it);
  ++done_total_;
  acked_.notify_all();
  return true;
}

void Shipper::OnRefused(uint64_t sequence, const Refusals& refused) {
  if (refused.empty()) return;
  counters_.items_refused += refused.total;
  const auto now = Clock::now();
  if (now < refusal_log_quiet_until_) {
    refusals_not_logged_ += refused.total;
    return;
  }
  refusal_log_quiet_until_ = now + std::chrono::seconds(10);
  std::string line = "shipper " + options_.endpoint + ": batch " + std::to_string(sequence) +
                     " applied without " + std::to_string(refused.total) + " refused item(s)";
  if (!refused.named.empty()) line += ", e.g. " + refused.named.front().reason;
  if (refusals_not_logged_ > 0) {
    line += " (and " + std::to_string(refusals_not_logged_) + " refused earlier, not logged)";
    refusals_not_logged_ = 0;
  }
  Log(line + "; items_refused=" + std::to_string(counters_.items_refused));
}

bool Shipper::PauseAt(uint64_t sequence, std::chrono::milliseconds wait, bool* new_pause) {
  auto it = std::lower_bound(held_.begin(), held_.end(), sequence,
                             [](const Pending& p, uint64_t s) { return p.sequence < s; });
  if (it == held_.end() || it->sequence != sequence) return false;  // done with already
  // Resend from s after the wait. Batches before s may still be unanswered (a busy aggregator
  // answers from its socket's thread, overtaking the answers to batches it queued); they stay in
  // flight and get their own answers or time out.
  in_flight_ = std::min(in_flight_, static_cast<size_t>(it - held_.begin()));
  const Clock::time_point now = Clock::now();
  *new_pause = now >= resume_at_;
  // A new pause halves the window (at least 1); each applied batch widens it by one again, so
  // an agent over a rate settles near it instead of sending a full window into every refusal.
  if (*new_pause) send_window_ = std::max<size_t>(1, send_window_ / 2);
  resume_at_ = std::max(resume_at_, now + wait);
  return true;
}

void Shipper::OnUnauthorized(const Ack& ack) {
  // The answers to the rest of a window sent before the pause began extend nothing: one doubling
  // per resend that was refused.
  const bool pausing = Clock::now() < resume_at_;
  const std::chrono::milliseconds wait =
      pausing ? std::chrono::milliseconds(0)
      : unauthorized_wait_.count() == 0
          ? options_.unauthorized_backoff
          : std::min(2 * unauthorized_wait_, options_.max_unauthorized_backoff);
  bool new_pause = false;
  if (!PauseAt(ack.sequence, wait, &new_pause)) return;
  ++counters_.unauthorized;
  ++unauthorized_in_episode_;
  if (!new_pause) return;
  const bool first = unauthorized_wait_.count() == 0;
  unauthorized_wait_ = wait;
  if (!first) return;
  unauthorized_since_ = Clock::now();
  unauthorized_sequence_ = ack.sequence;
  Log("shipper " + Peer() + ": batch " + std::to_string(ack.sequence) + " refused for its key (" +
      ack.reason + "); holding it and what follows, resending with a backoff from " +
      std::to_string(options_.unauthorized_backoff.count()) + " ms up to " +
      std::to_string(options_.max_unauthorized_backoff.count()) +
      " ms until it is accepted (nothing is dropped but by the spool's bound); unauthorized=" +
      std::to_string(counters_.unauthorized));
}

void Shipper::EndUnauthorized(uint64_t sequence) {
  // An answer to a batch sent before the refused one says nothing of the key.
  if (unauthorized_wait_.count() == 0 || sequence < unauthorized_sequence_) return;
  const auto seconds =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - unauthorized_since_)
          .count() /
      1000.0;
  char took[32];
  std::snprintf(took, sizeof took, "%.1f", seconds);
  Log("shipper " + Peer() + ": accepted again after " + std::to_string(unauthorized_in_episode_) +
      " refusals for its key over " + took +
      " s; unauthorized=" + std::to_string(counters_.unauthorized));
  unauthorized_wait_ = std::chrono::milliseconds(0);
  unauthorized_in_episode_ = 0;
}

void Shipper::OnRetryLater(const Ack& ack) {
  const auto wait = std::clamp(std::chrono::milliseconds(ack.retry_after_ms),
                               std::chrono::milliseconds(1), options_.max_retry_wait);
  bool new_pause = false;
  if (!PauseAt(ack.sequence, wait, &new_pause)) return;
  ++counters_.retry_later;
  const Clock::time_point now = Clock::now();
  if (now < retry_log_quiet_until_) {
    ++retries_not_logged_;
    return;
  }
  retry_log_quiet_until_ = now + std::chrono::seconds(10);
  std::string line = "shipper " + options_.endpoint + ": batch " + std::to_string(ack.sequence) +
                     " answered retryLater (" + ack.reason +
                     "); resending it and what follows in " + std::to_string(wait.count()) + " ms";
  if (retries_not_logged_ > 0) {
    line += " (" + std::to_string(retries_not_logged_) + " more since the last line)";
    retries_not_logged_ = 0;
  }
  Log(line + "; retry_later=" + std::to_string(counters_.retry_later));
}

void Shipper::Reincarnate(uint64_t expected) {
  const std::string old_id = agent_id_;
  agent_id_ = NewAgentId(HostOf(old_id));
  if (Status s = spool_->Renumber(agent_id_); !s.ok()) {
    Log("shipper " + options_.endpoint + ": the spool could not be renumbered (" + s.ToString() +
        "); a restart before these batches are acked would resend them under " + old_id);
  }
  Log("shipper " + options_.endpoint + ": aggregator expects sequence " + std::to_string(expected) +
      " of " + old_id + " but the oldest batch held is " + std::to_string(held_.front().sequence) +
      ": it lost its state; continuing as " + agent_id_ + " with the " +
      std::to_string(held_.size()) + " held batches renumbered from 1");
  uint64_t sequence = 0;
  for (Pending& p : held_) {
    p.sequence = ++sequence;
    p.bytes.clear();
  }
  ForgetDefinitions();  // the new agent id has no dictionary at the aggregator
  acked_.notify_all();
  next_sequence_ = sequence + 1;
  ++counters_.incarnations;
  // Answers still on their way name the old numbering; a new socket never sees them.
  reconnect_now_ = true;
}

void Shipper::ForgetDefinitions() {
  ++epoch_;
  sent_stacks_.clear();
  sent_frames_.clear();
}

const std::string& Shipper::Encoded(Pending& p) {
  if (!p.bytes.empty() && p.epoch == epoch_) return p.bytes;
  Batch wire;
  if (!p.dropped) {
    Result<std::string> stored = spool_->Read(p.sequence);
    if (stored.status().code() == Status::Code::kUnavailable) {
      // For now only (out of descriptors): the batch stays held, and goes when it can be read.
      if (!spool_read_failing_) {
        Log("shipper " + options_.endpoint + ": batch " + std::to_string(p.sequence) +
            " cannot be read back from the spool for now (" + stored.status().ToString() +
            "); it stays held and is sent once it can be read");
      }
      spool_read_failing_ = true;
      static const std::string kNotNow;
      return kNotNow;
    }
    if (spool_read_failing_) {
      Log("shipper " + options_.endpoint + ": the spool can be read again");
      spool_read_failing_ = false;
    }
    // As handed over: the aggregator judges the items (a bad one is refused there, alone).
    Result<Batch> batch =
        stored.ok() ? DecodeBatchAsWritten(*stored) : Result<Batch>(stored.status());
    if (batch.ok()) {
      wire = std::move(*batch);
    } else {
      Log("shipper " + options_.endpoint + ": batch " + std::to_string(p.sequence) +
          " cannot be read back from the spool (" + batch.status().ToString() +
          "); sending it empty");
      p.dropped = true;
      ++counters_.dropped;
    }
  }
  if (p.dropped) {  // only its sequence, so the watermark passes it
    wire.host = HostOf(agent_id_);
    wire.sent_at_ms = UnixMillisNow();
  }
  wire.agent = agent_id_;  // the spool may hold it under an earlier numbering
  wire.sequence = p.sequence;
  // Only the definitions the aggregator has not been sent in this epoch.
  std::erase_if(wire.stacks,
                [this](const StackDef& d) { return !sent_stacks_.insert(d.id).second; });
  std::erase_if(wire.frames,
                [this](const FrameDef& f) { return !sent_frames_.insert(f.id).second; });
  counters_.stack_defs_sent += wire.stacks.size();
  counters_.frame_defs_sent += wire.frames.size();
  p.bytes = EncodeBatch(wire);
  p.epoch = epoch_;
  return p.bytes;
}

void Shipper::OnAck(std::string_view bytes) {
  Result<Ack> ack = DecodeAck(bytes);
  if (!ack.ok()) {
    Log("shipper " + options_.endpoint +
        ": ignoring an answer that is not an ack: " + ack.status().ToString());
    return;
  }
  const uint64_t s = ack->sequence;
  // Held batches are in sequence order, with holes where batches were rejected.
  const bool holds_s = !held_.empty() && held_.front().sequence <= s && s <= held_.back().sequence;
  switch (ack->status) {
    case Ack::Status::kApplied:
      if (holds_s) OnRefused(s, ack->refused);
      counters_.acked += DoneBefore(s + 1);
      EndUnauthorized(s);
      send_window_ = std::min(send_window_ + 1, std::max<size_t>(1, options_.window));
      break;
    case Ack::Status::kDuplicate: {
      if (holds_s) OnRefused(s, ack->refused);
      const size_t n = DoneBefore(s + 1);
      if (holds_s) ++counters_.duplicates;
      EndUnauthorized(s);
      counters_.acked += holds_s ? n - 1 : n;
      break;
    }
    case Ack::Status::kRejected: {
      // Exactly s was not applied (schemas/ingest.capnp, "Rejection"); the batches before it
      // get their own answers. Sequence 0 names no batch: as if no answer came, so what was
      // sent stays held and the ack timeout resends it.
      if (s == 0) {
        ++counters_.unreadable;
        Log("shipper " + options_.endpoint + ": the aggregator could not read a message (" +
            ack->reason + "); its batch stays held and is resent after the ack timeout");
        break;
      }
      if (!holds_s || !DoneWith(s)) break;  // answered before
      ++counters_.rejected;
      Log("shipper " + options_.endpoint + ": batch " + std::to_string(s) +
          " rejected: " + ack->reason);
      break;
    }
    case Ack::Status::kOutOfOrder: {
      ++counters_.out_of_order;
      const uint64_t expected = ack->expected;
      if (held_.empty()) break;
      if (expected < held_.front().sequence) {
        Reincarnate(expected);
        break;
      }
      counters_.acked += DoneBefore(expected);
      if (held_.empty()) break;
      // Answers to batches sent before we went back for this gap say the same: ignore them.
      if (gap_resent_ == expected && s <= gap_boundary_) break;
      gap_resent_ = expected;
      gap_boundary_ = highest_sent_;
      in_flight_ = 0;  // resend from the front, which is `expected`
      break;
    }
    case Ack::Status::kRetryLater:
      OnRetryLater(*ack);
      break;
    case Ack::Status::kUnauthorized:
      OnUnauthorized(*ack);
      break;
    case Ack::Status::kNeedDictionary: {
      const uint64_t expected = ack->expected;
      if (held_.empty() || expected < held_.front().sequence) break;  // already past it
      counters_.acked += DoneBefore(expected);
      if (held_.empty()) break;
      // Answers to batches sent before the definitions were reset for this gap say the same.
      if (dictionary_reset_for_ == expected && s <= dictionary_boundary_) break;
      dictionary_reset_for_ = expected;
      dictionary_boundary_ = highest_sent_;
      ++counters_.need_dictionary;
      Log("shipper " + options_.endpoint + ": aggregator needs stack definitions (" + ack->reason +
          "); resending from batch " + std::to_string(expected) + " with all of them");
      ForgetDefinitions();
      for (Pending& p : held_) p.bytes.clear();
      gap_resent_ = expected;
      gap_boundary_ = highest_sent_;
      in_flight_ = 0;
      break;
    }
  }
}

void Shipper::Run() {
  zmq::context_t context(1);
  std::unique_ptr<zmq::socket_t> socket;
  std::unique_ptr<HandshakeWatch> watch;  // of `socket`: reset before it
  std::string handshake_failure;          // the last one logged ("" = none since a success)
  Clock::time_point socket_opened_at;
  while (true) {
    try {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (stop_) break;
        spool_->SyncIfDue();
        const Clock::time_point now = Clock::now();
        // Acks still coming mean a slow aggregator working through the window (a replay of
        // fat batches), not a lost connection: time out only when nothing has been answered.
        const bool timed_out =
            in_flight_ > 0 &&
            now - std::max(held_.front().sent_at, last_answer_at_) > options_.ack_timeout;
        if (socket == nullptr || timed_out || reconnect_now_) {
          if (socket != nullptr) {
            ++counters_.reconnects;
            if (timed_out) {
              Log("shipper " + options_.endpoint + ": no ack for batch " +
                  std::to_string(held_.front().sequence) + " in " +
                  std::to_string(options_.ack_timeout.count()) + " ms; reconnecting to resend " +
                  std::to_string(held_.size()) + " unacknowledged");
            }
          }
          watch.reset();
          socket.reset();
          socket = OpenSocket(context, options_.endpoint, curve_, &watch);
          socket_opened_at = now;
          in_flight_ = 0;
          gap_resent_ = 0;
          dictionary_reset_for_ = 0;
          reconnect_now_ = false;
          ForgetDefinitions();  // a new connection: definitions go again
        }
        // Told to wait (retryLater): nothing goes out until then, resends included.
        while (now >= resume_at_ && in_flight_ < held_.size() && in_flight_ < send_window_) {
          Pending& p = held_[in_flight_];
          const std::string& bytes = Encoded(p);
          if (bytes.empty()) {  // its spool record cannot be read now: try again shortly
            resume_at_ = now + options_.poll_interval;
            break;
          }
          zmq::message_t message(bytes.data(), bytes.size());
          if (!socket->send(message, zmq::send_flags::dontwait)) {  // no peer yet
            // Still none after an ack timeout, with nothing in flight to time out: libzmq may
            // have given the connection up (it does not always retry a handshake the server
            // refused, libzmq issues 2329 and 3519), so open a new one.
            if (in_flight_ == 0 && now - socket_opened_at > options_.ack_timeout) {
              reconnect_now_ = true;
            }
            break;
          }
          ++(p.sent_before ? counters_.resent : counters_.sent);
          p.sent_before = true;
          p.sent_at = now;
          highest_sent_ = std::max(highest_sent_, p.sequence);
          ++in_flight_;
        }
      }
      // Logged when what fails changes (a reopened socket fails the same way: not again).
      if (watch != nullptr && !watch->Failure().empty() && watch->Failure() != handshake_failure) {
        handshake_failure = watch->Failure();
        std::lock_guard<std::mutex> lock(mu_);
        ++counters_.handshake_failures;
        Log("shipper " + Peer() + ": " + handshake_failure);
      }
      zmq::pollitem_t item{socket->handle(), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, options_.poll_interval);
      if ((item.revents & ZMQ_POLLIN) == 0) continue;
      // Every waiting answer: one message of one or more frames, the ack in the last one (an
      // empty delimiter frame, if the aggregator sends one, is skipped).
      zmq::message_t frame;
      std::string last;
      while (socket->recv(frame, zmq::recv_flags::dontwait)) {
        if (frame.size() > 0) last.assign(frame.data<char>(), frame.size());
        if (frame.more()) continue;
        handshake_failure.clear();  // connected: a later failure is news
        std::lock_guard<std::mutex> lock(mu_);
        last_answer_at_ = Clock::now();
        OnAck(last);
        last.clear();
      }
    } catch (const zmq::error_t& e) {
      if (e.num() == EINTR) continue;
      Log("shipper " + options_.endpoint + ": " + e.what() + "; reopening the socket");
      watch.reset();
      socket.reset();
      std::this_thread::sleep_for(options_.poll_interval);
    } catch (const std::exception& e) {
      Log("shipper " + options_.endpoint + ": unexpected error: " + e.what());
      {
        std::lock_guard<std::mutex> lock(mu_);
        ++counters_.thread_failures;
      }
      watch.reset();
      socket.reset();
      std::this_thread::sleep_for(options_.poll_interval);
    }
  }
  watch.reset();
  socket.reset();  // before the context, which would otherwise wait for it
}

}  // namespace trailmap
