// Batch and Ack: the C++ side of schemas/ingest.capnp, with the checks every aggregator applies.
//
// EncodeBatch / DecodeBatch convert to and from the flat Cap'n Proto message that travels on the
// ingest socket. DecodeBatch validates everything against BatchLimits and says what is wrong and
// where ("second 2 (1700000003), histogram 5: histogram: bucket 3 has count 0"). What cannot be
// read as a whole (the envelope, the list sizes, the definitions) fails the decode; a bad item
// (a series definition, a histogram, a scalar, a stack count) is left out alone and named in
// Refusals (the rules are in schemas/ingest.capnp, "Items"), so one bad item loses only itself.
// SplitBatch (core/batch_split.h) cuts what an agent built into batches within the same limits.
// Value types; no shared state.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/series.h"
#include "core/status.h"

namespace trailmap {

enum class MetricKind : uint8_t { kLatency = 0, kSize = 1, kScalar = 2, kStacks = 3 };
const char* MetricKindName(MetricKind kind);

struct SeriesDef {
  std::string metric;  // dotted name
  MetricKind kind = MetricKind::kLatency;
  std::string unit = "ns";
  std::string fields;       // canonical field set (core/series.h)
  std::string description;  // one line, "" = none (at most BatchLimits::max_description bytes)
  bool operator==(const SeriesDef&) const = default;
};

struct HistogramDelta {
  uint32_t series = 0;  // index into Batch::series
  std::string encoded;  // core/histogram.h encoding
};

struct ScalarValue {
  uint32_t series = 0;
  double value = 0;
};

// Stacks travel interned (protocol in schemas/ingest.capnp): ids are agent-local.
struct FrameDef {
  uint32_t id = 0;
  std::string name;  // folded frame text, no ';' or control characters
  bool operator==(const FrameDef&) const = default;
};

struct StackDef {
  uint32_t id = 0;
  std::vector<uint32_t> frames;  // frame ids, root first
  bool operator==(const StackDef&) const = default;
};

struct StackCount {
  uint32_t series = 0;  // index into Batch::series (kind kStacks)
  uint32_t stack = 0;   // agent-local stack id
  uint64_t count = 0;   // at least 1
  bool operator==(const StackCount&) const = default;
};

// The frame an agent puts last on a stack it cut at the depth bound.
inline constexpr const char* kTruncatedFrame = "[truncated]";

struct SecondDelta {
  int64_t time = 0;  // unix seconds
  std::vector<HistogramDelta> histograms;
  std::vector<ScalarValue> scalars;
  std::vector<StackCount> stacks;
};

struct Batch {
  std::string agent;  // "host/incarnation"
  uint64_t sequence = 0;
  std::string host;
  FieldSet labels;
  std::vector<SeriesDef> series;
  std::vector<SecondDelta> seconds;
  int64_t sent_at_ms = 0;
  std::vector<FrameDef> frames;  // definitions (see schemas/ingest.capnp on interning)
  std::vector<StackDef> stacks;
};

// Limits on what one batch may hold. Defaults fit 60 seconds of a busy host.
struct BatchLimits {
  size_t max_bytes = 32 << 20;        // the encoded message
  size_t max_series = 100'000;        // distinct series in one batch
  size_t max_seconds = 3'600;         // seconds in one batch
  size_t max_histograms = 1'000'000;  // histogram deltas over all seconds
  size_t max_labels = 16;
  size_t max_text = 256;                // agent, host, unit
  size_t max_description = 1024;        // a series' description
  size_t max_frame_defs = 1'000'000;    // frame definitions in one batch
  size_t max_stack_defs = 1'000'000;    // stack definitions in one batch
  size_t max_stack_counts = 1'000'000;  // stack counts over all seconds
  size_t max_stack_depth = 1000;        // frames in one stack (kTruncatedFrame included)
  size_t max_frame_bytes = 512;         // one frame name
  int64_t min_time = 0;                 // 1970
  int64_t max_time = 4'102'444'800;     // 2100-01-01
};

// An item DecodeBatch left out of a batch it could otherwise read.
struct RefusedItem {
  enum class Kind : uint8_t {
    kSeries = 0,
    kHistogram = 1,
    kScalar = 2,
    kStackCount = 3,
    kFrameDef = 4,
    kStackDef = 5,
  };
  Kind kind = Kind::kHistogram;
  uint32_t second = 0;  // index into the batch's seconds (0 for kSeries and definitions)
  uint32_t index = 0;   // index in Batch::series, frames or stacks, or in that second's list
  std::string reason;   // says where: "second 0 (1700000000), scalar 2: value is NaN"
  bool operator==(const RefusedItem&) const = default;
};
const char* RefusedKindName(RefusedItem::Kind kind);

// Items named in an Ack; the rest are only counted.
inline constexpr size_t kMaxNamedRefusals = 16;

// Every item left out of one batch: all counted, the first kMaxNamedRefusals named.
struct Refusals {
  uint64_t total = 0;
  std::vector<RefusedItem> named;
  void Add(RefusedItem item);
  bool empty() const { return total == 0; }
};

std::string EncodeBatch(const Batch& batch);
// Reads and checks a batch. A fault of the whole batch is an InvalidArgument naming it; then
// `*agent` and `*sequence` (if non-null) still hold what could be read of the envelope, so the
// caller can ack the right sequence (0 when unreadable). Bad items are left out of the batch
// returned (series renumbered, items pointing at them left out too) and added to `*refused`;
// with `refused` null, the first bad item fails the decode instead (all or nothing). The work is
// bounded by the message's size: one that makes the reader follow more than 4 words per word it
// holds (a list of empty structs, one list pointed at many times) is refused whole.
Result<Batch> DecodeBatch(std::string_view bytes, const BatchLimits& limits = {},
                          std::string* agent = nullptr, uint64_t* sequence = nullptr,
                          Refusals* refused = nullptr);

// Reads back a batch this process encoded itself (the agent's spool) exactly as it was written:
// every field verbatim, nothing checked but the message's structure. The aggregator judges it
// (DecodeBatch), so an item it would refuse is refused there, alone and counted, not here.
Result<Batch> DecodeBatchAsWritten(std::string_view bytes);

// The agent id (as sent, unchecked but for its length: 1..max_agent bytes) and sequence a batch
// message names, reading nothing else: constant work, for what must not cost a decode (a busy
// aggregator's answer, a rate limit's first check). False when they cannot be read.
bool PeekBatchEnvelope(std::string_view bytes, size_t max_agent, std::string* agent,
                       uint64_t* sequence);

struct Ack {
  enum class Status : uint8_t {
    kApplied = 0,
    kDuplicate = 1,
    kRejected = 2,
    kOutOfOrder = 3,
    kNeedDictionary = 4,  // an unknown stack or frame id: resend from `expected` with every def
    kRetryLater = 5,      // over a limit or busy: nothing moved, resend after retry_after_ms
    kUnauthorized = 6,    // the connection's key may not send it now: nothing moved, resend later
  };
  uint64_t sequence = 0;
  Status status = Status::kApplied;
  std::string reason;
  uint64_t expected = 0;
  Refusals refused;             // kApplied, kDuplicate: the items left out of the batch
  uint32_t retry_after_ms = 0;  // kRetryLater: the least wait before resending
};
const char* AckStatusName(Ack::Status status);

std::string EncodeAck(const Ack& ack);
// Refuses an ack that names more than kMaxNamedRefusals items, and one that refers to more than
// 4 times its size, as DecodeBatch does.
Result<Ack> DecodeAck(std::string_view bytes);

}  // namespace trailmap
