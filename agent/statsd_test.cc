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

// A reserved key is counted on the sample, and the first one named for the log.
TEST(Statsd, ReservedTagKeysAreRenamedAndCounted) {
  EXPECT_TRUE(IsReservedFieldName("host"));
  EXPECT_TRUE(IsReservedFieldName("value"));
  EXPECT_TRUE(IsReservedFieldName("latency"));
  EXPECT_TRUE(IsReservedFieldName("size"));
  EXPECT_TRUE(IsReservedFieldName("overflow"));
  EXPECT_FALSE(IsReservedFieldName("hostname"));
  EXPECT_FALSE(IsReservedFieldName("Host"));
  Result<StatsdSample> s = ParseStatsdLine("x:1|ms|#op:r,size:9,host:db-7");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->renamed_tags, 2u);
  EXPECT_EQ(s->renamed, "size");
  EXPECT_EQ(s->fields, "op=r,tag_host=db-7,tag_size=9");
  s = ParseStatsdLine("x:1|ms|#op:r");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->renamed_tags, 0u);
}

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
      // Reserved keys are kept as tag_KEY (the host dimension, the value, the overflow series).
      {"db.query:1|ms|#host:db-7", "db.query", 1'000'000, 1, "tag_host=db-7", ""},
      {"db.query:1|ms|#op:r,host:db-7,latency:slow", "db.query", 1'000'000, 1,
       "op=r,tag_host=db-7,tag_latency=slow", ""},
      {"db.query:1|ms|#value,size:9,overflow:true", "db.query", 1'000'000, 1,
       "tag_overflow=true,tag_size=9,tag_value=true", ""},
      {"db.query:1|ms|#hostname:a,Host:b,tag_host:c", "db.query", 1'000'000, 1,
       "Host=b,hostname=a,tag_host=c", ""},
      {"db.query:1|ms|#host:a,tag_host:b", "", 0, 0, "", "tags: field 'tag_host' given twice"},
      // 2^-40: the smallest rate, standing for kMaxItemCount events.
      {"x:1|ms|@0.0000000000009094947017729282379150390625", "x", 1'000'000, 1'099'511'627'776, "",
       ""},
      // Refused, with the exact reason.
      {"db.query:-3|ms", "", 0, 0, "", "value '-3' is negative"},
      {"db.query:1|x", "", 0, 0, "", "type 'x' is not supported (only ms, h, d, c, g, s)"},
      {"db.query:1|", "", 0, 0, "", "type '' is not supported (only ms, h, d, c, g, s)"},
      {"db.query:nan|ms", "", 0, 0, "", "value 'nan' is not a number"},
      {"db.query:abc|ms", "", 0, 0, "", "value 'abc' is not a number"},
      {"db.query:|ms", "", 0, 0, "", "value '' is not a number"},
      {"db.query:1:x|ms", "", 0, 0, "", "value 'x' is not a number"},
      {"db.query:1::2|ms", "", 0, 0, "", "value '' is not a number"},
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
      {"db.query:1|ms|x:abc", "", 0, 0, "", "section 'x:abc' is not a first @rate, #tags, T or c:"},
      {"db.query:1|ms|@0.5|@0.5", "", 0, 0, "",
       "section '@0.5' is not a first @rate, #tags, T or c:"},
      {"db.query:1|ms|T1|T1", "", 0, 0, "", "section 'T1' is not a first @rate, #tags, T or c:"},
      {"db.query:1|ms|T-5", "", 0, 0, "", "timestamp 'T-5' must be unix seconds"},
      {"db.query:1|ms|T", "", 0, 0, "", "timestamp 'T' must be unix seconds"},
      {"db.query:1|ms|T0", "", 0, 0, "", "timestamp 'T0' must be unix seconds"},
      {"db.query:1|ms|T17e8", "", 0, 0, "", "timestamp 'T17e8' must be unix seconds"},
      {"db.query:1|ms|T1099511627777", "", 0, 0, "",
       "timestamp 'T1099511627777' must be unix seconds"},
      {"db.query:1|ms|c:abc", "db.query", 1'000'000, 1, "", ""},
      {"db.query:1|ms|T1700000000|c:abc|#a:b", "db.query", 1'000'000, 1, "a=b", ""},
  };
  for (const LineCase& c : cases) {
    Result<StatsdSample> r = ParseStatsdLine(c.line);
    if (c.reason.empty()) {
      ASSERT_TRUE(r.ok()) << Describe(c) << ": " << r.status().ToString();
      EXPECT_EQ(r->metric, c.metric) << Describe(c);
      ASSERT_EQ(r->values.size(), 1u) << Describe(c);
      EXPECT_EQ(*StatsdHistogramValue(r->values[0], StatsdUnit::kMilliseconds), c.value_ns)
          << Describe(c);
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
      {"x", StatsdReject::kSyntax},
      {"x:1|q", StatsdReject::kType},
      {"x:1|ms|Tx", StatsdReject::kTimestamp},
      {"x:-1|ms", StatsdReject::kValue},
      {"x y:1|ms", StatsdReject::kName},
      {"x:1|ms|#,", StatsdReject::kTag},
      {"x:1|ms|@2", StatsdReject::kRate},
      {"x:1|ms|@0.0000000000000000001", StatsdReject::kRate},
  };
  for (const auto& [line, want] : cases) {
    StatsdReject got = StatsdReject::kSyntax;
    EXPECT_FALSE(ParseStatsdLine(line, &got).ok()) << line;
    EXPECT_EQ(StatsdRejectName(got), std::string(StatsdRejectName(want))) << line;
  }
}

