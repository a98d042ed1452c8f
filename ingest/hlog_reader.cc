#include "ingest/hlog_reader.h"

#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cstring>

namespace trailmap {
namespace {

constexpr uint32_t kV2CompressedCookie = 0x1c849304;
constexpr uint32_t kV2Cookie = 0x1c849303;
constexpr size_t kInflatedHeaderBytes = 40;
constexpr int64_t kNsPerSecond = 1'000'000'000;

std::string Hex(uint32_t v) {
  char text[16];
  snprintf(text, sizeof text, "0x%08x", v);
  return text;
}

// The standard alphabet; '=' padding is optional, as java.util.Base64 reads it.
Result<std::string> DecodeBase64(std::string_view text) {
  while (!text.empty() && text.back() == '=') text.remove_suffix(1);
  if (text.size() % 4 == 1) {
    return Status::InvalidArgument("base64 text of " + std::to_string(text.size()) +
                                   " characters is cut off");
  }
  std::string out;
  out.reserve(text.size() * 3 / 4);
  uint32_t bits = 0;
  int have = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    int v;
    if (c >= 'A' && c <= 'Z') {
      v = c - 'A';
    } else if (c >= 'a' && c <= 'z') {
      v = c - 'a' + 26;
    } else if (c >= '0' && c <= '9') {
      v = c - '0' + 52;
    } else if (c == '+') {
      v = 62;
    } else if (c == '/') {
      v = 63;
    } else {
      const bool printable = c > ' ' && c < 127;
      return Status::InvalidArgument("bad base64 character " +
                                     (printable ? "'" + std::string(1, c) + "'" : Hex(uint8_t(c))) +
                                     " at " + std::to_string(i + 1));
    }
    bits = (bits << 6) | static_cast<uint32_t>(v);
    have += 6;
    if (have >= 8) {
      have -= 8;
      out.push_back(static_cast<char>((bits >> have) & 0xff));
    }
  }
  return out;
}

uint32_t ReadU32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}
uint64_t ReadU64(const unsigned char* p) { return (uint64_t{ReadU32(p)} << 32) | ReadU32(p + 4); }

Result<std::string> Inflate(std::string_view deflated) {
  z_stream z{};
  if (inflateInit(&z) != Z_OK)
    return Status::ResourceExhausted("zlib: inflateInit failed (out of memory)");
  std::string out;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(deflated.data()));
  z.avail_in = static_cast<uInt>(deflated.size());
  int rc = Z_OK;
  while (rc == Z_OK) {
    if (out.size() >= kMaxInflatedHistogramBytes) {
      inflateEnd(&z);
      return Status::InvalidArgument("the histogram inflates past " +
                                     std::to_string(kMaxInflatedHistogramBytes >> 20) + " MiB");
    }
    const size_t at = out.size();
    out.resize(std::min(kMaxInflatedHistogramBytes, std::max<size_t>(4096, at * 2)));
    z.next_out = reinterpret_cast<Bytef*>(out.data() + at);
    z.avail_out = static_cast<uInt>(out.size() - at);
    rc = inflate(&z, Z_NO_FLUSH);
    out.resize(out.size() - z.avail_out);
  }
  const bool ended = rc == Z_STREAM_END;
  const size_t left = z.avail_in;
  const std::string why = z.msg != nullptr ? z.msg : "";
  inflateEnd(&z);
  if (!ended) {
    if (rc == Z_BUF_ERROR) return Status::InvalidArgument("the zlib stream is cut off");
    return Status::InvalidArgument("the zlib stream does not inflate" +
                                   (why.empty() ? std::string() : " (" + why + ")"));
  }
  if (left > 0) {
    return Status::InvalidArgument(std::to_string(left) + " bytes after the zlib stream's end");
  }
  return out;
}

// HdrHistogram's layout constants for a histogram's header, as its constructor derives them.
struct Layout {
  int sub_bits = 0;     // subBucketCountMagnitude
  int unit = 0;         // unitMagnitude
  uint64_t length = 0;  // countsArrayLength for highest_trackable
};

