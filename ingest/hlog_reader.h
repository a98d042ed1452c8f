// HdrHistogram interval logs (.hlog): the text HdrHistogram's HistogramLogWriter writes, as do
// wrk2, jHiccup and cassandra-stress. One compressed histogram per interval; read here into its
// buckets, each with its exact count, for `trailmap import --hlog` (cli/import_command.h).
//
//   log      := { line '\n' }           '\r' before '\n' is ignored; the last '\n' is optional
//   line     := blank | comment | legend | interval
//   comment  := '#' anything            "#[StartTime: S" and "#[BaseTime: S" are read (below)
//   legend   := '"StartTimestamp"' anything
//   interval := [ 'Tag=' TAG ',' ] START ',' LENGTH ',' MAX ',' HISTOGRAM     (spaces around
//               fields are allowed)
//       START, LENGTH: decimal seconds (at most 9 fraction digits are kept); MAX: a decimal, the
//       interval's largest value over the writer's unit ratio, checked and not used (the
//       histogram holds it); HISTOGRAM: base64 of a compressed histogram (grammar below).
//
// Time, as HdrHistogram's HistogramLogReader reads it: StartTime is the "#[StartTime:" header,
// else the first interval's START; BaseTime is the "#[BaseTime:" header, else StartTime when
// the first START is below StartTime (the timestamps are relative to it) and 0 otherwise (they
// are absolute). An interval's absolute start is START + BaseTime. Decimals are read exactly,
// to the nanosecond, not through floating point, so 0.999 never rounds into the next second.
//
// Compressed histogram: HdrHistogram's V2 encoding, every integer big-endian:
//
//   compressed := cookie:i32 length:i32 zlib{length}          cookie & ~0xf0 == 0x1c849304
//   inflated   := cookie:i32 payload_length:i32 normalizing_index_offset:i32 digits:i32
//                 lowest_discernible:i64 highest_trackable:i64 ratio:f64 payload{payload_length}
//                                                             cookie & ~0xf0 == 0x1c849303
//   payload    := { ZigZag LEB128 word: at most 9 bytes, 7 bits each and all 8 of the 9th }
//       a word c >= 0 is the count at the next index; c < 0 skips -c indexes (zero counts).
//
// Index i's bucket, with sub = ceil(log2(2 * 10^digits)), half = 2^(sub-1) and
// unit = floor(log2(lowest_discernible)):
//   b = (i >> (sub-1)) - 1;  s = (i & (half-1)) + half;  if b < 0 then s -= half, b = 0
//   lowest = s << (b + unit);  width = 1 << (b + unit)
// Example: 3 digits (sub 11, half 1024), lowest_discernible 1: index 1500 is [1500, 1500], exact;
// index 3000 is b 1, s 1976: [3952, 3953], two values wide.
//
// Refused, with a message naming what is wrong (and, from HlogReader, the line): bad base64, a
// cookie other than V2's (HdrHistogram's older V0/V1 encodings, a DoubleHistogram), a zlib
// stream that does not inflate or does not end where its length says, an inflated histogram
// past kMaxInflatedHistogramBytes, a normalizing index offset (a shifted histogram), digits
// outside 0..5, a layout HdrHistogram itself refuses, a word past 9 bytes or cut off, an index
// past highest_trackable's counts, a total count past 2^63 - 1.
//
// Thread safety: HlogReader is used by one thread at a time; the functions are pure.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace trailmap {

// A histogram's counts inflate to at most this many bytes: a zlib bomb is refused, not
// inflated. A 3-digit histogram of every 64-bit value takes at most ~500 KB; 5 digits, dense,
// could pass it (such a log is refused, naming the bound).
inline constexpr size_t kMaxInflatedHistogramBytes = 16u << 20;

// A line longer than this is refused before it is parsed: a histogram that inflates to at most
// kMaxInflatedHistogramBytes compresses to far less, so only a damaged or hostile log has one.
inline constexpr size_t kMaxHlogLineBytes = 32u << 20;

// One non-empty bucket: values [lowest, lowest + width - 1], all `count` of them.
struct HdrBucket {
  uint64_t lowest = 0;
  uint64_t width = 1;
  uint64_t count = 0;
  // Where its count is placed: the bucket's middle (HdrHistogram's "median equivalent value"),
  // so no value of the bucket is further than width / 2 from it. Width 1: the value itself.
  uint64_t Representative() const { return lowest + width / 2; }
  bool operator==(const HdrBucket&) const = default;
};

struct HdrHistogramData {
  int digits = 0;  // significant value digits
  uint64_t lowest_discernible = 1;
  uint64_t highest_trackable = 0;
  std::vector<HdrBucket> buckets;  // by increasing value
  uint64_t total_count = 0;
};

// Decodes HISTOGRAM (base64 text of a compressed V2 histogram). InvalidArgument naming what is
// wrong.
Result<HdrHistogramData> DecodeHdrHistogram(std::string_view base64);

// One interval of the log, valid during the callback.
struct HlogInterval {
  uint64_t line = 0;     // 1-based
  std::string_view tag;  // "" when untagged
  int64_t start_ns = 0;  // absolute start (BaseTime added), ns
  int64_t length_ns = 0;
  const HdrHistogramData* histogram = nullptr;
};
using HlogIntervalFn = std::function<void(const HlogInterval&)>;

struct HlogOptions {
  // Which intervals reach the callback: those tagged `tag`; "" (default) the untagged ones, as
  // HdrHistogram's HistogramLogProcessor reads a log unless given -tag. Others are still decoded
  // and checked, and counted in other_tags.
  std::string tag;
};

struct HlogSummary {
  uint64_t lines = 0;
  uint64_t intervals = 0;       // given to the callback
  uint64_t other_tags = 0;      // intervals of another tag, left out
  uint64_t long_intervals = 0;  // of those given, intervals longer than one second
  bool start_time_header = false;
  bool base_time_header = false;
};

class HlogReader {
 public:
  explicit HlogReader(HlogOptions options = {});

  // Reads `text`, which must end at a line's end (or at the file's); lines are numbered across
  // calls. Each interval of the chosen tag goes to `fn` in file order. The first bad line stops
  // the read with InvalidArgument "line N: ...": intervals before it have been given to `fn`,
  // so a caller that ships must hold what it gathered until the whole log has read ok.
  Status Read(std::string_view text, const HlogIntervalFn& fn);
  const HlogSummary& summary() const { return summary_; }

 private:
  Status ReadLine(std::string_view line, const HlogIntervalFn& fn);

  HlogOptions options_;
  HlogSummary summary_;
  bool have_start_ = false;
  bool have_base_ = false;
  int64_t start_time_ns_ = 0;
  int64_t base_time_ns_ = 0;
  HdrHistogramData histogram_;
};

}  // namespace trailmap
