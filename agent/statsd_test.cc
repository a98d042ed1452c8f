#include "agent/statsd.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace trailmap {
namespace {

// A line and what it must become: either a sample (metric, ns, count, fields) or a reason.
struct LineCase {
  std::string line;
  std::string metric;
  uint64_t value_ns = 0;
  uint64_t count = 0;
  std::string fields;
  std::string reason;  // non-empty: the exact message expected
};

// Shown on failure: which row of the table.
std::string Describe(const LineCase& c) { return "line \"" + c.line + "\""; }

TEST(Statsd, LineTable) {
  const std::vector<LineCase> cases = {
      // Accepted.
      {"db.query:12|ms", "db.query", 12'000'000, 1, "", ""},
      {"db.query:0.0015|h", "db.query", 1'500, 1, "", ""},
      {"db.query:2.0000004|d", "db.query", 2'000'000, 1, "", ""},  // rounds to nearest ns
      {"db.query:2.0000006|d", "db.query", 2'000'001, 1, "", ""},
      {"db.query:0|ms", "db.query", 0, 1, "", ""},
      {"db.query:1e3|ms", "db.query", 1'000'000'000, 1, "", ""},
      {"db.query:5|ms|@0.1", "db.query", 5'000'000, 10, "", ""},
      {"db.query:5|ms|@0.3", "db.query", 5'000'000, 3, "", ""},
      {"db.query:5|ms|@1", "db.query", 5'000'000, 1, "", ""},
      {"db.query:5|ms|@0.9", "db.query", 5'000'000, 1, "", ""},
      {"http.latency:7|d|#url:/api,op:get", "http.latency", 7'000'000, 1, "op=get,url=/api", ""},
      {"http.latency:7|d|#canary", "http.latency", 7'000'000, 1, "canary=true", ""},
      {"http.latency:7|d|#u:http://x:8/", "http.latency", 7'000'000, 1, "u=http://x:8/", ""},
      {"http.latency:7|d|#op:r|@0.5", "http.latency", 7'000'000, 2, "op=r", ""},
      {"http.latency:7|d|@0.5|#op:r", "http.latency", 7'000'000, 2, "op=r", ""},
      {"a-b_c.D9:1|ms", "a-b_c.D9", 1'000'000, 1, "", ""},
      // 2^-40: the smallest rate, standing for kMaxItemCount events.
      {"x:1|ms|@0.0000000000009094947017729282379150390625", "x", 1'000'000, 1'099'511'627'776, "",
       ""},
      // Refused, with the exact reason.
      {"db.query:-3|ms", "", 0, 0, "", "value '-3' is negative"},
      {"db.query:1|c", "", 0, 0, "", "type 'c' is not supported (only ms, h, d)"},
      {"db.query:1|g", "", 0, 0, "", "type 'g' is not supported (only ms, h, d)"},
      {"db.query:1|", "", 0, 0, "", "type '' is not supported (only ms, h, d)"},
      {"db.query:nan|ms", "", 0, 0, "", "value 'nan' is not a number"},
      {"db.query:abc|ms", "", 0, 0, "", "value 'abc' is not a number"},
      {"db.query:|ms", "", 0, 0, "", "value '' is not a number"},
      {"db.query:1:2|ms", "", 0, 0, "", "value '1:2' is not a number"},
      {"db.query:+1|ms", "", 0, 0, "", "value '+1' is not a number"},
      {"db.query:1e20|ms", "", 0, 0, "", "value '1e20' is too large (at most 18446744073709 ms)"},
      {"db.query:inf|ms", "", 0, 0, "", "value 'inf' is too large (at most 18446744073709 ms)"},
      {"db.query:1e999|ms", "", 0, 0, "", "value '1e999' is too large (at most 18446744073709 ms)"},
      {"db.query", "", 0, 0, "", "no ':' between metric name and value"},
      {"db.query:12", "", 0, 0, "", "no '|type' after the value"},
      {"db query:1|ms", "", 0, 0, "",
       "metric name 'db query' has a character outside [A-Za-z0-9_.-]"},
      {":1|ms", "", 0, 0, "", "empty metric name"},
      {"db.query:1|ms|@0", "", 0, 0, "", "sample rate '@0' must be a number in (0, 1]"},
      {"db.query:1|ms|@1.5", "", 0, 0, "", "sample rate '@1.5' must be a number in (0, 1]"},
      {"db.query:1|ms|@x", "", 0, 0, "", "sample rate '@x' must be a number in (0, 1]"},
      {"db.query:1|ms|@nan", "", 0, 0, "", "sample rate '@nan' must be a number in (0, 1]"},
      {"x:1|ms|@0.0000000000000000001", "", 0, 0, "",
       "sample rate '@0.0000000000000000001' stands for more than 2^40 events (at most 1 in "
       "1099511627776)"},
      {"x:1|ms|@5e-324", "", 0, 0, "",
       "sample rate '@5e-324' stands for more than 2^40 events (at most 1 in 1099511627776)"},
      {"db.query:1|ms|#o p:r", "", 0, 0, "",
       "tag 'o p:r': field key 'o p' has a character outside [A-Za-z0-9_.-]"},
      {"db.query:1|ms|#op:", "", 0, 0, "", "tag 'op:': field 'op' value must be 1..200 bytes"},
      {"db.query:1|ms|#op:a,,b:c", "", 0, 0, "", "tag '': field key must be 1..64 bytes"},
      {"db.query:1|ms|#op:a,op:b", "", 0, 0, "", "tags: field 'op' given twice"},
      {"db.query:1|ms|c:abc", "", 0, 0, "", "section 'c:abc' is not a first @rate or #tags"},
      {"db.query:1|ms|@0.5|@0.5", "", 0, 0, "", "section '@0.5' is not a first @rate or #tags"},
  };
  for (const LineCase& c : cases) {
    Result<StatsdSample> r = ParseStatsdLine(c.line);
    if (c.reason.empty()) {
      ASSERT_TRUE(r.ok()) << Describe(c) << ": " << r.status().ToString();
      EXPECT_EQ(r->metric, c.metric) << Describe(c);
      EXPECT_EQ(r->value_ns, c.value_ns) << Describe(c);
      EXPECT_EQ(r->count, c.count) << Describe(c);
      EXPECT_EQ(r->fields, c.fields) << Describe(c);
    } else {
      ASSERT_FALSE(r.ok()) << Describe(c);
      EXPECT_EQ(r.status().message(), c.reason) << Describe(c);
    }
  }
}

TEST(Statsd, ReasonClasses) {
  const std::vector<std::pair<std::string, StatsdReject>> cases = {
      {"x", StatsdReject::kSyntax},      {"x:1|c", StatsdReject::kType},
      {"x:-1|ms", StatsdReject::kValue}, {"x y:1|ms", StatsdReject::kName},
      {"x:1|ms|#,", StatsdReject::kTag}, {"x:1|ms|@2", StatsdReject::kRate},
      {"x:1|ms|@0.0000000000000000001", StatsdReject::kRate},
  };
  for (const auto& [line, want] : cases) {
    StatsdReject got = StatsdReject::kSyntax;
    EXPECT_FALSE(ParseStatsdLine(line, &got).ok()) << line;
    EXPECT_EQ(StatsdRejectName(got), std::string(StatsdRejectName(want))) << line;
  }
}

TEST(Statsd, PacketKeepsGoodLinesAndNumbersBadOnes) {
  const StatsdPacket p = ParseStatsdPacket("a:1|ms\nb:-3|ms\n\r\nc:2|d|#op:r\r\nd:1|c\n");
  ASSERT_EQ(p.samples.size(), 2u);
  EXPECT_EQ(p.samples[0].metric, "a");
  EXPECT_EQ(p.samples[1].metric, "c");
  EXPECT_EQ(p.samples[1].fields, "op=r");
  ASSERT_EQ(p.errors.size(), 2u);
  EXPECT_EQ(p.errors[0].message, "line 2: value '-3' is negative");
  EXPECT_EQ(p.errors[0].line, 2u);
  EXPECT_EQ(p.errors[1].message, "line 5: type 'c' is not supported (only ms, h, d)");
  EXPECT_EQ(p.errors[1].reason, StatsdReject::kType);
}

TEST(Statsd, EmptyPacketsAndBlankLinesAreSilent) {
  EXPECT_TRUE(ParseStatsdPacket("").samples.empty());
  EXPECT_TRUE(ParseStatsdPacket("\n\n  \n").errors.empty());
  EXPECT_EQ(ParseStatsdPacket("a:1|ms").samples.size(), 1u);  // no trailing newline
}

}  // namespace
}  // namespace trailmap
