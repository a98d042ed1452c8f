// HdrHistogram interval logs written by the Java HdrHistogram itself (ingest/testdata/hlog: its
// HistogramLogWriter, from known values; README.md there) must read back with every count exact
// and every percentile within the stated error of the Java histogram's own; logs made bad here,
// byte by byte, are refused naming the line and what is wrong.
#include "ingest/hlog_reader.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/histogram.h"

namespace trailmap {
namespace {

std::string ReadFile(const std::string& name) {
  std::ifstream in(std::string(TRAILMAP_INGEST_TESTDATA "/hlog/") + name, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// NAME.expected: what the Java program recorded, and what its histogram reported.
struct ExpectedInterval {
  uint64_t line = 0;
  int64_t start_ms = 0, length_ms = 0;
  std::string tag;  // "" untagged
  uint64_t count = 0;
  std::map<uint64_t, uint64_t> values;                   // value -> count
  std::vector<std::pair<double, uint64_t>> percentiles;  // p -> the Java histogram's value
};

std::vector<ExpectedInterval> ReadExpected(const std::string& name) {
  std::vector<ExpectedInterval> out;
  std::istringstream in(ReadFile(name));
  std::string word;
  while (in >> word) {
    if (word == "#") {
      std::getline(in, word);
    } else if (word == "interval") {
      ExpectedInterval i;
      in >> i.line >> i.start_ms >> i.length_ms >> i.tag >> i.count;
      if (i.tag == "-") i.tag.clear();
      out.push_back(i);
    } else if (word == "value") {
      uint64_t v, c;
      in >> v >> c;
      out.back().values[v] += c;
    } else if (word == "percentile") {
      double p;
      uint64_t v;
      in >> p >> v;
      out.back().percentiles.emplace_back(p, v);
    }
  }
  return out;
}

struct ReadInterval {
  uint64_t line;
  int64_t start_ns, length_ns;
  HdrHistogramData histogram;
};

Result<std::vector<ReadInterval>> ReadLog(std::string_view text, const std::string& tag = "",
                                          HlogSummary* summary = nullptr) {
  std::vector<ReadInterval> got;
  HlogReader reader({.tag = tag});
  Status s = reader.Read(text, [&got](const HlogInterval& i) {
    got.push_back({i.line, i.start_ns, i.length_ns, *i.histogram});
  });
  if (summary != nullptr) *summary = reader.summary();
  if (!s.ok()) return s;
  return got;
}

// Every fixture, every tag: the intervals Java wrote, at their times, with their exact counts;
// each decoded bucket holds exactly the known values that fall in it; percentiles of a
// trailmap histogram built from the buckets' representatives are within the stated error of
// Java's: the source bucket's width plus half of trailmap's own bucket at that value.
TEST(HlogReader, JavaWrittenLogsReadBackExactly) {
  for (const char* name : {"basic", "absolute", "tagged", "layouts"}) {
    SCOPED_TRACE(name);
    const std::string log = ReadFile(std::string(name) + ".hlog");
    ASSERT_FALSE(log.empty());
    const std::vector<ExpectedInterval> expected = ReadExpected(std::string(name) + ".expected");
    ASSERT_FALSE(expected.empty());
    for (const char* tag : {"", "read", "write"}) {
      std::vector<const ExpectedInterval*> want;
      for (const ExpectedInterval& e : expected) {
        if (e.tag == tag) want.push_back(&e);
      }
      HlogSummary summary;
      Result<std::vector<ReadInterval>> got = ReadLog(log, tag, &summary);
      ASSERT_TRUE(got.ok()) << got.status().message();
      ASSERT_EQ(got->size(), want.size()) << "tag " << tag;
      EXPECT_EQ(summary.other_tags, expected.size() - want.size());
      for (size_t k = 0; k < want.size(); ++k) {
        const ExpectedInterval& e = *want[k];
        const ReadInterval& r = (*got)[k];
        SCOPED_TRACE("line " + std::to_string(e.line));
        EXPECT_EQ(r.line, e.line);
        EXPECT_EQ(r.start_ns, e.start_ms * 1'000'000);
        EXPECT_EQ(r.length_ns, e.length_ms * 1'000'000);
        EXPECT_EQ(r.histogram.total_count, e.count);
        // Each bucket's count is the sum of the known values inside it, and no value is left
        // outside every bucket.
        uint64_t placed = 0;
        for (const HdrBucket& b : r.histogram.buckets) {
          uint64_t inside = 0;
          for (auto it = e.values.lower_bound(b.lowest);
               it != e.values.end() && it->first - b.lowest < b.width; ++it) {
            inside += it->second;
          }
          EXPECT_EQ(b.count, inside) << "bucket [" << b.lowest << ", +" << b.width << ")";
          placed += inside;
        }
        EXPECT_EQ(placed, e.count);

        Histogram h;
        for (const HdrBucket& b : r.histogram.buckets) h.Record(b.Representative(), b.count);
        EXPECT_EQ(h.count(), e.count);
        for (const auto& [p, java] : e.percentiles) {
          uint64_t width = 1;
          for (const HdrBucket& b : r.histogram.buckets) {
            if (java >= b.lowest && java - b.lowest < b.width) width = b.width;
          }
          const uint32_t ours = BucketIndex(java);
          // Half a trailmap bucket: its midpoint is what Percentile reports (0.8% at most).
          const uint64_t bound = width + (BucketUpper(ours) - BucketLower(ours)) / 2 + 1;
          const uint64_t got_p = h.Percentile(p);
          const uint64_t diff = got_p > java ? got_p - java : java - got_p;
          EXPECT_LE(diff, bound) << "p" << p << ": ours " << got_p << ", Java's " << java;
        }
      }
    }
  }
}

// Bucket layouts by hand, from the header's grammar and example.
TEST(HlogReader, ValuesSpanTheirBuckets) {
  Result<std::vector<ReadInterval>> layouts = ReadLog(ReadFile("layouts.hlog"));
  ASSERT_TRUE(layouts.ok()) << layouts.status().message();
  ASSERT_EQ(layouts->size(), 4u);
  // 1 digit: 32 sub-buckets, so 16 per power of two from 32 up: the last value, 88573, is in
  // [86016, 90111], 4096 wide.
  const HdrHistogramData& coarse = (*layouts)[0].histogram;
  EXPECT_EQ(coarse.digits, 1);
  EXPECT_EQ(coarse.buckets.back(), (HdrBucket{86016, 4096, 88573 % 7 + 1}));
  // Lowest discernible 1000: unit magnitude 9, so the first values are 512 wide.
  const HdrHistogramData& unit = (*layouts)[2].histogram;
  EXPECT_EQ(unit.lowest_discernible, 1000u);
  EXPECT_EQ(unit.buckets.front(), (HdrBucket{512, 512, 3}));
  EXPECT_EQ(unit.buckets.front().Representative(), 768u);
  // Values up to 2^62 - 1: at 3 digits, [2^61, 2^62) has 1024 buckets 2^51 wide.
  const HdrHistogramData& huge = (*layouts)[3].histogram;
  EXPECT_EQ(huge.buckets.back(),
            (HdrBucket{(uint64_t{1} << 62) - (uint64_t{1} << 51), uint64_t{1} << 51, 6}));
  EXPECT_EQ(huge.buckets.front(), (HdrBucket{1, 1, 1}));
}

// --- Bad input, made here byte by byte.

std::string Base64(std::string_view bytes) {
  static const char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  uint32_t bits = 0;
  int have = 0;
  for (unsigned char c : bytes) {
    bits = (bits << 8) | c;
    have += 8;
    while (have >= 6) {
      have -= 6;
      out += kAlphabet[(bits >> have) & 63];
    }
  }
  if (have > 0) out += kAlphabet[(bits << (6 - have)) & 63];
  while (out.size() % 4 != 0) out += '=';
  return out;
}

void PutU32(std::string* out, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out->push_back(static_cast<char>((v >> s) & 0xff));
}
void PutU64(std::string* out, uint64_t v) {
  PutU32(out, static_cast<uint32_t>(v >> 32));
  PutU32(out, static_cast<uint32_t>(v));
}
void PutWord(std::string* out, int64_t value) {
  uint64_t v = (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63);
  for (int n = 0; n < 8 && v >= 0x80; ++n, v >>= 7) out->push_back(static_cast<char>(v | 0x80));
  out->push_back(static_cast<char>(v));
}

std::string Deflate(std::string_view bytes) {
  std::string out(compressBound(bytes.size()), '\0');
  uLongf n = out.size();
  EXPECT_EQ(compress2(reinterpret_cast<Bytef*>(out.data()), &n,
                      reinterpret_cast<const Bytef*>(bytes.data()), bytes.size(), 6),
            Z_OK);
  out.resize(n);
  return out;
}

struct Header {
  uint32_t cookie = 0x1c849313;
  int32_t offset = 0;
  int32_t digits = 3;
  uint64_t lowest = 1;
  uint64_t highest = 3'600'000'000;
  double ratio = 1.0;
};

// A histogram's inflated bytes: the header, then the payload (its length as given, or right).
std::string Inflated(const Header& h, std::string_view payload, int64_t length = -1) {
  std::string out;
  PutU32(&out, h.cookie);
  PutU32(&out, static_cast<uint32_t>(length >= 0 ? length : int64_t(payload.size())));
  PutU32(&out, static_cast<uint32_t>(h.offset));
  PutU32(&out, static_cast<uint32_t>(h.digits));
  PutU64(&out, h.lowest);
  PutU64(&out, h.highest);
  uint64_t bits;
  std::memcpy(&bits, &h.ratio, sizeof bits);
  PutU64(&out, bits);
  return out + std::string(payload);
}

std::string Compressed(std::string_view deflated, uint32_t cookie = 0x1c849314) {
  std::string out;
  PutU32(&out, cookie);
  PutU32(&out, static_cast<uint32_t>(deflated.size()));
  return out + std::string(deflated);
}

std::string Line(std::string_view compressed) { return "0.000,1.000,0.000," + Base64(compressed); }

std::string Payload(std::initializer_list<int64_t> words) {
  std::string out;
  for (int64_t w : words) PutWord(&out, w);
  return out;
}

TEST(HlogReader, HandMadeHistogramDecodes) {
  // Counts 5 at 0, 1500 zero counts, 2 at index 1501, 3 at index 3000.
  const std::string payload = Payload({5, -1500, 2, -1498, 3});
  Result<std::vector<ReadInterval>> got = ReadLog(Line(Compressed(Deflate(Inflated({}, payload)))));
  ASSERT_TRUE(got.ok()) << got.status().message();
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ((*got)[0].histogram.buckets,
            (std::vector<HdrBucket>{{0, 1, 5}, {1501, 1, 2}, {3952, 2, 3}}));
  EXPECT_EQ((*got)[0].histogram.total_count, 10u);
}

TEST(HlogReader, BadHistogramsAreRefusedNamingLineAndCause) {
  const std::string basic = ReadFile("basic.hlog");
  const size_t first = basic.find("\n0.000,") + 1;
  const std::string good_line = basic.substr(first, basic.find('\n', first) - first);
  const std::string good_b64 = good_line.substr(good_line.rfind(',') + 1);
  std::string raw;  // the good histogram's bytes, to spoil
  {
    std::string b = good_b64;
    // Decode with the reader's own rules by round trip: re-encoding must give the same text.
    static const std::string kAlphabet =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    uint32_t bits = 0;
    int have = 0;
    for (char c : b) {
      if (c == '=') break;
      bits = (bits << 6) | static_cast<uint32_t>(kAlphabet.find(c));
      have += 6;
      if (have >= 8) {
        have -= 8;
        raw.push_back(static_cast<char>((bits >> have) & 0xff));
      }
    }
    ASSERT_EQ(Base64(raw), good_b64);
  }
  const std::string deflated = raw.substr(8);
  std::string spoiled_zlib = deflated;
  spoiled_zlib[spoiled_zlib.size() / 2] ^= 0x55;
  spoiled_zlib[spoiled_zlib.size() / 2 + 1] ^= 0x55;
  const std::string big_zero_run = Payload({1, -(int64_t{1} << 40)});

  struct Case {
    const char* name;
    std::string line;
    const char* want;  // the message, after "line 2: "
  };
  const std::string p = "0.000,1.000,0.000,";
  const Case cases[] = {
      {"a character outside base64", p + good_b64.substr(0, 10) + "!" + good_b64.substr(11),
       "histogram: bad base64 character '!' at 11"},
      {"base64 cut to a stray character", p + good_b64.substr(0, 4 * 5 + 1),
       "histogram: base64 text of 21 characters is cut off"},
      {"base64 cut off", p + good_b64.substr(0, 40),
       "histogram: the compressed histogram says 50 bytes follow its header, but 22 do"},
      {"too short for a header", p + Base64("\x1c\x84\x93"),
       "histogram: a compressed histogram of 3 bytes is cut off (its header takes 8)"},
      {"not a histogram", p + Base64("\x12\x34\x56\x78" + raw.substr(4)),
       "histogram: not a compressed HdrHistogram (cookie 0x12345678)"},
      {"the V1 encoding", Line(Compressed(deflated, 0x1c849312)),
       "histogram: HdrHistogram's older V1 encoding, not V2 (rewrite the log with HdrHistogram "
       "2.1.5 or later) (cookie 0x1c849312)"},
      {"a DoubleHistogram", Line(Compressed(deflated, 0x0c72124f)),
       "histogram: a DoubleHistogram, not an integer one (cookie 0x0c72124f)"},
      {"zlib data that does not inflate", Line(Compressed(spoiled_zlib)),
       "histogram: the zlib stream does not inflate (invalid distance code)"},
      {"a zlib stream cut off", Line(Compressed(deflated.substr(0, deflated.size() - 6))),
       "histogram: the zlib stream is cut off"},
      {"bytes after the zlib stream", Line(Compressed(deflated + "xy")),
       "histogram: 2 bytes after the zlib stream's end"},
      {"a zlib bomb", Line(Compressed(Deflate(std::string(kMaxInflatedHistogramBytes + 1, '\0')))),
       "histogram: the histogram inflates past 16 MiB"},
      {"an inflated header cut off", Line(Compressed(Deflate(Inflated({}, "").substr(0, 39)))),
       "histogram: the inflated histogram of 39 bytes is shorter than its 40-byte header"},
      {"a bad inner cookie", Line(Compressed(Deflate(Inflated({.cookie = 0x1c849301}, "")))),
       "histogram: the inflated histogram's cookie 0x1c849301 is not V2's"},
      {"a payload length that lies", Line(Compressed(Deflate(Inflated({}, Payload({1}), 5)))),
       "histogram: the histogram says its counts take 5 bytes, but 1 follow"},
      {"a normalizing index offset", Line(Compressed(Deflate(Inflated({.offset = -3}, "")))),
       "histogram: a normalizing index offset (-3, a shifted histogram) is not supported"},
      {"a DoubleHistogram's ratio", Line(Compressed(Deflate(Inflated({.ratio = 0.5}, "")))),
       "histogram: an integer-to-double ratio of 0.500000 (a DoubleHistogram's counts), not 1"},
      {"six digits", Line(Compressed(Deflate(Inflated({.digits = 6}, "")))),
       "histogram: significant digits 6 outside 0..5"},
      {"a lowest value of 0", Line(Compressed(Deflate(Inflated({.lowest = 0}, "")))),
       "histogram: lowest discernible value 0 outside 1..2^62"},
      {"highest below twice lowest", Line(Compressed(Deflate(Inflated({.highest = 1}, "")))),
       "histogram: highest trackable value 1 below twice the lowest discernible or past 2^63 - 1"},
      {"a layout HdrHistogram refuses",
       Line(Compressed(Deflate(Inflated(
           {.digits = 5, .lowest = uint64_t{1} << 45, .highest = uint64_t{1} << 62}, "")))),
       "histogram: significant digits 5 cannot be kept past a lowest discernible value of "
       "35184372088832"},
      {"a word cut off", Line(Compressed(Deflate(Inflated({}, "\x05\x85")))),
       "histogram: the counts end inside a word"},
      {"zero counts past the histogram", Line(Compressed(Deflate(Inflated({}, big_zero_run)))),
       "histogram: the counts run past the 23552 a histogram up to 3600000000 holds"},
      {"the most negative word", Line(Compressed(Deflate(Inflated({}, Payload({INT64_MIN}))))),
       "histogram: the counts run past the 23552 a histogram up to 3600000000 holds"},
      {"a count past the histogram", Line(Compressed(Deflate(Inflated({}, Payload({-23552, 1}))))),
       "histogram: the counts run past the 23552 a histogram up to 3600000000 holds"},
      {"counts past 2^63 - 1", Line(Compressed(Deflate(Inflated({}, Payload({INT64_MAX, 1}))))),
       "histogram: the counts add up past 2^63 - 1"},
      {"three fields", "0.000,1.000," + good_b64,
       "expected StartTimestamp,Interval_Length,Interval_Max,Interval_Compressed_Histogram (with "
       "an optional Tag=NAME, first), got 3 fields"},
      {"five fields", good_line + ",x", "more than four fields"},
      {"a negative start", "-1.000,1.000,0.000," + good_b64,
       "StartTimestamp '-1.000' is not a number of seconds >= 0"},
      {"a start in exponent form", "1e9,1.000,0.000," + good_b64,
       "StartTimestamp '1e9' is not a number of seconds >= 0"},
      {"a length that is not a number", "0.000,one,0.000," + good_b64,
       "Interval_Length 'one' is not a number of seconds >= 0"},
      {"a max that is not a number", "0.000,1.000,,", "Interval_Max '' is not a number >= 0"},
      {"a max in exponent form", "0.000,1.000,1e3," + good_b64,
       "Interval_Max '1e3' is not a number >= 0"},
      {"an empty tag", "Tag=," + good_line, "an empty Tag="},
      {"a StartTime that is not a number", "#[StartTime: soon (seconds since epoch)]",
       "StartTime: expected seconds since the epoch, got 'soon'"},
      {"a BaseTime past 2262", "#[BaseTime: 9300000000.000]",
       "BaseTime: expected seconds since the epoch, got '9300000000.000'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    // A good interval first: it reaches the callback, the bad line then stops the read.
    HlogSummary summary;
    Result<std::vector<ReadInterval>> got = ReadLog(good_line + "\n" + c.line + "\n", "", &summary);
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().message(), std::string("line 2: ") + c.want);
    EXPECT_EQ(summary.intervals, 1u);
  }
}

TEST(HlogReader, ALineTooLongIsRefusedUnread) {
  const std::string log = "#[StartTime: 1.0]\n" + std::string(kMaxHlogLineBytes + 1, 'A') + "\n";
  Result<std::vector<ReadInterval>> got = ReadLog(log);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().message(), "line 2: longer than 32 MiB");
  // At the bound, the line is read (and here refused for what it is).
  got = ReadLog(std::string(kMaxHlogLineBytes, 'A'));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().message().rfind("line 1: expected StartTimestamp", 0), 0u);
}

// HistogramLogReader's time rules, and decimals read exactly.
TEST(HlogReader, StartAndBaseTimes) {
  const std::string basic = ReadFile("basic.hlog");
  const size_t first = basic.find("\n0.000,") + 1;
  const std::string line = basic.substr(first, basic.find('\n', first) - first);
  const std::string histogram = line.substr(line.find(",1235.223,"));  // ",MAX,HISTOGRAM"
  const auto starts = [&histogram](const std::string& head, std::vector<std::string> times) {
    std::string log = head;
    for (const std::string& t : times) log += t + ",1.000" + histogram + "\n";
    std::vector<int64_t> out;
    Result<std::vector<ReadInterval>> got = ReadLog(log);
    EXPECT_TRUE(got.ok()) << got.status().message();
    if (got.ok()) {
      for (const ReadInterval& r : *got) out.push_back(r.start_ns);
    }
    return out;
  };
  using V = std::vector<int64_t>;
  // No headers: the timestamps are taken as absolute, even small ones (Java: start time = the
  // first timestamp, so none is below it).
  EXPECT_EQ(starts("", {"0.127", "1.127"}), (V{127'000'000, 1'127'000'000}));
  // StartTime and relative timestamps: BaseTime is StartTime.
  EXPECT_EQ(starts("#[StartTime: 1795000000.500 (seconds since epoch), Wed Nov 18]\n",
                   {"0.000", "0.999", "0.499999999"}),
            (V{1'795'000'000'500'000'000, 1'795'000'001'499'000'000, 1'795'000'000'999'999'999}));
  // StartTime and absolute timestamps: BaseTime 0.
  EXPECT_EQ(starts("#[StartTime: 1795000000.000]\n", {"1795000002.250"}),
            (V{1'795'000'002'250'000'000}));
  // An explicit BaseTime wins, and 0.999 + 0.001 is exactly the next second.
  EXPECT_EQ(starts("#[StartTime: 1795000000.000]\n#[BaseTime: 1795000000.001]\n", {"0.999"}),
            (V{1'795'000'001'000'000'000}));
  // Fraction digits past nine are dropped, not rounded up.
  EXPECT_EQ(starts("", {"7.9999999999"}), (V{7'999'999'999}));
}

TEST(HlogReader, LinesAcrossReadsAndWindowsLineEnds) {
  const std::string log = ReadFile("basic.hlog");
  std::string crlf;
  for (char c : log) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  HlogReader reader;
  std::vector<uint64_t> lines;
  const auto fn = [&lines](const HlogInterval& i) { lines.push_back(i.line); };
  const size_t cut = crlf.find('\n', crlf.size() / 2) + 1;
  ASSERT_TRUE(reader.Read(std::string_view(crlf).substr(0, cut), fn).ok());
  ASSERT_TRUE(reader.Read(std::string_view(crlf).substr(cut), fn).ok());
  EXPECT_EQ(lines, (std::vector<uint64_t>{5, 6, 7, 8, 9}));
  EXPECT_EQ(reader.summary().lines, 9u);
  EXPECT_TRUE(reader.summary().start_time_header);
  EXPECT_TRUE(reader.summary().base_time_header);
}

}  // namespace
}  // namespace trailmap