TEST(Statsd, PacketKeepsGoodLinesAndNumbersBadOnes) {
  const StatsdPacket p = ParseStatsdPacket("a:1|ms\nb:-3|ms\n\r\nc:2|d|#op:r\r\nd:1|q\n");
  ASSERT_EQ(p.samples.size(), 2u);
  EXPECT_EQ(p.samples[0].metric, "a");
  EXPECT_EQ(p.samples[1].metric, "c");
  EXPECT_EQ(p.samples[1].fields, "op=r");
  ASSERT_EQ(p.errors.size(), 2u);
  EXPECT_EQ(p.errors[0].message, "line 2: value '-3' is negative");
  EXPECT_EQ(p.errors[0].line, 2u);
  EXPECT_EQ(p.errors[1].message, "line 5: type 'q' is not supported (only ms, h, d, c, g, s)");
  EXPECT_EQ(p.errors[1].reason, StatsdReject::kType);
}

TEST(Statsd, EmptyPacketsAndBlankLinesAreSilent) {
  EXPECT_TRUE(ParseStatsdPacket("").samples.empty());
  EXPECT_TRUE(ParseStatsdPacket("\n\n  \n").errors.empty());
  EXPECT_EQ(ParseStatsdPacket("a:1|ms").samples.size(), 1u);  // no trailing newline
}

TEST(Statsd, CountersGaugesAndSets) {
  Result<StatsdSample> c = ParseStatsdLine("hits:3|c|@0.25|#route:/a");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->type, StatsdType::kCounter);
  EXPECT_EQ(c->values, std::vector<double>{3});
  EXPECT_EQ(c->rate, 0.25);
  EXPECT_EQ(c->fields, "route=/a");
  Result<StatsdSample> dec = ParseStatsdLine("hits:-1.5|c");
  ASSERT_TRUE(dec.ok());
  EXPECT_EQ(dec->values, std::vector<double>{-1.5});

  Result<StatsdSample> g = ParseStatsdLine("queue:12|g");
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->type, StatsdType::kGauge);
  EXPECT_FALSE(g->gauge_delta);
  EXPECT_EQ(g->values, std::vector<double>{12});
  Result<StatsdSample> up = ParseStatsdLine("queue:+4:-1|g");
  ASSERT_TRUE(up.ok());
  EXPECT_TRUE(up->gauge_delta);
  EXPECT_EQ(up->values, (std::vector<double>{4, -1}));
  EXPECT_EQ(ParseStatsdLine("queue:4:-1|g").status().message(),
            "gauge values '4:-1' mix absolute values and +/- deltas");
  EXPECT_EQ(ParseStatsdLine("queue:+x|g").status().message(), "value '+x' is not a number");
  EXPECT_EQ(ParseStatsdLine("queue:++1|g").status().message(), "value '++1' is not a number");
  EXPECT_EQ(ParseStatsdLine("hits:+1|c").status().message(), "value '+1' is not a number");
  EXPECT_EQ(ParseStatsdLine("hits:inf|c").status().message(), "value 'inf' is infinite");

  Result<StatsdSample> s = ParseStatsdLine("users:alice:bob|s|#a:b");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->type, StatsdType::kSet);
  EXPECT_EQ(s->members, (std::vector<std::string>{"alice", "bob"}));
  EXPECT_TRUE(s->values.empty());
  EXPECT_EQ(ParseStatsdLine("users:a::b|s").status().message(), "set member is empty");
}

