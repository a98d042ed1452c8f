// The byte layout of every key and value the aggregator keeps in RocksDB, and the functions that
// write and read them. All integers are big-endian, so byte order is numeric order.
//
// Column families `hist`, `hist_10s`, `hist_60s`, `hist_600s`, `scalar` and `stacks` share one
// key (`stacks_60s` too, with the second of the minute's start, a multiple of 60):
//
//   key       := metric_id:u32 second:u64 host_id:u32 series_id:u32        (20 bytes)
//   second    := uint64(unix seconds as int64) XOR 2^63                     sign bit flipped, so
//                                                                           byte order = time order
//   hist      value := core/histogram.h encoding, merged by "trailmap.histogram"
//   hist_10s  value := the same; second = the start of a 10 s bucket (a multiple of 10, rounded
//                      toward -inf), the merge of that bucket's `hist` values
//   hist_60s  value := the same over 60 s buckets (second a multiple of 60)
//   hist_600s value := the same over 600 s buckets (second a multiple of 600), the merge of the
//                      ten `hist_60s` values of its 10-minute block
//   scalar    value := IEEE-754 double, its bits as a u64
//   stacks    value := (global stack id, count) list, aggregator/store/stack_merge_operator.h, merged
//                      by "trailmap.stacks"
//
// A rollup key equals the merge of the `hist` keys of its bucket once its minute is rolled up
// (aggregator/store/rollup.h); until then the minute is marked pending ('r' below) and queries read it
// from `hist`. A `hist_600s` key equals the merge of its block's `hist_60s` keys once the block
// is rolled up; until then the block is marked pending ('b') and queries read it from the finer
// families. Seconds older than the 1 s retention are merged into the rollups at ingest (and into
// `hist_600s` alone once older than the 60 s retention).
//
// One metric's seconds are contiguous and in time order, and within a second every host and series
// follows, so a single range scan [metric|from, metric|to) serves a heat map (group by nothing or a
// field) as well as per-host columns (group by host).
//
// Column family `meta` holds the id maps both ways and the per-agent watermarks; the first byte
// says which:
//
//   'm' name                    -> id:u32                       metric name to id
//   'M' id:u32                  -> kind:u8 unit_len:varint unit name
//   'h' name                    -> id:u32                       host name to id
//   'H' id:u32                  -> name_len:varint name labels  labels canonical "k=v,k=v"
//   's' metric_id:u32 fields    -> series_id:u32                fields canonical, "" for none
//   'S' series_id:u32           -> metric_id:u32 fields
//   'w' agent                   -> watermark:u64 [seen:i64]     last sequence applied; unix
//                                                               second of the agent's last write
//                                                               (absent in stores made before
//                                                               idle agents were pruned)
//   'T' host_id:u32             -> second:i64                   the newest second of the host an
//                                                               applied batch held (replica
//                                                               choice; absent in older stores)
//   'k' folded stack            -> id:u32                       stack text to global id
//   'K' id:u32                  -> folded stack                 frames root first, ';'-joined
//   'D' metric_id:u32           -> description                  one line, the latest non-empty
//                                                               one an agent sent; absent = none
//   'r' metric_id:u32 minute:u64 -> ""                          this minute's rollups are behind
//                                                               hist (minute ordered like second)
//   'b' metric_id:u32 block:u64 -> ""                           this 10-minute block's hist_600s
//                                                               key is behind hist_60s (block
//                                                               ordered like second)
//   "Rollups"                   -> ""                           every minute of hist is rolled
//                                                               up or marked 'r' (absent: Open
//                                                               marks them all)
//   "Rollups600"                -> ""                           every block of hist_60s is
//                                                               rolled up or marked 'b' (absent:
//                                                               Open marks them all)
//   "Backfill"                  -> state                        an aggregate backfill under way
//                                                               (aggregates_backfill.h); the
//                                                               aggregates' own tags ('g', 'G',
//                                                               'v', 'V', 'A') are in aggregates.h
//
// Ids start at 1 and are dense; series ids are global (not per metric). The catalog is loaded from
// the id-keyed entries ('M', 'H', 'S'); the name-keyed ones exist so a tool can look a name up
// without loading everything.
#pragma once

#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>

#include "core/batch.h"
#include "core/status.h"

