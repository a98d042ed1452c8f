// Spool: the agent's bounded on-disk log of batches not yet acknowledged, so that a restart, a
// crash or an aggregator outage loses nothing that reached it.
//
// Every batch the shipper accepts is appended here, with every stack and frame definition it uses,
// before it is sent; it leaves (a `done` record) when the aggregator has it. The spool also keeps
// what must never go backwards under one agent id: the id itself, the next sequence, and the
// highest stack and frame id ever put in a batch (schemas/ingest.capnp: ids are never reused under
// one agent id), so a restarted agent continues where the last one stopped.
//
// Directory: LOCK (flock: one agent per spool), HELD (below) and segment files
// NNNNNNNNNNNNNNNNNNNN.spool, numbered in the order they were written. Each segment:
//
//   segment := header record*
//   record  := length:fixed32 crc:fixed32 type:uint8 body      length = 1 + |body|;
//                                                               crc = CRC32C(type body)
//   header  := type=1 next_sequence:fixed64 stack_high:fixed32 frame_high:fixed32 agent_id
//   batch   := type=2 sequence:fixed64 events:fixed64 stack_high:fixed32 frame_high:fixed32
//              encoded_batch (core/batch.h EncodeBatch, every definition it uses included)
//   done    := type=3 sequence:fixed64                 acknowledged or rejected: never resent
//   dropped := type=4 first:fixed64 last:fixed64       batches first..last were dropped for room;
//                                                      their sequences still go out, empty
//   (fixed = little-endian; agent_id and encoded_batch run to the end of the record)
//
// A segment's header holds the agent id of every record in it. Segments are written one at a
// time (a new one when the current passes segment_bytes) and deleted oldest first, once every
// batch in them and in all older ones is done, so a `done` or `dropped` record never outlives
// the batch it names. On Open a record whose length runs past the end of its file or whose CRC
// does not match ends that segment: it is logged and the file truncated there (a torn write of a
// crash); nothing after it is read, nothing is guessed.
//
// HELD: a batch the disk refuses is held in memory (Append), and its sequence and stack and frame
// ids reach the aggregator while no segment records them. So that a kill -9 in that episode
// cannot make the next run reuse them (the aggregator would call the new batches duplicates and
// drop them), each such append overwrites HELD, a file of 4 KiB allocated at Open, so the
// overwrite needs no new block of a full disk:
//
//   held := length:fixed32 crc:fixed32 next_sequence:fixed64 stack_high:fixed32
//           frame_high:fixed32 agent_id          length = 16 + |agent_id|; crc = CRC32C(the rest)
//
// Open continues above it when its agent id is the spool's (an unreadable one is ignored: it
// can only be a torn overwrite, and the write before it was for an earlier sequence).
//
// Full: when an append would pass max_bytes, the oldest segments are deleted; their batches are
// dropped (counted in dropped_*, logged once per episode; the episode ends when the spool is
// below 90% again). Their sequences stay owed to the aggregator, which applies only
// watermark + 1: the shipper sends each as an empty batch.
//
// Durability (SpoolFsync): every append is a write(2) before the batch is sent, so a kill -9 of
// the agent loses nothing appended. A power loss loses what the kernel had not written back:
// nothing with kAlways (fdatasync per batch), up to fsync_interval with kInterval, and up to the
// kernel's writeback delay (vm.dirty_expire_centisecs, 30 s by default) with kNever.
//
// Segments per owner (ingest/replicated_shipper.h): an agent started with a cluster file sends
// every batch to each of its host's R owners, each through its own spool, in a subdirectory of the
// agent's spool directory named after the member (`<spool>/agg-1/`, `<spool>/agg-2/`): each a
// spool as described here, with its own LOCK, agent id, sequence and bound (--spool-bytes is per
// segment, so R owners down at once can take R times it). A segment whose member is down fills
// while the others drain: this is hinted handoff at the edge. An agent started with the short form
// (--aggregators, R=1) keeps using the directory itself, as every earlier version did, so a
// spool an earlier version left drains unchanged; switching an agent from the short form to a
// cluster file leaves what the directory itself holds unsent (drain it first: stop the agent
// once its counters line shows spool batches=0).
//
// An in-memory spool (Options.dir "") has the same behaviour and bound and keeps nothing across
// a restart (tests, `trailmap import`, the load generator).
//
// Not thread-safe: the shipper calls it under its lock.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace trailmap {