TEST(Statsd, PackedValuesAndTimestamps) {
  Result<StatsdSample> d = ParseStatsdLine("lat:1:2.5:3|d|@0.5|T1700000000");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->type, StatsdType::kDistribution);
  EXPECT_EQ(d->values, (std::vector<double>{1, 2.5, 3}));
  EXPECT_EQ(d->count, 2u);
  EXPECT_EQ(d->timestamp, 1'700'000'000);
  EXPECT_EQ(ParseStatsdLine("lat:1:-2|h").status().message(), "value '-2' is negative");
}

TEST(Statsd, EventsAndServiceChecksAreUnsupportedNotErrors) {
  const StatsdPacket p =
      ParseStatsdPacket("_e{5,4}:title|text|#a:b\na:1|ms\n_sc|db.up|0|#a:b\n_e{bad\n_sc\n");
  EXPECT_EQ(p.unsupported, 3u);
  ASSERT_EQ(p.samples.size(), 1u);
  EXPECT_EQ(p.samples[0].line, 2u);
  ASSERT_EQ(p.errors.size(), 1u);  // "_sc" without its '|' is no service check
  EXPECT_EQ(p.errors[0].message, "line 5: no ':' between metric name and value");
}

TEST(Statsd, HistogramUnits) {
  EXPECT_EQ(*StatsdHistogramValue(1.5, StatsdUnit::kMilliseconds), 1'500'000u);
  EXPECT_EQ(*StatsdHistogramValue(1.5, StatsdUnit::kSeconds), 1'500'000'000u);
  EXPECT_EQ(*StatsdHistogramValue(1.5, StatsdUnit::kMicroseconds), 1'500u);
  EXPECT_EQ(*StatsdHistogramValue(7.4, StatsdUnit::kNanoseconds), 7u);
  EXPECT_EQ(*StatsdHistogramValue(1024.5, StatsdUnit::kBytes), 1'025u);
  EXPECT_EQ(*StatsdHistogramValue(2.4, StatsdUnit::kNone), 2u);
  EXPECT_EQ(StatsdHistogramValue(2e10, StatsdUnit::kSeconds).status().message(),
            "value 20000000000 is too large for unit s (at most 2^64 ns)");
  EXPECT_EQ(StatsdUnitKind(StatsdUnit::kBytes), MetricKind::kSize);
  EXPECT_EQ(std::string(StatsdUnitSeriesUnit(StatsdUnit::kNone)), "1");
  EXPECT_EQ(ParseStatsdUnit("bytes").status().message(),
            "unit 'bytes' is not ms, s, us, ns, B or none");
  EXPECT_EQ(*ParseStatsdUnit("B"), StatsdUnit::kBytes);
  const std::vector<StatsdUnitRule> rules = {{"http.*.bytes", StatsdUnit::kBytes},
                                             {"http.*", StatsdUnit::kSeconds},
                                             {"q?", StatsdUnit::kNone}};
  EXPECT_EQ(StatsdUnitFor("http.resp.bytes", rules), StatsdUnit::kBytes);
  EXPECT_EQ(StatsdUnitFor("http.latency", rules), StatsdUnit::kSeconds);
  EXPECT_EQ(StatsdUnitFor("q1", rules), StatsdUnit::kNone);
  EXPECT_EQ(StatsdUnitFor("q12", rules), StatsdUnit::kMilliseconds);
  EXPECT_EQ(StatsdUnitFor("db", {}), StatsdUnit::kMilliseconds);
}

}  // namespace
}  // namespace trailmap