Result<Layout> LayoutOf(int digits, uint64_t lowest, uint64_t highest) {
  if (digits < 0 || digits > 5) {
    return Status::InvalidArgument("significant digits " + std::to_string(digits) +
                                   " outside 0..5");
  }
  if (lowest < 1 || lowest > (uint64_t{1} << 62)) {
    return Status::InvalidArgument("lowest discernible value " + std::to_string(lowest) +
                                   " outside 1..2^62");
  }
  if (highest < 2 * lowest || highest > uint64_t{INT64_MAX}) {
    return Status::InvalidArgument("highest trackable value " + std::to_string(highest) +
                                   " below twice the lowest discernible or past 2^63 - 1");
  }
  uint64_t single = 2;
  for (int i = 0; i < digits; ++i) single *= 10;
  Layout l;
  l.sub_bits = std::bit_width(single - 1);  // ceil(log2(single))
  l.unit = std::bit_width(lowest) - 1;      // floor(log2(lowest))
  if (l.unit + l.sub_bits - 1 > 61) {
    return Status::InvalidArgument("significant digits " + std::to_string(digits) +
                                   " cannot be kept past a lowest discernible value of " +
                                   std::to_string(lowest));
  }
  // getBucketsNeededToCoverValue, then getLengthForNumberOfBuckets.
  uint64_t untrackable = uint64_t{1} << (l.sub_bits + l.unit);
  uint64_t buckets = 1;
  while (untrackable <= highest) {
    if (untrackable > uint64_t{INT64_MAX} / 2) {
      ++buckets;
      break;
    }
    untrackable <<= 1;
    ++buckets;
  }
  l.length = (buckets + 1) * (uint64_t{1} << (l.sub_bits - 1));
  return l;
}

HdrBucket BucketAt(const Layout& l, uint64_t index, uint64_t count) {
  const int half_bits = l.sub_bits - 1;
  const uint64_t half = uint64_t{1} << half_bits;
  int64_t b = static_cast<int64_t>(index >> half_bits) - 1;
  uint64_t s = (index & (half - 1)) + half;
  if (b < 0) {
    s -= half;
    b = 0;
  }
  const int shift = static_cast<int>(b) + l.unit;
  return {s << shift, uint64_t{1} << shift, count};
}

// "DIGITS[.DIGITS]" seconds as ns, exactly (fraction digits past 9 are dropped).
bool ParseSecondsNs(std::string_view text, int64_t* ns) {
  const size_t dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  const std::string_view frac = dot == std::string_view::npos ? "" : text.substr(dot + 1);
  if (whole.empty() || (dot != std::string_view::npos && frac.empty())) return false;
  int64_t s = 0;
  for (char c : whole) {
    if (c < '0' || c > '9') return false;
    if (s > INT64_MAX / kNsPerSecond / 10) return false;
    s = s * 10 + (c - '0');
  }
  if (s > INT64_MAX / kNsPerSecond - 1) return false;
  int64_t f = 0;
  for (size_t i = 0; i < frac.size(); ++i) {
    if (frac[i] < '0' || frac[i] > '9') return false;
    if (i < 9) f = f * 10 + (frac[i] - '0');
  }
  for (size_t i = frac.size(); i < 9; ++i) f *= 10;
  *ns = s * kNsPerSecond + f;
  return true;
}

