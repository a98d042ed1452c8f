#include "agent/otlp_convert.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "agent/agent_config.h"
#include "core/histogram.h"
#include "otlp/metrics_service.pb.h"

namespace trailmap {
namespace {

namespace pb = opentelemetry::proto;
using pb::metrics::v1::AGGREGATION_TEMPORALITY_CUMULATIVE;
using pb::metrics::v1::AGGREGATION_TEMPORALITY_DELTA;
using ::testing::HasSubstr;

constexpr int64_t kNow = 1'700'000'100;  // the test's clock
constexpr int64_t kStarted = 1'700'000'000;
constexpr uint64_t kNs = 1'000'000'000;

// What a take of the bucketizer holds, by "second metric fields".
struct Taken {
  std::map<std::string, Histogram> histograms;
  std::map<std::string, double> scalars;
  std::map<std::string, std::string> units;  // by "metric fields"
};

Taken TakeAll(Bucketizer* bucketizer) {
  Taken out;
  CompletedSeconds done = bucketizer->TakeAll();
  for (const SecondDelta& s : done.seconds) {
    for (const HistogramDelta& h : s.histograms) {
      const SeriesDef& def = done.series[h.series];
      Result<Histogram> decoded = Histogram::Decode(h.encoded);
      EXPECT_TRUE(decoded.ok());
      out.histograms[std::to_string(s.time) + " " + def.metric + " " + def.fields] = *decoded;
      out.units[def.metric + " " + def.fields] =
          std::string(MetricKindName(def.kind)) + " " + def.unit;
    }
    for (const ScalarValue& v : s.scalars) {
      const SeriesDef& def = done.series[v.series];
      out.scalars[std::to_string(s.time) + " " + def.metric + " " + def.fields] = v.value;
      out.units[def.metric + " " + def.fields] =
          std::string(MetricKindName(def.kind)) + " " + def.unit;
    }
  }
  return out;
}

class OtlpConvertTest : public ::testing::Test {
 protected:
  OtlpConvertTest() {
    OtlpConvertOptions options;
    options.host = "web-1";
    options.clock = [] { return kNow; };
    options.started = kStarted;
    converter_ = std::make_unique<OtlpConverter>(&bucketizer_, options);
  }

  // A request of one resource (service.name=shop, host.name=web-1, process.pid=7) and one metric.
  pb::metrics::v1::Metric* NewMetric(const std::string& name, const std::string& unit) {
    auto* rm = request_.add_resource_metrics();
    for (const auto& [k, v] : {std::pair{"service.name", "shop"}, {"host.name", "web-1"}}) {
      auto* kv = rm->mutable_resource()->add_attributes();
      kv->set_key(k);
      kv->mutable_value()->set_string_value(v);
    }
    auto* pid = rm->mutable_resource()->add_attributes();
    pid->set_key("process.pid");
    pid->mutable_value()->set_int_value(7);
    auto* metric = rm->add_scope_metrics()->add_metrics();
    metric->set_name(name);
    metric->set_unit(unit);
    return metric;
  }

  OtlpExportResult Send() {
    OtlpExportResult result = converter_->Convert(request_);
    request_.Clear();
    return result;
  }

