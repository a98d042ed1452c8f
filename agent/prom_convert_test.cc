#include "agent/prom_convert.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>

#include "prometheus/remote.pb.h"

namespace trailmap {
namespace {

constexpr int64_t kNow = 1'700'000'000;
constexpr int64_t kMs = kNow * 1000;

PromConvertOptions Options() {
  PromConvertOptions o;
  o.clock = [] { return kNow; };
  return o;
}

prometheus::TimeSeries* Series(prometheus::WriteRequest* r, const std::string& name,
                               std::vector<std::pair<std::string, std::string>> labels) {
  prometheus::TimeSeries* ts = r->add_timeseries();
  prometheus::Label* n = ts->add_labels();
  n->set_name("__name__");
  n->set_value(name);
  for (const auto& [k, v] : labels) {
    prometheus::Label* l = ts->add_labels();
    l->set_name(k);
    l->set_value(v);
  }
  return ts;
}

void AddSample(prometheus::TimeSeries* ts, double value, int64_t ms) {
  prometheus::Sample* s = ts->add_samples();
  s->set_value(value);
  s->set_timestamp(ms);
}

// A classic histogram x_seconds with buckets 0.1, 0.5, +Inf holding these cumulative counts.
void Classic(prometheus::WriteRequest* r, int64_t ms, double b1, double b2, double inf, double sum,
             const std::string& instance = "web-1:9100") {
  const std::pair<std::string, std::string> common[] = {{"instance", instance}, {"job", "web"}};
  const double les[] = {0.1, 0.5};
  const char* le_text[] = {"0.1", "0.5", "+Inf"};
  const double values[] = {b1, b2, inf};
  for (int i = 0; i < 3; ++i) {
    AddSample(Series(r, "x_seconds_bucket", {common[0], common[1], {"le", le_text[i]}}), values[i],
              ms);
  }
  (void)les;
  AddSample(Series(r, "x_seconds_sum", {common[0], common[1]}), sum, ms);
  AddSample(Series(r, "x_seconds_count", {common[0], common[1]}), inf, ms);
}

uint64_t CountIn(const std::vector<PlacedValue>& values, uint64_t lo, uint64_t hi) {
  uint64_t n = 0;
  for (const PlacedValue& v : values) {
    if (v.value >= lo && v.value <= hi) n += v.count;
  }
  return n;
}

uint64_t Total(const std::vector<PlacedValue>& values) { return CountIn(values, 0, UINT64_MAX); }

TEST(PromConvert, ClassicHistogramBecomesTheIncreaseOfEachBucketPlacedWithinIt) {
  PromConverter c(Options());
  prometheus::WriteRequest first, second;
  Classic(&first, kMs - 15'000, 10, 20, 25, 5.0);
  Result<PromWrites> w = c.Convert(first);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_TRUE(w->histograms.empty());  // a baseline: remote write has no start time
  EXPECT_EQ(w->samples, 5u);
  Classic(&second, kMs, 13, 25, 31, 6.2);  // +3 in (0,0.1], +2 in (0.1,0.5], +1 above
  w = c.Convert(second);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_EQ(w->histograms.size(), 1u);
  const PromHistogramWrite& h = w->histograms[0];
  EXPECT_EQ(h.host, "web-1:9100");
  EXPECT_EQ(h.second, kNow);
  EXPECT_EQ(h.series, (SeriesDef{"x_seconds", MetricKind::kLatency, "ns", "job=web"}));
  EXPECT_EQ(Total(h.values), 6u);
  EXPECT_EQ(CountIn(h.values, 0, 100'000'000), 3u);
  EXPECT_EQ(CountIn(h.values, 100'000'001, 500'000'000), 2u);
  EXPECT_EQ(CountIn(h.values, 500'000'001, 1'000'000'000), 1u);
  uint64_t sum = 0;
  for (const PlacedValue& v : h.values) sum += v.value * v.count;
  EXPECT_EQ(sum, 1'200'000'000u);  // the increase of x_seconds_sum, exactly
  EXPECT_EQ(c.counters().histogram_events, 6u);
  EXPECT_EQ(c.counters().baselines, 4u);  // three buckets and the sum
}

TEST(PromConvert, ClassicBucketsSplitAcrossRequestsAreEmittedOnceAllHaveCome) {
  PromConverter c(Options());
  prometheus::WriteRequest base, part1, part2;
  Classic(&base, kMs - 15'000, 1, 2, 3, 1);
  ASSERT_TRUE(c.Convert(base).ok());
  prometheus::WriteRequest whole;
  Classic(&whole, kMs, 2, 4, 7, 2);
  // The first two buckets in one request, the +Inf bucket and the rest in the next.
  for (int i = 0; i < whole.timeseries_size(); ++i) {
    *(i < 2 ? part1 : part2).add_timeseries() = whole.timeseries(i);
  }
  Result<PromWrites> w = c.Convert(part1);
  ASSERT_TRUE(w.ok());
  EXPECT_TRUE(w->histograms.empty());
  w = c.Convert(part2);
  ASSERT_TRUE(w.ok());
  ASSERT_EQ(w->histograms.size(), 1u);
  EXPECT_EQ(Total(w->histograms[0].values), 4u);
  EXPECT_EQ(CountIn(w->histograms[0].values, 0, 100'000'000), 1u);
}

TEST(PromConvert, ASumOrCountBeforeTheBucketsNamesTheHistogramAllTheSame) {
  PromConverter c(Options());
  prometheus::WriteRequest a, b;
  Classic(&a, kMs - 15'000, 1, 2, 3, 1);
  Classic(&b, kMs, 2, 4, 7, 2);
  for (prometheus::WriteRequest* r : {&a, &b}) {  // _sum and _count first, as Prometheus may
    std::rotate(r->mutable_timeseries()->begin(), r->mutable_timeseries()->begin() + 3,
                r->mutable_timeseries()->end());
  }
  ASSERT_TRUE(c.Convert(a).ok());
  Result<PromWrites> w = c.Convert(b);
  ASSERT_TRUE(w.ok());
  ASSERT_EQ(w->histograms.size(), 1u);
  EXPECT_EQ(w->histograms[0].series,
            (SeriesDef{"x_seconds", MetricKind::kLatency, "ns", "job=web"}));
  EXPECT_EQ(Total(w->histograms[0].values), 4u);
}

TEST(PromConvert, ASumThatComesAfterItsBucketsWerePlacedIsNoIncompleteHistogram) {
  PromConverter c(Options());
  prometheus::WriteRequest base, buckets, sum, next;
  Classic(&base, kMs - 30'000, 1, 2, 3, 1);
  Classic(&next, kMs, 3, 6, 9, 3);
  prometheus::WriteRequest second;
  Classic(&second, kMs - 15'000, 2, 4, 6, 2);
  for (int i = 0; i < second.timeseries_size(); ++i) {
    *(i == 3 ? sum : buckets).add_timeseries() = second.timeseries(i);  // 3: _sum
  }
  for (prometheus::WriteRequest* r : {&base, &buckets, &sum, &next})
    ASSERT_TRUE(c.Convert(*r).ok());
  EXPECT_EQ(c.counters().incomplete, 0u);
  EXPECT_EQ(c.counters().histogram_events, 6u);
}

TEST(PromConvert, ACounterResetMakesTheNewValueTheIncrease) {
  PromConverter c(Options());
  prometheus::WriteRequest a, b, d;
  Classic(&a, kMs - 30'000, 10, 20, 30, 3);
  Classic(&b, kMs - 15'000, 1, 1, 2, 0.5);  // the process restarted
  ASSERT_TRUE(c.Convert(a).ok());
  Result<PromWrites> w = c.Convert(b);
  ASSERT_TRUE(w.ok());
  ASSERT_EQ(w->histograms.size(), 1u);
  EXPECT_EQ(Total(w->histograms[0].values), 2u);
  EXPECT_EQ(CountIn(w->histograms[0].values, 0, 100'000'000), 1u);
  EXPECT_EQ(c.counters().resets, 4u);
  // Counters too.
  AddSample(Series(&d, "requests_total", {{"instance", "h"}}), 100, kMs - 2000);
  AddSample(Series(&d, "requests_total", {{"instance", "h"}}), 130, kMs - 1000);
  AddSample(Series(&d, "requests_total", {{"instance", "h"}}), 4, kMs);
  w = c.Convert(d);
  ASSERT_TRUE(w.ok());
  ASSERT_EQ(w->scalars.size(), 2u);
  EXPECT_EQ(w->scalars[0].series, (SeriesDef{"requests_total", MetricKind::kScalar, "/s", ""}));
  EXPECT_EQ(w->scalars[0].second, kNow - 1);
  EXPECT_EQ(w->scalars[0].value, 30);
  EXPECT_EQ(w->scalars[1].value, 4);
}

TEST(PromConvert, BucketsThatAreNotCumulativeRefuseTheWholeRequestAndChangeNothing) {
  PromConverter c(Options());
  prometheus::WriteRequest good, bad;
  AddSample(Series(&bad, "up", {{"instance", "h"}}), 1, kMs);
  Classic(&bad, kMs, 10, 5, 12, 1);
  Result<PromWrites> w = c.Convert(bad);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(w.status().message(),
            "series x_seconds_bucket at 1700000000000 ms: buckets are not cumulative: le=0.5 "
            "holds 5, less than le=0.1's 10");
  EXPECT_EQ(c.remembered_series(), 0u);
  EXPECT_EQ(c.counters().requests, 0u);
  // A count that is not whole, a missing host label, too many labels.
  prometheus::WriteRequest half, nohost, wide;
  AddSample(Series(&half, "y_bucket", {{"instance", "h"}, {"le", "1"}}), 1.5, kMs);
  EXPECT_EQ(c.Convert(half).status().message(),
            "series y_bucket{} le=1: bucket count 1.5 is not a whole number >= 0");
  AddSample(Series(&nohost, "up", {{"job", "j"}}), 1, kMs);
  EXPECT_EQ(c.Convert(nohost).status().message(), "timeseries 0: series up has no instance label");
  std::vector<std::pair<std::string, std::string>> many = {{"instance", "h"}};
  for (int i = 0; i < 17; ++i) many.emplace_back("l" + std::to_string(i), "v");
  AddSample(Series(&wide, "up", many), 1, kMs);
  EXPECT_EQ(c.Convert(wide).status().message(),
            "timeseries 0: series up has 17 labels besides __name__, instance and le (at most 16)");
  EXPECT_EQ(c.remembered_series(), 0u);
}

TEST(PromConvert, AHostTheTokenMayNotWriteRefusesTheRequest) {
  PromConverter c(Options());
  prometheus::WriteRequest r;
  AddSample(Series(&r, "up", {{"instance", "web-1"}}), 1, kMs);
  AddSample(Series(&r, "up", {{"instance", "db-1"}}), 1, kMs);
  Result<PromWrites> w = c.Convert(r, [](std::string_view host) {
    return host.starts_with("web") ? Status::Ok()
                                   : Status::PermissionDenied("may not write " + std::string(host));
  });
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), Status::Code::kPermissionDenied);
  EXPECT_EQ(w.status().message(), "may not write db-1");
  EXPECT_EQ(c.remembered_series(), 0u);
}

TEST(PromConvert, GaugesAreValuesStaleMarkersAndOldSamplesAreSkipped) {
  PromConverter c(Options());
  prometheus::WriteRequest r;
  prometheus::TimeSeries* up = Series(&r, "node:load1", {{"instance", "h"}, {"host", "x y"}});
  AddSample(up, 0.5, kMs);
  AddSample(up, std::bit_cast<double>(uint64_t{0x7ff0000000000002}), kMs + 1000);
  AddSample(up, 2, kMs - 4 * 3600 * 1000);
  Result<PromWrites> w = c.Convert(r);
  ASSERT_TRUE(w.ok());
  ASSERT_EQ(w->scalars.size(), 1u);
  EXPECT_EQ(w->scalars[0].series,
            (SeriesDef{"node.load1", MetricKind::kScalar, "1", "label_host=x_y"}));
  EXPECT_EQ(w->scalars[0].value, 0.5);
  EXPECT_EQ(c.counters().stale, 1u);
  EXPECT_EQ(c.counters().out_of_window, 1u);
}

prometheus::Histogram* Native(prometheus::TimeSeries* ts, int64_t ms, int32_t schema, uint64_t zero,
                              int32_t offset, std::vector<int64_t> deltas, double sum) {
  prometheus::Histogram* h = ts->add_histograms();
  h->set_schema(schema);
  h->set_zero_threshold(1e-9);
  h->set_zero_count_int(zero);
  uint64_t count = zero, running = 0;  // unsigned: hostile deltas wrap here, not in the code
  for (int64_t d : deltas) count += running += static_cast<uint64_t>(d);
  h->set_count_int(count);
  h->set_sum(sum);
  h->set_timestamp(ms);
  prometheus::BucketSpan* span = h->add_positive_spans();
  span->set_offset(offset);
  span->set_length(static_cast<uint32_t>(deltas.size()));
  for (int64_t d : deltas) h->add_positive_deltas(d);
  return h;
}

TEST(PromConvert, NativeHistogramsByTheirExactSchemaZeroBucketAndNegativeBuckets) {
  PromConverter c(Options());
  prometheus::WriteRequest a, b;
  // Schema 0: bucket i holds (2^(i-1), 2^i]; buckets 1, 2, 3 = (1,2], (2,4], (4,8] seconds.
  Native(Series(&a, "rpc_seconds", {{"instance", "h"}}), kMs - 1000, 0, 1, 1, {2, 0, -1}, 10);
  ASSERT_TRUE(c.Convert(a).ok());
  prometheus::Histogram* h =
      Native(Series(&b, "rpc_seconds", {{"instance", "h"}}), kMs, 0, 3, 1, {5, -2, -2}, 30);
  // Two negative observations in (-4, -2].
  prometheus::BucketSpan* neg = h->add_negative_spans();
  neg->set_offset(2);
  neg->set_length(1);
  h->add_negative_deltas(2);
  h->set_count_int(h->count_int() + 2);
  Result<PromWrites> w = c.Convert(b);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_EQ(w->histograms.size(), 2u);
  const std::vector<PlacedValue>& pos = w->histograms[0].values;
  EXPECT_EQ(w->histograms[0].series.metric, "rpc_seconds");
  EXPECT_EQ(Total(pos), 2u + 3 + 1 + 0);  // zero 3-1, (1,2] 5-2, (2,4] 3-2, (4,8] 1-1
  EXPECT_EQ(CountIn(pos, 0, 1), 2u);
  EXPECT_EQ(CountIn(pos, 1'000'000'000, 2'000'000'000), 3u);
  EXPECT_EQ(CountIn(pos, 2'000'000'001, 4'000'000'000), 1u);
  EXPECT_EQ(w->histograms[1].series.metric, "rpc_seconds.negative");
  EXPECT_EQ(CountIn(w->histograms[1].values, 2'000'000'000, 4'000'000'000), 2u);
  EXPECT_EQ(Total(w->histograms[1].values), 2u);
  // Schema 3: bucket 1 is (1, 2^(1/8)].
  double lo = 0, hi = 0;
  NativeBucketBounds(3, 1, &lo, &hi);
  EXPECT_EQ(lo, 1);
  EXPECT_DOUBLE_EQ(hi, std::pow(2.0, 0.125));
}

TEST(PromConvert, NativeCustomBucketsAreClassicBoundsAndSpansThatDoNotMatchAreRefused) {
  PromConverter c(Options());
  prometheus::WriteRequest a, b;
  prometheus::Histogram* h =
      Native(Series(&a, "q_bytes", {{"instance", "h"}}), kMs - 1000, -53, 0, 0, {1, 1, 1}, 100);
  for (double v : {100.0, 1000.0}) h->add_custom_values(v);
  ASSERT_TRUE(c.Convert(a).ok());
  h = Native(Series(&b, "q_bytes", {{"instance", "h"}}), kMs, -53, 0, 0, {4, -2, 3}, 2600);
  for (double v : {100.0, 1000.0}) h->add_custom_values(v);
  Result<PromWrites> w = c.Convert(b);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_EQ(w->histograms.size(), 1u);
  const std::vector<PlacedValue>& v = w->histograms[0].values;
  EXPECT_EQ(w->histograms[0].series, (SeriesDef{"q_bytes", MetricKind::kSize, "B", ""}));
  EXPECT_EQ(CountIn(v, 0, 100), 3u);      // 4 - 1
  EXPECT_EQ(CountIn(v, 101, 1000), 0u);   // 2 - 2
  EXPECT_EQ(CountIn(v, 1001, 2000), 2u);  // 5 - 3, above the last bound
  prometheus::WriteRequest bad;
  h = Native(Series(&bad, "q_bytes", {{"instance", "h"}}), kMs, 0, 0, 0, {1, 1}, 1);
  h->mutable_positive_spans(0)->set_length(3);
  EXPECT_EQ(c.Convert(bad).status().message(),
            "series q_bytes{} at 1700000000000 ms: positive spans cover 3 buckets, 2 are given");
  h->mutable_positive_spans(0)->set_length(2);
  h->set_schema(9);
  EXPECT_EQ(c.Convert(bad).status().message(),
            "series q_bytes{} at 1700000000000 ms: schema 9 is not one of -4..8 or -53 (custom "
            "buckets)");
}

TEST(PromConvert, ExtremeTimesAndBucketIndexesAreSkippedOrRefusedWithoutOverflow) {
  PromConverter c(Options());
  prometheus::WriteRequest r;
  prometheus::TimeSeries* g = Series(&r, "g", {{"instance", "h"}});
  AddSample(g, 1, INT64_MIN);
  AddSample(g, 1, INT64_MAX);
  prometheus::TimeSeries* n = Series(&r, "n_seconds", {{"instance", "h"}});
  Native(n, INT64_MIN, 8, 0, INT32_MIN, {1}, 0);
  Result<PromWrites> w = c.Convert(r);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_TRUE(w->scalars.empty());
  EXPECT_EQ(c.counters().out_of_window, 3u);
  // The same native series at the lowest index, then a coarser schema: downscaled, not overflowed.
  prometheus::WriteRequest a, b;
  Native(Series(&a, "n_seconds", {{"instance", "h"}}), kMs - 1000, 8, 0, INT32_MIN, {1}, 0);
  Native(Series(&b, "n_seconds", {{"instance", "h"}}), kMs, 0, 0, INT32_MIN / 256, {2}, 0);
  ASSERT_TRUE(c.Convert(a).ok());
  EXPECT_TRUE(c.Convert(b).ok());
  // Deltas that would overflow a running count, counts that would overflow their sum.
  prometheus::WriteRequest big, many;
  Native(Series(&big, "n_seconds", {{"instance", "h"}}), kMs, 0, 0, 0, {INT64_MAX, 1}, 0);
  EXPECT_EQ(c.Convert(big).status().message(),
            "series n_seconds{} at 1700000000000 ms: positive bucket 1 count is out of range");
  prometheus::Histogram* h =
      Native(Series(&many, "n_seconds", {{"instance", "h"}}), kMs, 0, 0, 0, {INT64_MAX, 0, 0}, 0);
  h->set_count_int(UINT64_MAX);
  EXPECT_EQ(c.Convert(many).status().message(),
            "series n_seconds{} at 1700000000000 ms: buckets hold more than 2^64 events");
  prometheus::WriteRequest overlap;
  h = Native(Series(&overlap, "n_seconds", {{"instance", "h"}}), kMs, 0, 0, 0, {1, 0}, 0);
  h->mutable_positive_spans(0)->set_length(1);
  prometheus::BucketSpan* back = h->add_positive_spans();
  back->set_offset(-1);
  back->set_length(1);
  EXPECT_EQ(c.Convert(overlap).status().message(),
            "series n_seconds{} at 1700000000000 ms: positive spans overlap (a later offset < 0)");
}

TEST(PromConvert, RememberedSeriesAreBounded) {
  PromConvertOptions o = Options();
  o.max_series = 10;
  PromConverter c(o);
  prometheus::WriteRequest r;
  for (int i = 0; i < 25; ++i) {
    AddSample(Series(&r, "c_total", {{"instance", "h" + std::to_string(i)}}), 1, kMs);
  }
  ASSERT_TRUE(c.Convert(r).ok());
  EXPECT_EQ(c.remembered_series(), 10u);
  EXPECT_EQ(c.counters().evicted_series, 15u);
}

}  // namespace
}  // namespace trailmap