// DIGITS[.DIGITS]: the Interval_Max column, in the writer's unit ratio, any size.
bool IsDecimal(std::string_view text) {
  const size_t dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  const std::string_view frac = dot == std::string_view::npos ? "" : text.substr(dot + 1);
  const auto digits = [](std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  return !whole.empty() && digits(whole) && digits(frac) &&
         (dot == std::string_view::npos || !frac.empty());
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string Quoted(std::string_view s) {
  return "'" + std::string(s.substr(0, 40)) + (s.size() > 40 ? "...'" : "'");
}

// The seconds after a "#[StartTime:" or "#[BaseTime:" header's colon.
Status HeaderSeconds(std::string_view rest, std::string_view name, int64_t* ns) {
  rest = Trim(rest);
  size_t end = 0;
  while (end < rest.size() && rest[end] != ' ' && rest[end] != ',' && rest[end] != ']') ++end;
  if (!ParseSecondsNs(rest.substr(0, end), ns)) {
    return Status::InvalidArgument(std::string(name) + ": expected seconds since the epoch, got " +
                                   Quoted(rest.substr(0, end)));
  }
  return Status::Ok();
}

}  // namespace

Result<HdrHistogramData> DecodeHdrHistogram(std::string_view base64) {
  Result<std::string> compressed = DecodeBase64(base64);
  if (!compressed.ok()) return compressed.status();
  const auto* c = reinterpret_cast<const unsigned char*>(compressed->data());
  if (compressed->size() < 8) {
    return Status::InvalidArgument("a compressed histogram of " +
                                   std::to_string(compressed->size()) +
                                   " bytes is cut off (its header takes 8)");
  }
  const uint32_t cookie = ReadU32(c);
  if ((cookie & ~0xf0u) != kV2CompressedCookie) {
    const uint32_t base = cookie & ~0xf0u;
    std::string what = "not a compressed HdrHistogram";
    if (base == 0x1c849302 || base == 0x1c849309) {
      what = "HdrHistogram's older V" + std::string(base == 0x1c849302 ? "1" : "0") +
             " encoding, not V2 (rewrite the log with HdrHistogram 2.1.5 or later)";
    } else if (cookie == 0x0c72124e || cookie == 0x0c72124f) {  // DoubleHistogram's cookies
      what = "a DoubleHistogram, not an integer one";
    }
    return Status::InvalidArgument(what + " (cookie " + Hex(cookie) + ")");
  }
  const uint32_t length = ReadU32(c + 4);
  if (length != compressed->size() - 8) {
    return Status::InvalidArgument("the compressed histogram says " + std::to_string(length) +
                                   " bytes follow its header, but " +
                                   std::to_string(compressed->size() - 8) + " do");
  }
  Result<std::string> inflated = Inflate(std::string_view(*compressed).substr(8));
  if (!inflated.ok()) return inflated.status();
  const auto* p = reinterpret_cast<const unsigned char*>(inflated->data());
  if (inflated->size() < kInflatedHeaderBytes) {
    return Status::InvalidArgument("the inflated histogram of " + std::to_string(inflated->size()) +
                                   " bytes is shorter than its 40-byte header");
  }
  const uint32_t inner = ReadU32(p);
  if ((inner & ~0xf0u) != kV2Cookie) {
    return Status::InvalidArgument("the inflated histogram's cookie " + Hex(inner) +
                                   " is not V2's");
  }
  const uint32_t payload_length = ReadU32(p + 4);
  if (payload_length != inflated->size() - kInflatedHeaderBytes) {
    return Status::InvalidArgument(
        "the histogram says its counts take " + std::to_string(payload_length) + " bytes, but " +
        std::to_string(inflated->size() - kInflatedHeaderBytes) + " follow");
  }
  if (const uint32_t offset = ReadU32(p + 8); offset != 0) {
    return Status::InvalidArgument("a normalizing index offset (" +
                                   std::to_string(static_cast<int32_t>(offset)) +
                                   ", a shifted histogram) is not supported");
  }
  HdrHistogramData out;
  out.digits = static_cast<int32_t>(ReadU32(p + 12));
  out.lowest_discernible = ReadU64(p + 16);
  out.highest_trackable = ReadU64(p + 24);
  double ratio = 0;
  const uint64_t ratio_bits = ReadU64(p + 32);
  std::memcpy(&ratio, &ratio_bits, sizeof ratio);
  if (ratio != 1.0) {
    return Status::InvalidArgument("an integer-to-double ratio of " + std::to_string(ratio) +
                                   " (a DoubleHistogram's counts), not 1");
  }
  Result<Layout> layout = LayoutOf(out.digits, out.lowest_discernible, out.highest_trackable);
  if (!layout.ok()) return layout.status();

  const unsigned char* at = p + kInflatedHeaderBytes;
  const unsigned char* const end = at + payload_length;
  uint64_t index = 0;
  while (at < end) {
    uint64_t word = 0;
    int n = 0;
    for (;; ++n) {
      if (at == end) return Status::InvalidArgument("the counts end inside a word");
      const uint8_t byte = *at++;
      if (n == 8) {
        word |= uint64_t{byte} << 56;
        break;
      }
      word |= uint64_t{byte & 0x7fu} << (7 * n);
      if ((byte & 0x80) == 0) break;
    }
    const int64_t value = static_cast<int64_t>((word >> 1) ^ (~(word & 1) + 1));
    if (value < 0) {
      // -value zero counts; INT64_MIN would be 2^63 of them, past any histogram.
      const uint64_t zeros = value == INT64_MIN ? uint64_t{1} << 63 : uint64_t(-value);
      if (zeros > layout->length - index) {
        return Status::InvalidArgument("the counts run past the " + std::to_string(layout->length) +
                                       " a histogram up to " +
                                       std::to_string(out.highest_trackable) + " holds");
      }
      index += zeros;
      continue;
    }
    if (index >= layout->length) {
      return Status::InvalidArgument("the counts run past the " + std::to_string(layout->length) +
                                     " a histogram up to " + std::to_string(out.highest_trackable) +
                                     " holds");
    }
    if (value > 0) {
      const auto count = static_cast<uint64_t>(value);
      if (count > uint64_t{INT64_MAX} - out.total_count) {
        return Status::InvalidArgument("the counts add up past 2^63 - 1");
      }
      out.total_count += count;
      out.buckets.push_back(BucketAt(*layout, index, count));
    }
    ++index;
  }
  return out;
}

HlogReader::HlogReader(HlogOptions options) : options_(std::move(options)) {}

Status HlogReader::Read(std::string_view text, const HlogIntervalFn& fn) {
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ++summary_.lines;
    if (line.size() > kMaxHlogLineBytes) {
      return Status::InvalidArgument("line " + std::to_string(summary_.lines) + ": longer than " +
                                     std::to_string(kMaxHlogLineBytes >> 20) + " MiB");
    }
    if (Status s = ReadLine(line, fn); !s.ok()) {
      return Status::InvalidArgument("line " + std::to_string(summary_.lines) + ": " + s.message());
    }
  }
  return Status::Ok();
}