enum class SpoolFsync { kAlways, kInterval, kNever };
// "always", "interval", "never"; InvalidArgument otherwise.
Result<SpoolFsync> ParseSpoolFsync(std::string_view text);
const char* SpoolFsyncName(SpoolFsync fsync);

struct SpoolOptions {
  std::string dir;                                 // "" = in memory, nothing kept across restarts
  uint64_t max_bytes = uint64_t{1} << 30;          // segment files (in memory: batch bytes) at most
  uint64_t segment_bytes = 0;                      // 0 = max_bytes / 16, from 4 KiB to 64 MiB
  SpoolFsync fsync = SpoolFsync::kAlways;          // see "Durability" above
  std::chrono::milliseconds fsync_interval{1000};  // kInterval: at most this long unsynced
};

struct SpoolCounters {
  uint64_t bytes = 0;            // segment bytes on disk now (in memory: batch bytes)
  uint64_t batches = 0;          // batches held now, not done (empty placeholders excluded)
  uint64_t appended = 0;         // batches appended by this process
  uint64_t replayed = 0;         // batches found on Open (from an earlier run), to send again
  uint64_t dropped_batches = 0;  // deleted for room before they were acknowledged
  uint64_t dropped_bytes = 0;
  uint64_t dropped_events = 0;   // histogram events and stack samples in the dropped batches
  uint64_t truncated_bytes = 0;  // torn or corrupt tails cut off on Open
  uint64_t fsyncs = 0;
  uint64_t held_in_memory = 0;  // batches the disk refused, held in memory instead (see Append)
  bool operator==(const SpoolCounters&) const = default;
};

// One batch still owed to the aggregator, oldest first.
struct SpooledBatch {
  uint64_t sequence = 0;
  bool dropped = false;  // dropped for room: send an empty batch with this sequence
};

class Spool {
 public:
  // Opens (creating) options.dir, locks it, reads every segment. `host` names a new agent id
  // when the directory holds none (or one of another host: the operator renamed it), see
  // NewAgentId; `agent_id` instead, if not empty, is taken as is. IOError naming the path, or
  // Unavailable when another agent holds the lock.
  static Result<std::unique_ptr<Spool>> Open(SpoolOptions options, std::string_view host,
                                             std::string_view agent_id = "");
  ~Spool();
  Spool(const Spool&) = delete;
  Spool& operator=(const Spool&) = delete;

  const std::string& agent_id() const { return agent_id_; }
  uint64_t next_sequence() const { return next_sequence_; }
  // Highest stack / frame id in any batch ever appended under this agent id (0 = none): a
  // restarted interner starts above them.
  uint32_t stack_high() const { return stack_high_; }
  uint32_t frame_high() const { return frame_high_; }
  // What is owed, oldest first (after Open: what the last run left).
  std::vector<SpooledBatch> Owed() const;

