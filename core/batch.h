// Batch and Ack: the C++ side of schemas/ingest.capnp, with the checks every aggregator applies.
//
// EncodeBatch / DecodeBatch convert to and from the flat Cap'n Proto message that travels on the
// ingest socket. DecodeBatch validates everything against BatchLimits and says what is wrong and
// where ("second 2 (1700000003), histogram 5: histogram: bucket 3 has count 0"), so one bad
// batch is rejected with a reason and nothing else is lost. Value types; no shared state.
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
  std::string fields;  // canonical field set (core/series.h)
  std::string description;  // one line, "" = none (at most BatchLimits::max_description bytes)
  bool operator==(const SeriesDef&) const = default;
};

struct HistogramDelta {
  uint32_t series = 0;   // index into Batch::series
  std::string encoded;   // core/histogram.h encoding
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
  size_t max_bytes = 32 << 20;           // the encoded message
  size_t max_series = 100'000;           // distinct series in one batch
  size_t max_seconds = 3'600;            // seconds in one batch
  size_t max_histograms = 1'000'000;     // histogram deltas over all seconds
  size_t max_labels = 16;
  size_t max_text = 256;                 // agent, host, unit
  size_t max_description = 1024;         // a series' description
  size_t max_frame_defs = 1'000'000;     // frame definitions in one batch
  size_t max_stack_defs = 1'000'000;     // stack definitions in one batch
  size_t max_stack_counts = 1'000'000;   // stack counts over all seconds
  size_t max_stack_depth = 1000;         // frames in one stack (kTruncatedFrame included)
  size_t max_frame_bytes = 512;          // one frame name
  int64_t min_time = 0;                  // 1970
  int64_t max_time = 4'102'444'800;      // 2100-01-01
};

std::string EncodeBatch(const Batch& batch);
// Reads and checks a batch. On failure `*agent` and `*sequence` (if non-null) still hold what
// could be read of the envelope, so the caller can ack the right sequence.
Result<Batch> DecodeBatch(std::string_view bytes, const BatchLimits& limits = {},
                          std::string* agent = nullptr, uint64_t* sequence = nullptr);

struct Ack {
  enum class Status : uint8_t {
    kApplied = 0,
    kDuplicate = 1,
    kRejected = 2,
    kOutOfOrder = 3,
    kNeedDictionary = 4,  // an unknown stack or frame id: resend from `expected` with every def
  };
  uint64_t sequence = 0;
  Status status = Status::kApplied;
  std::string reason;
  uint64_t expected = 0;
};
const char* AckStatusName(Ack::Status status);

std::string EncodeAck(const Ack& ack);
Result<Ack> DecodeAck(std::string_view bytes);

}  // namespace trailmap