Status HlogReader::ReadLine(std::string_view line, const HlogIntervalFn& fn) {
  line = Trim(line);
  if (line.empty() || line.starts_with("\"StartTimestamp\"")) return Status::Ok();
  if (line.front() == '#') {
    if (line.starts_with("#[StartTime:")) {
      if (Status s = HeaderSeconds(line.substr(12), "StartTime", &start_time_ns_); !s.ok()) {
        return s;
      }
      have_start_ = summary_.start_time_header = true;
    } else if (line.starts_with("#[BaseTime:")) {
      if (Status s = HeaderSeconds(line.substr(11), "BaseTime", &base_time_ns_); !s.ok()) {
        return s;
      }
      have_base_ = summary_.base_time_header = true;
    }
    return Status::Ok();
  }
  std::string_view tag;
  const bool tagged = line.starts_with("Tag=");
  if (tagged) {
    const size_t comma = line.find(',');
    tag = line.substr(4, comma == std::string_view::npos ? comma : comma - 4);
    if (tag.empty()) return Status::InvalidArgument("an empty Tag=");
    line.remove_prefix(comma == std::string_view::npos ? line.size() : comma + 1);
  }
  std::string_view fields[4];
  for (int i = 0; i < 4; ++i) {
    const size_t comma = i < 3 ? line.find(',') : std::string_view::npos;
    if (i < 3 && comma == std::string_view::npos) {
      return Status::InvalidArgument(
          "expected StartTimestamp,Interval_Length,Interval_Max,Interval_Compressed_Histogram "
          "(with an optional Tag=NAME, first), got " +
          std::to_string(i + 1) + " fields");
    }
    fields[i] = Trim(line.substr(0, comma));
    line.remove_prefix(comma == std::string_view::npos ? line.size() : comma + 1);
  }
  int64_t start_ns = 0, length_ns = 0;
  if (!ParseSecondsNs(fields[0], &start_ns)) {
    return Status::InvalidArgument("StartTimestamp " + Quoted(fields[0]) +
                                   " is not a number of seconds >= 0");
  }
  if (!ParseSecondsNs(fields[1], &length_ns)) {
    return Status::InvalidArgument("Interval_Length " + Quoted(fields[1]) +
                                   " is not a number of seconds >= 0");
  }
  if (!IsDecimal(fields[2])) {
    return Status::InvalidArgument("Interval_Max " + Quoted(fields[2]) + " is not a number >= 0");
  }
  if (fields[3].find_first_of(", \t") != std::string_view::npos) {
    return Status::InvalidArgument("more than four fields");
  }
  Result<HdrHistogramData> histogram = DecodeHdrHistogram(fields[3]);
  if (!histogram.ok()) return Status::InvalidArgument("histogram: " + histogram.status().message());
  histogram_ = std::move(histogram).value();

  // HistogramLogReader's rules for the first interval (the header comment).
  if (!have_start_) {
    start_time_ns_ = start_ns;
    have_start_ = true;
  }
  if (!have_base_) {
    base_time_ns_ = start_ns < start_time_ns_ ? start_time_ns_ : 0;
    have_base_ = true;
  }
  if (start_ns > INT64_MAX - base_time_ns_) {
    return Status::InvalidArgument("StartTimestamp plus BaseTime passes the year 2262");
  }
  if ((tagged ? tag : std::string_view()) != options_.tag) {
    ++summary_.other_tags;
    return Status::Ok();
  }
  ++summary_.intervals;
  if (length_ns > kNsPerSecond) ++summary_.long_intervals;
  HlogInterval interval;
  interval.line = summary_.lines;
  interval.tag = tag;
  interval.start_ns = start_ns + base_time_ns_;
  interval.length_ns = length_ns;
  interval.histogram = &histogram_;
  fn(interval);
  return Status::Ok();
}

}  // namespace trailmap