  // Appends batch `sequence` (next_sequence(); the next one becomes sequence + 1). `events`
  // counts what it holds (for dropped_events); stack_high/frame_high are its highest ids. When
  // the spool is full the oldest batches are dropped first: their sequences are added to
  // *dropped. ResourceExhausted if the batch alone is larger than the bound. When the disk
  // refuses the write (full, failing; failpoint spool.write), the batch is held in memory
  // instead, within the same max_bytes, sent and acknowledged as any other (held_in_memory;
  // logged once per episode) — only a kill -9 before its ack loses it; IOError only when that
  // bound is passed too (the batch is then not in the spool).
  Status Append(uint64_t sequence, uint64_t events, uint32_t stack_high, uint32_t frame_high,
                std::string_view batch, std::vector<uint64_t>* dropped);
  // The encoded batch `sequence`; NotFound if dropped or done, Corruption/IOError if unreadable.
  Result<std::string> Read(uint64_t sequence) const;
  // `sequence` is acknowledged (or rejected): it will not be sent again. Unknown ones are ignored.
  void Done(uint64_t sequence);
  // A new agent id, and every owed batch renumbered 1, 2, ... in order (the aggregator lost
  // its state). The spool is rewritten into one new segment before the old ones are deleted.
  Status Renumber(std::string new_agent_id);
  // kInterval: fdatasync if anything is unsynced for fsync_interval. Call it now and then.
  void SyncIfDue();

  SpoolCounters counters() const;
  const SpoolOptions& options() const { return options_; }

 private:
  struct Entry {
    uint64_t segment = 0;  // file number holding the record (for a dropped one, the record)
    uint64_t offset = 0;   // of the record's body (batch only)
    uint32_t length = 0;   // of the body
    uint64_t events = 0;
    bool dropped = false;
    std::string memory;  // the encoded batch: in-memory spool, or segment kInMemory
  };
  struct Segment {
    uint64_t number = 0;
    uint64_t bytes = 0;
    uint64_t live = 0;  // entries whose record is here
  };
  explicit Spool(SpoolOptions options);
  Status Load(std::string_view host, std::string_view agent_id);
  Status LoadSegment(uint64_t number, std::string* agent_id);
  std::string SegmentPath(uint64_t number) const;
  // Starts segment `number` (header first) as the one appended to.
  Status StartSegment(uint64_t number);
  // Appends one record to the current segment; *offset = where its body starts.
  Status Write(uint8_t type, std::string_view body, uint64_t* offset);
  // A new segment's first record: the next sequence, the stack and frame highs, the agent id.
  std::string SegmentHeader() const;
  // Append's write to the current segment (dropping the oldest for room).
  Status AppendToDisk(uint64_t sequence, uint64_t events, uint32_t stack_high, uint32_t frame_high,
                      std::string_view batch, std::vector<uint64_t>* dropped);
  static constexpr uint64_t kInMemory = UINT64_MAX;  // Entry::segment of a batch the disk refused
  Status Sync();
  // HELD: allocates it (Load), reads it into next_sequence_ and the highs, overwrites it.
  void OpenHeld();
  void WriteHeld();
  // Deletes the oldest segment, dropping what it holds; writes the `dropped` records.
  Status DropOldest(std::vector<uint64_t>* dropped);
  // Deletes leading segments with nothing live (never the current one).
  void DeleteDoneSegments();
  void NoteEpisodeEnd();
  uint64_t Total() const;

  const SpoolOptions options_;
  const bool memory_;  // options_.dir empty
  int lock_fd_ = -1;
  int held_fd_ = -1;  // HELD, or -1 (in memory, or it could not be made: logged)
  int fd_ = -1;       // current segment, opened for append
  std::string agent_id_;
  uint64_t next_sequence_ = 1;
  uint32_t stack_high_ = 0, frame_high_ = 0;
  std::map<uint64_t, Entry> owed_;  // by sequence
  std::deque<Segment> segments_;    // oldest first; back() is the current one
  uint64_t memory_bytes_ = 0;
  bool unsynced_ = false;
  std::chrono::steady_clock::time_point last_sync_;
  bool unwritable_ = false;  // the disk refused the last append (logged at start and end)
  bool dropping_ = false;    // in a drop episode (logged at its start and end)
  uint64_t episode_batches_ = 0, episode_events_ = 0;
  SpoolCounters counters_;
};

}  // namespace trailmap