  Bucketizer bucketizer_;
  std::unique_ptr<OtlpConverter> converter_;
  OtlpRequest request_;
};

TEST_F(OtlpConvertTest, ExponentialDeltaPointKeepsCountSumMinMax) {
  auto* metric = NewMetric("http.server.duration", "ms");
  metric->mutable_exponential_histogram()->set_aggregation_temporality(
      AGGREGATION_TEMPORALITY_DELTA);
  auto* p = metric->mutable_exponential_histogram()->add_data_points();
  p->set_time_unix_nano((kNow - 2) * kNs + 5);
  p->set_scale(0);  // (8, 16] x2, (16, 32] x1: the values 9, 12, 30
  p->mutable_positive()->set_offset(3);
  p->mutable_positive()->add_bucket_counts(2);
  p->mutable_positive()->add_bucket_counts(1);
  p->set_count(3);
  p->set_sum(51);
  p->set_min(9);
  p->set_max(30);
  auto* route = p->add_attributes();
  route->set_key("http.route");
  route->mutable_value()->set_string_value("/api x");  // a space: rewritten
  const OtlpExportResult result = Send();
  EXPECT_EQ(result.accepted, 1u);
  EXPECT_EQ(result.rejected, 0u);
  EXPECT_EQ(result.error_message, "");
  const Taken taken = TakeAll(&bucketizer_);
  const std::string fields = "http.route=/api_x,service.name=shop";
  ASSERT_EQ(taken.histograms.count("1700000098 http.server.duration " + fields), 1u);
  const Histogram& h = taken.histograms.at("1700000098 http.server.duration " + fields);
  EXPECT_EQ(h.count(), 3u);
  EXPECT_TRUE(h.sum() == 51'000'000);
  EXPECT_EQ(h.min(), 9'000'000u);
  EXPECT_EQ(h.max(), 30'000'000u);
  // The middle event at sqrt(9 * 16) ms = 12 ms, which the sum confirms.
  EXPECT_EQ(h.BucketCount(BucketIndex(12'000'000)), 1u);
  EXPECT_EQ(taken.units.at("http.server.duration " + fields), "latency ns");
  EXPECT_EQ(converter_->counters().attributes_rewritten, 1u);
}

TEST_F(OtlpConvertTest, CumulativeHistogramBecomesDeltasAndDetectsAReset) {
  const auto point = [this](uint64_t start, int64_t second, std::vector<uint64_t> counts,
                            double sum, double min, double max) {
    auto* metric = NewMetric("db.latency", "s");
    auto* hist = metric->mutable_histogram();
    hist->set_aggregation_temporality(AGGREGATION_TEMPORALITY_CUMULATIVE);
    auto* p = hist->add_data_points();
    p->set_start_time_unix_nano(start);
    p->set_time_unix_nano(static_cast<uint64_t>(second) * kNs);
    p->add_explicit_bounds(0.010);
    p->add_explicit_bounds(0.100);
    uint64_t count = 0;
    for (uint64_t c : counts) p->add_bucket_counts(c), count += c;
    p->set_count(count);
    p->set_sum(sum);
    p->set_min(min);
    p->set_max(max);
    return Send();
  };
  const uint64_t start = (kStarted + 1) * kNs;  // after the agent started: counts whole
  EXPECT_EQ(point(start, kNow - 3, {1, 2, 0}, 0.055, 0.005, 0.030).accepted, 1u);  // 5, 20, 30 ms
  // Then 40 ms and 150 ms more: the delta is (10, 100] x1 and (100, +inf) x1, sum 190 ms; the
  // min did not move (not this interval's), the max did (150 ms, exact).
  EXPECT_EQ(point(start, kNow - 2, {1, 3, 1}, 0.245, 0.005, 0.150).accepted, 1u);
  // A later start: a reset, the point itself is the delta.
  EXPECT_EQ(point(start + 50 * kNs, kNow - 1, {1, 0, 0}, 0.002, 0.002, 0.002).accepted, 1u);
  const Taken taken = TakeAll(&bucketizer_);
  const Histogram& first = taken.histograms.at("1700000097 db.latency service.name=shop");
  EXPECT_EQ(first.count(), 3u);
  EXPECT_TRUE(first.sum() == 55'000'000);
  EXPECT_EQ(first.min(), 5'000'000u);
  EXPECT_EQ(first.max(), 30'000'000u);
  const Histogram& second = taken.histograms.at("1700000098 db.latency service.name=shop");
  EXPECT_EQ(second.count(), 2u);
  EXPECT_TRUE(second.sum() == 190'000'000);
  EXPECT_EQ(second.max(), 150'000'000u);
  EXPECT_EQ(second.min(), 40'000'000u);  // 190 - 150: the sum places the other event exactly
  const Histogram& third = taken.histograms.at("1700000099 db.latency service.name=shop");
  EXPECT_EQ(third.count(), 1u);
  EXPECT_EQ(third.min(), 2'000'000u);
  EXPECT_EQ(converter_->counters().resets, 1u);
  EXPECT_EQ(converter_->counters().baselines, 0u);
}

TEST_F(OtlpConvertTest, CumulativeExponentialSubtractsAcrossADownscale) {
  const auto point = [this](int64_t second, int32_t scale, std::vector<uint64_t> counts, double sum,
                            double max) {
    auto* metric = NewMetric("rpc.duration", "s");
    auto* hist = metric->mutable_exponential_histogram();
    hist->set_aggregation_temporality(AGGREGATION_TEMPORALITY_CUMULATIVE);
    auto* p = hist->add_data_points();
    p->set_start_time_unix_nano((kStarted + 1) * kNs);
    p->set_time_unix_nano(static_cast<uint64_t>(second) * kNs);
    p->set_scale(scale);
    uint64_t count = 0;
    for (uint64_t c : counts) p->mutable_positive()->add_bucket_counts(c), count += c;
    p->set_count(count);
    p->set_sum(sum);
    p->set_min(1.2);
    p->set_max(max);
    return Send();
  };
  // 1.2 s and 1.6 s at scale 1: (1, 1.414] and (1.414, 2].
  EXPECT_EQ(point(kNow - 2, 1, {1, 1}, 2.8, 1.6).accepted, 1u);
  // Then 3.5 s: the SDK halves the scale to cover (2, 4]; the old buckets merge into (1, 2].
  EXPECT_EQ(point(kNow - 1, 0, {2, 1}, 6.3, 3.5).accepted, 1u);
  const Taken taken = TakeAll(&bucketizer_);
  const Histogram& delta = taken.histograms.at("1700000099 rpc.duration service.name=shop");
  EXPECT_EQ(delta.count(), 1u);
  EXPECT_EQ(delta.min(), 3'500'000'000u);  // the max moved: exact
  EXPECT_TRUE(delta.sum() == 3'500'000'000u);
  EXPECT_EQ(converter_->counters().resets, 0u);
}

TEST_F(OtlpConvertTest, FirstCumulativePointFromBeforeTheAgentIsABaseline) {
  auto* metric = NewMetric("jobs", "1");
  metric->mutable_sum()->set_aggregation_temporality(AGGREGATION_TEMPORALITY_CUMULATIVE);
  metric->mutable_sum()->set_is_monotonic(true);
  auto* p = metric->mutable_sum()->add_data_points();
  p->set_start_time_unix_nano((kStarted - 60) * kNs);  // an earlier agent may have shipped it
  p->set_time_unix_nano((kNow - 5) * kNs);
  p->set_as_int(1000);
  EXPECT_EQ(Send().accepted, 1u);
  const auto more = [this](int64_t second, int64_t value) {
    auto* m = NewMetric("jobs", "1");
    m->mutable_sum()->set_aggregation_temporality(AGGREGATION_TEMPORALITY_CUMULATIVE);
    m->mutable_sum()->set_is_monotonic(true);
    auto* q = m->mutable_sum()->add_data_points();
    q->set_start_time_unix_nano((kStarted - 60) * kNs);
    q->set_time_unix_nano(static_cast<uint64_t>(second) * kNs + 1000);
    q->set_as_int(value);
    Send();
  };
  more(kNow - 4, 1015);
  more(kNow - 3, 1017);  // two points in one second add up: 2 + 3
  more(kNow - 3, 1017);  // sent again (an exporter's retry): nothing more
  auto* q = NewMetric("jobs", "1");
  q->mutable_sum()->set_aggregation_temporality(AGGREGATION_TEMPORALITY_CUMULATIVE);
  q->mutable_sum()->set_is_monotonic(true);
  auto* r = q->mutable_sum()->add_data_points();
  r->set_start_time_unix_nano((kStarted - 60) * kNs);
  r->set_time_unix_nano((kNow - 3) * kNs + 5000);
  r->set_as_int(1020);
  Send();
  const Taken taken = TakeAll(&bucketizer_);
  EXPECT_EQ(taken.scalars.count("1700000095 jobs service.name=shop"), 0u);
  EXPECT_EQ(taken.scalars.at("1700000096 jobs service.name=shop"), 15);
  EXPECT_EQ(taken.scalars.at("1700000097 jobs service.name=shop"), 5);
  EXPECT_EQ(taken.units.at("jobs service.name=shop"), "scalar /s");
  EXPECT_EQ(converter_->counters().baselines, 1u);
}

TEST_F(OtlpConvertTest, GaugesAndUpDownSums) {
  auto* gauge = NewMetric("queue.bytes", "By");
  auto* g = gauge->mutable_gauge()->add_data_points();
  g->set_time_unix_nano(kNow * kNs);
  g->set_as_double(3.5);
  auto* updown = NewMetric("pool.size", "{connection}");
  updown->mutable_sum()->set_aggregation_temporality(AGGREGATION_TEMPORALITY_DELTA);
  for (int change : {5, -2}) {
    auto* p = updown->mutable_sum()->add_data_points();
    p->set_time_unix_nano(kNow * kNs);
    p->set_as_int(change);
  }
  EXPECT_EQ(Send().accepted, 3u);
  const Taken taken = TakeAll(&bucketizer_);
  EXPECT_EQ(taken.scalars.at("1700000100 queue.bytes service.name=shop"), 3.5);
  EXPECT_EQ(taken.units.at("queue.bytes service.name=shop"), "scalar B");
  EXPECT_EQ(taken.scalars.at("1700000100 pool.size service.name=shop"), 3);
}

TEST_F(OtlpConvertTest, BadPointsAreRefusedAloneAndNamed) {
  auto* gauge = NewMetric("temp", "Cel");
  auto* nan = gauge->mutable_gauge()->add_data_points();
  nan->set_time_unix_nano(kNow * kNs);
  nan->set_as_double(std::nan(""));
  auto* old = gauge->mutable_gauge()->add_data_points();
  old->set_time_unix_nano((kNow - 700) * kNs);
  old->set_as_double(1);
  auto* good = gauge->mutable_gauge()->add_data_points();
  good->set_time_unix_nano(kNow * kNs);
  good->set_as_double(21.5);
  auto* hist = NewMetric("size", "By")->mutable_histogram();
  hist->set_aggregation_temporality(AGGREGATION_TEMPORALITY_DELTA);
  auto* mismatch = hist->add_data_points();
  mismatch->add_explicit_bounds(10);
  mismatch->add_bucket_counts(1);
  mismatch->add_bucket_counts(1);
  mismatch->set_count(3);
  auto* exp = NewMetric("delay", "ms")->mutable_exponential_histogram();
  exp->set_aggregation_temporality(AGGREGATION_TEMPORALITY_DELTA);
  auto* negative = exp->add_data_points();
  negative->mutable_negative()->add_bucket_counts(1);
  negative->set_count(1);
  NewMetric("rpc/latency", "ms")->mutable_summary()->add_data_points();
  const OtlpExportResult result = Send();
  EXPECT_EQ(result.accepted, 1u);
  EXPECT_EQ(result.rejected, 5u);
  EXPECT_EQ(result.error_message,
            "metric 'temp' point 1: value nan is not finite; "
            "metric 'temp' point 2: time_unix_nano 1699999400000000000 is 700 s in the past (at "
            "most 600); "
            "metric 'size' point 1: bucket counts add up to 2, the count is 3; "
            "metric 'delay' point 1: negative values (in negative buckets): trailmap histograms "
            "hold values >= 0; "
            "metric 'rpc/latency' point 1: metric name 'rpc/latency' has a character outside "
            "[A-Za-z0-9_.-]");
  const OtlpCounters c = converter_->counters();
  EXPECT_EQ(c.points_rejected, 5u);
  EXPECT_EQ(c.rejected_by_reason[static_cast<size_t>(OtlpReject::kValue)], 2u);
  EXPECT_EQ(c.rejected_by_reason[static_cast<size_t>(OtlpReject::kTime)], 1u);
  EXPECT_EQ(c.rejected_by_reason[static_cast<size_t>(OtlpReject::kShape)], 1u);
  EXPECT_EQ(c.rejected_by_reason[static_cast<size_t>(OtlpReject::kName)], 1u);
  EXPECT_EQ(TakeAll(&bucketizer_).scalars.at("1700000100 temp service.name=shop"), 21.5);
}

TEST_F(OtlpConvertTest, CumulativeStateIsBoundedAndEvictionIsCounted) {
  OtlpConvertOptions options;
  options.clock = [] { return kNow; };
  options.started = kStarted;
  options.max_cumulative_series = 2;
  OtlpConverter small(&bucketizer_, options);
  for (int i = 0; i < 5; ++i) {
    auto* m = NewMetric("c" + std::to_string(i), "1");
    m->mutable_sum()->set_aggregation_temporality(AGGREGATION_TEMPORALITY_CUMULATIVE);
    m->mutable_sum()->set_is_monotonic(true);
    auto* p = m->mutable_sum()->add_data_points();
    p->set_start_time_unix_nano((kStarted + 1) * kNs);
    p->set_time_unix_nano((kNow - 10 + i) * kNs);
    p->set_as_int(1);
  }
  EXPECT_EQ(small.Convert(request_).accepted, 5u);
  EXPECT_EQ(small.cumulative_series(), 2u);
  EXPECT_EQ(small.counters().evicted_series, 3u);
  // c2 evicted c0, whose points up to kNow - 10 may be shipped: from then on a first point that
  // started before that is only a baseline (c3, c4), whichever series it is.
  EXPECT_EQ(small.counters().baselines, 2u);
  // c0 again, same start: it was forgotten, and points up to kNow - 8 may be shipped: a baseline.
  request_.Clear();
  auto* m = NewMetric("c0", "1");
  m->mutable_sum()->set_aggregation_temporality(AGGREGATION_TEMPORALITY_CUMULATIVE);
  m->mutable_sum()->set_is_monotonic(true);
  auto* p = m->mutable_sum()->add_data_points();
  p->set_start_time_unix_nano((kStarted + 1) * kNs);
  p->set_time_unix_nano(kNow * kNs);
  p->set_as_int(4);
  small.Convert(request_);
  EXPECT_EQ(small.counters().baselines, 3u);
}

// [otlp] resource_fields in the agent's config chooses the resource attributes that
// become fields: k8s.pod.name kept, service.name (a default one, not listed) not.
TEST(OtlpConvert, ResourceFieldsFromTheAgentConfig) {
  AgentConfig config;
  ASSERT_TRUE(ParseAgentConfig("[otlp]\nresource_fields = [\"k8s.pod.name\", \"host.name\"]\n",
                               "agent.toml", &config)
                  .ok());
  Bucketizer bucketizer;
  OtlpConvertOptions options;
  options.host = "web-1";
  options.clock = [] { return kNow; };
  options.started = kStarted;
  options.resource_fields = *config.otlp_resource_fields;
  OtlpConverter converter(&bucketizer, options);
  OtlpRequest request;
  auto* rm = request.add_resource_metrics();
  for (const auto& [k, v] : {std::pair{"service.name", "shop"},
                             {"k8s.pod.name", "shop-7d9f-x2"},
                             {"host.name", "web-1"},
                             {"process.pid", "7"}}) {
    auto* kv = rm->mutable_resource()->add_attributes();
    kv->set_key(k);
    kv->mutable_value()->set_string_value(v);
  }
  auto* metric = rm->add_scope_metrics()->add_metrics();
  metric->set_name("queue.depth");
  auto* p = metric->mutable_gauge()->add_data_points();
  p->set_time_unix_nano((kNow - 1) * kNs);
  p->set_as_int(42);
  EXPECT_EQ(converter.Convert(request).accepted, 1u);
  const Taken taken = TakeAll(&bucketizer);
  EXPECT_EQ(
      taken.scalars,
      (std::map<std::string, double>{{"1700000099 queue.depth k8s.pod.name=shop-7d9f-x2", 42}}));
}

}  // namespace
}  // namespace trailmap