namespace trailmap::aggregator {

inline constexpr size_t kDataKeySize = 20;

struct DataKey {
  uint32_t metric = 0;
  int64_t second = 0;
  uint32_t host = 0;
  uint32_t series = 0;
  bool operator==(const DataKey&) const = default;
};

inline void PutFixed32BE(char* out, uint32_t v) {
  for (int i = 3; i >= 0; --i, v >>= 8) out[i] = static_cast<char>(v & 0xff);
}
inline void PutFixed64BE(char* out, uint64_t v) {
  for (int i = 7; i >= 0; --i, v >>= 8) out[i] = static_cast<char>(v & 0xff);
}
inline uint32_t GetFixed32BE(const char* in) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | static_cast<uint8_t>(in[i]);
  return v;
}
inline uint64_t GetFixed64BE(const char* in) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(in[i]);
  return v;
}
inline uint64_t OrderedSecond(int64_t second) {
  return static_cast<uint64_t>(second) ^ (uint64_t{1} << 63);
}
inline int64_t SecondFromOrdered(uint64_t ordered) {
  return static_cast<int64_t>(ordered ^ (uint64_t{1} << 63));
}

// The histogram column families, finest first: seconds per key and the family's name. Queries
// read the coarsest that fits (aggregator/scan/histogram_query.h); ingest writes `hist` and the
// rollup pass the others (aggregator/store/rollup.h), except late seconds merged into them at ingest.
struct HistogramResolution {
  uint32_t seconds;
  const char* family;
};
inline constexpr HistogramResolution kHistogramResolutions[] = {
    {1, "hist"}, {10, "hist_10s"}, {60, "hist_60s"}, {600, "hist_600s"}};
inline constexpr size_t kHistogramResolutionCount = std::size(kHistogramResolutions);

// The start of the `resolution`-second bucket holding `second` (floor, also for negative seconds).
inline int64_t BucketStart(int64_t second, uint32_t resolution) {
  const int64_t r = resolution;
  const int64_t q = second / r;
  return (q - (second % r < 0 ? 1 : 0)) * r;
}

// Writes the 20-byte key into out[0..20).
inline void EncodeDataKey(const DataKey& k, char* out) {
  PutFixed32BE(out, k.metric);
  PutFixed64BE(out + 4, OrderedSecond(k.second));
  PutFixed32BE(out + 12, k.host);
  PutFixed32BE(out + 16, k.series);
}
std::string EncodeDataKey(const DataKey& k);
// The 12-byte prefix metric|second: the first key of that second (a scan bound).
std::string DataKeyPrefix(uint32_t metric, int64_t second);
// Reads a key; false if it is not 20 bytes.
inline bool DecodeDataKey(std::string_view in, DataKey* k) {
  if (in.size() != kDataKeySize) return false;
  k->metric = GetFixed32BE(in.data());
  k->second = SecondFromOrdered(GetFixed64BE(in.data() + 4));
  k->host = GetFixed32BE(in.data() + 12);
  k->series = GetFixed32BE(in.data() + 16);
  return true;
}

std::string EncodeScalar(double value);
Result<double> DecodeScalar(std::string_view in);

// meta keys and values (grammar above).
std::string MetricNameKey(std::string_view name);
std::string MetricIdKey(uint32_t id);
std::string HostNameKey(std::string_view name);
std::string HostIdKey(uint32_t id);
std::string SeriesNameKey(uint32_t metric, std::string_view fields);
std::string SeriesIdKey(uint32_t id);
std::string WatermarkKey(std::string_view agent);
std::string StackTextKey(std::string_view folded);
std::string StackIdKey(uint32_t id);
std::string MetricDescriptionKey(uint32_t id);
std::string PendingRollupKey(uint32_t metric, int64_t minute);
bool DecodePendingRollupKey(std::string_view in, uint32_t* metric, int64_t* minute);
std::string PendingBlockKey(uint32_t metric, int64_t block);
bool DecodePendingBlockKey(std::string_view in, uint32_t* metric, int64_t* block);
std::string EncodeId(uint32_t id);
std::string EncodeWatermark(uint64_t sequence, int64_t last_seen);
std::string HostThroughKey(uint32_t host);
std::string EncodeSecond(int64_t second);
Result<int64_t> DecodeSecond(std::string_view in);

struct MetricRecord {
  std::string name;
  MetricKind kind = MetricKind::kLatency;
  std::string unit;
};
struct HostRecord {
  std::string name;
  std::string labels;
};
struct SeriesRecord {
  uint32_t metric = 0;
  std::string fields;
};
std::string EncodeMetricRecord(const MetricRecord& r);
std::string EncodeHostRecord(const HostRecord& r);
std::string EncodeSeriesRecord(const SeriesRecord& r);
Result<MetricRecord> DecodeMetricRecord(std::string_view in);
Result<HostRecord> DecodeHostRecord(std::string_view in);
Result<SeriesRecord> DecodeSeriesRecord(std::string_view in);
struct WatermarkRecord {
  uint64_t sequence = 0;
  int64_t last_seen = 0;  // 0 = not recorded (an 8-byte value)
};
Result<WatermarkRecord> DecodeWatermarkRecord(std::string_view in);
// The sequence alone.
Result<uint64_t> DecodeWatermark(std::string_view in);

}  // namespace trailmap::aggregator
