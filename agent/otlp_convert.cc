#include "agent/otlp_convert.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>

#include "agent/otlp_histogram.h"
#include "core/clock.h"
#include "core/counts.h"
#include "otlp/metrics_service.pb.h"

namespace trailmap {

namespace pb = opentelemetry::proto;
using pb::common::v1::AnyValue;
using pb::common::v1::KeyValue;
using pb::metrics::v1::AggregationTemporality;
using pb::metrics::v1::ExponentialHistogramDataPoint;
using pb::metrics::v1::HistogramDataPoint;
using pb::metrics::v1::Metric;
using pb::metrics::v1::NumberDataPoint;

const char* OtlpRejectName(OtlpReject reason) {
  switch (reason) {
    case OtlpReject::kValue:
      return "value";
    case OtlpReject::kShape:
      return "shape";
    case OtlpReject::kName:
      return "name";
    case OtlpReject::kAttribute:
      return "attribute";
    case OtlpReject::kTime:
      return "time";
    case OtlpReject::kType:
      return "type";
    case OtlpReject::kCount:
      return "count";
  }
  return "?";
}

namespace {

constexpr size_t kNamedRefusals = 5;  // messages in one response
constexpr uint32_t kNoRecordedValue = 1;
constexpr int64_t kNanos = 1'000'000'000;

// How a histogram's values are held: kind, unit and base units per metric unit.
struct HistogramUnit {
  MetricKind kind;
  const char* unit;
  double multiplier;
};

HistogramUnit HistogramUnitOf(std::string_view unit) {
  struct Row {
    std::string_view otel;
    HistogramUnit held;
  };
  static constexpr Row kRows[] = {
      {"ns", {MetricKind::kLatency, "ns", 1}},
      {"us", {MetricKind::kLatency, "ns", 1e3}},
      {"ms", {MetricKind::kLatency, "ns", 1e6}},
      {"s", {MetricKind::kLatency, "ns", 1e9}},
      {"min", {MetricKind::kLatency, "ns", 6e10}},
      {"h", {MetricKind::kLatency, "ns", 3.6e12}},
      {"By", {MetricKind::kSize, "B", 1}},
      {"KBy", {MetricKind::kSize, "B", 1e3}},
      {"KiBy", {MetricKind::kSize, "B", 1024}},
      {"MBy", {MetricKind::kSize, "B", 1e6}},
      {"MiBy", {MetricKind::kSize, "B", 1048576}},
      {"GBy", {MetricKind::kSize, "B", 1e9}},
      {"GiBy", {MetricKind::kSize, "B", 1073741824}},
  };
  for (const Row& row : kRows) {
    if (row.otel == unit) return row.held;
  }
  return {MetricKind::kSize, "1", 1};
}

// A scalar's unit: "By" is "B"; an annotation ("{request}"), "" or anything a unit cannot hold
// (at most 16 printable bytes) is "1".
std::string ScalarUnitOf(std::string_view unit) {
  if (unit == "By") return "B";
  if (unit.empty() || unit.size() > 16 || unit.front() == '{') return "1";
  for (const char c : unit) {
    if (c < 0x21 || c > 0x7e) return "1";
  }
  return std::string(unit);
}

// An attribute value as field text; false for arrays, maps, bytes and an unset value.
bool AttributeText(const AnyValue& value, std::string* out) {
  switch (value.value_case()) {
    case AnyValue::kStringValue:
      *out = value.string_value();
      return true;
    case AnyValue::kBoolValue:
      *out = value.bool_value() ? "true" : "false";
      return true;
    case AnyValue::kIntValue:
      *out = std::to_string(value.int_value());
      return true;
    case AnyValue::kDoubleValue: {
      char text[32];
      const auto end = std::to_chars(text, text + sizeof text, value.double_value()).ptr;
      out->assign(text, end);
      return true;
    }
    default:
      return false;
  }
}

bool IsKeyChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

// Makes key and value fit a field (core/series.h); true when anything changed.
bool FitField(std::string* key, std::string* value) {
  bool changed = false;
  if (key->size() > kMaxFieldKey) key->resize(kMaxFieldKey), changed = true;
  for (char& c : *key) {
    if (!IsKeyChar(c)) c = '_', changed = true;
  }
  if (value->size() > kMaxFieldValue) value->resize(kMaxFieldValue), changed = true;
  for (char& c : *value) {
    if (c < 0x21 || c > 0x7e || c == ',') c = '_', changed = true;
  }
  return changed;
}

std::string NumberText(double v) {
  char text[32];
  return std::string(text, std::to_chars(text, text + sizeof text, v).ptr);
}

// A histogram point, explicit or exponential, as the cumulative state and the delta need it.
struct HistPoint {
  bool exponential = false;
  std::vector<double> bounds;  // explicit: the bounds
  int32_t scale = 0;           // exponential: scale, zero bucket, positive buckets from offset
  double zero_threshold = 0;
  uint64_t zero_count = 0;
  int64_t offset = 0;
  std::vector<uint64_t> counts;  // explicit: bounds + 1 (or none); exponential: positive
  uint64_t count = 0;
  std::optional<double> sum, min, max;
  uint64_t start_ns = 0;
  uint64_t time_ns = 0;
  size_t Bytes() const { return (bounds.size() + counts.size()) * 8 + sizeof(*this); }
};

// What explicit and exponential points share: count, sum, min, max and times.
template <typename Point>
void TakeStatistics(const Point& p, HistPoint* h) {
  h->count = p.count();
  if (p.has_sum()) h->sum = p.sum();
  if (p.has_min()) h->min = p.min();
  if (p.has_max()) h->max = p.max();
  h->start_ns = p.start_time_unix_nano();
  h->time_ns = p.time_unix_nano();
}

// Exponential buckets of `p` at the coarser scale `scale` (index >> shift, OTLP's downscaling).
std::vector<uint64_t> Downscaled(const HistPoint& p, int32_t scale, int64_t* offset) {
  const int shift = p.scale - scale;
  if (shift == 0 || p.counts.empty()) {
    *offset = p.offset;
    return p.counts;
  }
  *offset = p.offset >> shift;
  const int64_t last = (p.offset + static_cast<int64_t>(p.counts.size()) - 1) >> shift;
  std::vector<uint64_t> out(static_cast<size_t>(last - *offset + 1));
  for (size_t i = 0; i < p.counts.size(); ++i) {
    out[static_cast<size_t>(((p.offset + static_cast<int64_t>(i)) >> shift) - *offset)] +=
        p.counts[i];
  }
  return out;
}

// cur - prev for two points of one cumulative series; nullopt when they cannot be subtracted
// (a count went down, the layout changed in a way cumulative buckets cannot): a reset.
std::optional<HistPoint> HistDelta(const HistPoint& prev, const HistPoint& cur) {
  if (cur.count < prev.count || cur.exponential != prev.exponential) return std::nullopt;
  HistPoint d = cur;
  d.count = cur.count - prev.count;
  if (cur.sum && prev.sum) d.sum = *cur.sum - *prev.sum;
  if (d.sum && *d.sum < 0) d.sum = 0;  // rounding of two large sums
  // A cumulative min or max covers all history: it belongs to this interval when it moved.
  if (prev.min && cur.min && *prev.min == *cur.min) d.min.reset();
  if (prev.max && cur.max && *prev.max == *cur.max) d.max.reset();
  if (!cur.exponential) {
    if (cur.bounds != prev.bounds || cur.counts.size() != prev.counts.size()) return std::nullopt;
    for (size_t i = 0; i < cur.counts.size(); ++i) {
      if (cur.counts[i] < prev.counts[i]) return std::nullopt;
      d.counts[i] = cur.counts[i] - prev.counts[i];
    }
    return d;
  }
  if (cur.scale > prev.scale || cur.zero_threshold != prev.zero_threshold ||
      cur.zero_count < prev.zero_count) {
    return std::nullopt;
  }
  d.zero_count = cur.zero_count - prev.zero_count;
  int64_t prev_offset = 0;
  const std::vector<uint64_t> old = Downscaled(prev, cur.scale, &prev_offset);
  for (size_t i = 0; i < old.size(); ++i) {
    if (old[i] == 0) continue;
    const int64_t at = prev_offset + static_cast<int64_t>(i) - cur.offset;
    if (at < 0 || at >= static_cast<int64_t>(cur.counts.size())) return std::nullopt;
    if (d.counts[static_cast<size_t>(at)] < old[i]) return std::nullopt;
    d.counts[static_cast<size_t>(at)] -= old[i];
  }
  return d;
}

}  // namespace

struct OtlpConverter::State {
  State(Bucketizer* b, OtlpConvertOptions o) : bucketizer(b), options(std::move(o)), scalars(b) {
    started = options.started != 0 ? options.started : NowSeconds(options.clock);
    watermark_ns = static_cast<uint64_t>(std::max<int64_t>(started, 0)) * kNanos;
  }

  // One remembered cumulative series: its last point (a sum's value in `value`).
  struct Remembered {
    HistPoint point;
    double value = 0;
    std::list<std::string>::iterator lru;
  };

  // What one point came to.
  struct Refusal {
    OtlpReject reason;
    std::string message;
  };
  using Outcome = std::optional<Refusal>;  // nullopt: accepted

  void Convert(const OtlpRequest& request, OtlpExportResult* result);
  void ConvertMetric(const Metric& metric, const FieldSet& resource, OtlpExportResult* result);
  Outcome Fields(const FieldSet& resource,
                 const google::protobuf::RepeatedPtrField<KeyValue>& attributes,
                 std::string* canonical);
  Outcome Second(uint64_t time_ns, int64_t* second);
  Outcome TakeNumber(const Metric& metric, const NumberDataPoint& p, const FieldSet& resource);
  Outcome TakeHistogram(const Metric& metric, HistPoint point, AggregationTemporality temporality,
                        const std::string& fields);
  // Checks `point` and records its events (unless check_only).
  Outcome Record(const Metric& metric, const HistPoint& point, int64_t second,
                 const std::string& fields, bool check_only = false);
  // The previous point of a cumulative series (nullptr: none); Remember replaces it.
  Remembered* Find(const std::string& key);
  void Remember(const std::string& key, HistPoint point, double value);
  bool FirstCountsWhole(uint64_t start_ns) const {
    return start_ns != 0 && start_ns >= watermark_ns;
  }

  Bucketizer* const bucketizer;
  const OtlpConvertOptions options;
  StatsdScalars scalars;  // monotonic sums as per-second totals, non-monotonic deltas
  int64_t started = 0;
  uint64_t watermark_ns = 0;  // a first cumulative point starting at or after it counts whole
  std::unordered_map<std::string, Remembered> series;
  std::list<std::string> lru;  // most recently used first
  size_t bytes = 0;
  OtlpCounters counters;
};

OtlpConverter::OtlpConverter(Bucketizer* bucketizer, OtlpConvertOptions options)
    : state_(std::make_unique<State>(bucketizer, std::move(options))) {}

OtlpConverter::~OtlpConverter() = default;

OtlpExportResult OtlpConverter::Convert(const OtlpRequest& request) {
  OtlpExportResult result;
  std::lock_guard<std::mutex> lock(mu_);
  state_->Convert(request, &result);
  return result;
}

OtlpCounters OtlpConverter::counters() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_->counters;
}

size_t OtlpConverter::cumulative_series() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_->series.size();
}

void OtlpConverter::State::Convert(const OtlpRequest& request, OtlpExportResult* result) {
  ++counters.requests;
  for (const auto& rm : request.resource_metrics()) {
    FieldSet resource;
    for (const KeyValue& kv : rm.resource().attributes()) {
      if (std::find(options.resource_fields.begin(), options.resource_fields.end(), kv.key()) ==
          options.resource_fields.end()) {
        continue;
      }
      std::string value;
      if (!AttributeText(kv.value(), &value) || value.empty()) continue;
      if (kv.key() == "host.name" && value == options.host) continue;  // the host itself
      resource.emplace_back(kv.key(), std::move(value));
    }
    for (const auto& sm : rm.scope_metrics()) {
      for (const Metric& metric : sm.metrics()) ConvertMetric(metric, resource, result);
    }
  }
}

OtlpConverter::State::Outcome OtlpConverter::State::Fields(
    const FieldSet& resource, const google::protobuf::RepeatedPtrField<KeyValue>& attributes,
    std::string* canonical) {
  FieldSet fields;
  for (const KeyValue& kv : attributes) {
    std::string key = kv.key(), value;
    if (!AttributeText(kv.value(), &value)) {
      return Refusal{
          OtlpReject::kAttribute,
          "attribute '" + key + "' is an array, a map or bytes, which a field cannot hold"};
    }
    if (value.empty()) continue;
    if (FitField(&key, &value)) ++counters.attributes_rewritten;
    if (key.empty()) continue;
    fields.emplace_back(std::move(key), std::move(value));
  }
  for (const Field& f : resource) {
    const bool given = std::any_of(fields.begin(), fields.end(),
                                   [&f](const Field& g) { return g.first == f.first; });
    if (!given) {
      Field fit = f;
      if (FitField(&fit.first, &fit.second)) ++counters.attributes_rewritten;
      fields.push_back(std::move(fit));
    }
  }
  Result<std::string> made = CanonicalFields(std::move(fields));
  if (!made.ok()) return Refusal{OtlpReject::kAttribute, made.status().message()};
  *canonical = std::move(*made);
  return std::nullopt;
}

OtlpConverter::State::Outcome OtlpConverter::State::Second(uint64_t time_ns, int64_t* second) {
  const int64_t now = NowSeconds(options.clock);
  if (time_ns == 0) {
    *second = now;
    return std::nullopt;
  }
  const int64_t at = static_cast<int64_t>(time_ns / kNanos);
  if (at < now - options.max_past_seconds || at > now + options.max_future_seconds) {
    return Refusal{OtlpReject::kTime,
                   "time_unix_nano " + std::to_string(time_ns) + " is " +
                       (at < now ? std::to_string(now - at) + " s in the past (at most " +
                                       std::to_string(options.max_past_seconds) + ")"
                                 : std::to_string(at - now) + " s in the future (at most " +
                                       std::to_string(options.max_future_seconds) + ")")};
  }
  *second = at;
  return std::nullopt;
}

void OtlpConverter::State::ConvertMetric(const Metric& metric, const FieldSet& resource,
                                         OtlpExportResult* result) {
  const auto tally = [this, &metric, result](size_t index, const Outcome& outcome) {
    if (!outcome) {
      ++result->accepted;
      ++counters.points_accepted;
      return;
    }
    ++result->rejected;
    ++counters.points_rejected;
    ++counters.rejected_by_reason[static_cast<size_t>(outcome->reason)];
    if (result->rejected <= kNamedRefusals) {
      if (!result->error_message.empty()) result->error_message += "; ";
      result->error_message += "metric '" + metric.name().substr(0, 128) + "' point " +
                               std::to_string(index + 1) + ": " + outcome->message;
    }
  };
  Outcome whole;  // a refusal of every point
  if (Status s = ValidateMetricName(metric.name()); !s.ok()) {
    whole = Refusal{OtlpReject::kName, s.message()};
  }
  const auto points = [&](const auto& list, const auto& one) {
    for (int i = 0; i < list.size(); ++i) {
      if (list[i].flags() & kNoRecordedValue) {
        ++counters.no_value;
        continue;
      }
      tally(static_cast<size_t>(i), whole ? whole : one(list[i]));
    }
  };
  switch (metric.data_case()) {
    case Metric::kGauge:
      points(metric.gauge().data_points(),
             [&](const NumberDataPoint& p) { return TakeNumber(metric, p, resource); });
      return;
    case Metric::kSum:
      points(metric.sum().data_points(),
             [&](const NumberDataPoint& p) { return TakeNumber(metric, p, resource); });
      return;
    case Metric::kHistogram: {
      const AggregationTemporality temporality = metric.histogram().aggregation_temporality();
      points(metric.histogram().data_points(), [&](const HistogramDataPoint& p) -> Outcome {
        std::string fields;
        if (Outcome o = Fields(resource, p.attributes(), &fields)) return o;
        HistPoint h;
        h.bounds.assign(p.explicit_bounds().begin(), p.explicit_bounds().end());
        h.counts.assign(p.bucket_counts().begin(), p.bucket_counts().end());
        TakeStatistics(p, &h);
        return TakeHistogram(metric, std::move(h), temporality, fields);
      });
      return;
    }
    case Metric::kExponentialHistogram: {
      const auto& eh = metric.exponential_histogram();
      points(eh.data_points(), [&](const ExponentialHistogramDataPoint& p) -> Outcome {
        std::string fields;
        if (Outcome o = Fields(resource, p.attributes(), &fields)) return o;
        for (const uint64_t c : p.negative().bucket_counts()) {
          if (c != 0) {
            return Refusal{OtlpReject::kValue,
                           "negative values (in negative buckets): trailmap histograms hold "
                           "values >= 0"};
          }
        }
        if (p.scale() < -10 || p.scale() > 20) {
          return Refusal{OtlpReject::kShape,
                         "scale " + std::to_string(p.scale()) + " is outside [-10, 20]"};
        }
        HistPoint h;
        h.exponential = true;
        h.scale = p.scale();
        h.zero_threshold = p.zero_threshold();
        h.zero_count = p.zero_count();
        h.offset = p.positive().offset();
        h.counts.assign(p.positive().bucket_counts().begin(), p.positive().bucket_counts().end());
        TakeStatistics(p, &h);
        return TakeHistogram(metric, std::move(h), eh.aggregation_temporality(), fields);
      });
      return;
    }
    case Metric::kSummary:
      for (int i = 0; i < metric.summary().data_points_size(); ++i) {
        tally(static_cast<size_t>(i),
              whole ? whole
                    : Refusal{OtlpReject::kType,
                              "summaries are not taken: their quantiles cannot be merged; export "
                              "a histogram instead"});
      }
      return;
    default:
      return;  // no data: no points
  }
}

OtlpConverter::State::Outcome OtlpConverter::State::TakeNumber(const Metric& metric,
                                                               const NumberDataPoint& p,
                                                               const FieldSet& resource) {
  std::string fields;
  if (Outcome o = Fields(resource, p.attributes(), &fields)) return o;
  double value = 0;
  switch (p.value_case()) {
    case NumberDataPoint::kAsDouble:
      value = p.as_double();
      break;
    case NumberDataPoint::kAsInt:
      value = static_cast<double>(p.as_int());
      break;
    default:
      return Refusal{OtlpReject::kType, "the point has no value"};
  }
  if (!std::isfinite(value)) {
    return Refusal{OtlpReject::kValue, "value " + NumberText(value) + " is not finite"};
  }
  int64_t second = 0;
  if (Outcome o = Second(p.time_unix_nano(), &second)) return o;
  const SeriesDef as_value{metric.name(), MetricKind::kScalar, ScalarUnitOf(metric.unit()), fields};
  if (metric.data_case() == Metric::kGauge) {
    bucketizer->SetScalar(second, as_value, value);
    return std::nullopt;
  }
  const pb::metrics::v1::Sum& sum = metric.sum();
  const bool delta =
      sum.aggregation_temporality() == pb::metrics::v1::AGGREGATION_TEMPORALITY_DELTA;
  if (!delta &&
      sum.aggregation_temporality() != pb::metrics::v1::AGGREGATION_TEMPORALITY_CUMULATIVE) {
    return Refusal{OtlpReject::kType, "the sum's aggregation_temporality is unspecified"};
  }
  StatsdSample sample;
  sample.metric = metric.name();
  sample.fields = fields;
  if (!sum.is_monotonic()) {
    if (!delta) {
      bucketizer->SetScalar(second, as_value, value);  // a cumulative up-down sum is its value
      return std::nullopt;
    }
    sample.type = StatsdType::kGauge;  // a change of the running total
    sample.gauge_delta = true;
    sample.values = {value};
    scalars.Add(second, sample);
    return std::nullopt;
  }
  if (value < 0) {
    return Refusal{OtlpReject::kValue, "a monotonic sum of " + NumberText(value) + " is negative"};
  }
  double increase = value;
  if (!delta) {
    const std::string key = "s|" + metric.name() + "|" + fields;
    Remembered* prev = Find(key);
    HistPoint mark;
    mark.start_ns = p.start_time_unix_nano();
    mark.time_ns = p.time_unix_nano();
    if (prev != nullptr && mark.time_ns != 0 && mark.time_ns <= prev->point.time_ns &&
        mark.start_ns == prev->point.start_ns) {
      return std::nullopt;  // not newer than what was taken (an export sent again)
    }
    if (prev == nullptr) {
      if (!FirstCountsWhole(mark.start_ns)) ++counters.baselines, increase = 0;
    } else if (mark.start_ns != prev->point.start_ns || value < prev->value) {
      ++counters.resets;
    } else {
      increase = value - prev->value;
    }
    Remember(key, std::move(mark), value);
    if (prev == nullptr && increase == 0) return std::nullopt;
  }
  sample.type = StatsdType::kCounter;
  sample.values = {increase};
  scalars.Add(second, sample);
  return std::nullopt;
}

OtlpConverter::State::Outcome OtlpConverter::State::TakeHistogram(
    const Metric& metric, HistPoint point, AggregationTemporality temporality,
    const std::string& fields) {
  int64_t second = 0;
  if (Outcome o = Second(point.time_ns, &second)) return o;
  if (temporality == pb::metrics::v1::AGGREGATION_TEMPORALITY_DELTA) {
    return Record(metric, point, second, fields);
  }
  if (temporality != pb::metrics::v1::AGGREGATION_TEMPORALITY_CUMULATIVE) {
    return Refusal{OtlpReject::kType, "the histogram's aggregation_temporality is unspecified"};
  }
  // Checked whole before it is remembered: a bad cumulative point must not become the base.
  if (Outcome o = Record(metric, point, second, fields, true)) return o;
  const std::string key = "h|" + metric.name() + "|" + fields;
  Remembered* prev = Find(key);
  if (prev != nullptr && point.time_ns != 0 && point.time_ns <= prev->point.time_ns &&
      point.start_ns == prev->point.start_ns) {
    return std::nullopt;  // not newer than what was taken
  }
  std::optional<HistPoint> delta;
  if (prev == nullptr) {
    if (FirstCountsWhole(point.start_ns)) {
      delta = point;
    } else {
      ++counters.baselines;
    }
  } else if (point.start_ns == prev->point.start_ns) {
    delta = HistDelta(prev->point, point);
    if (!delta) ++counters.resets, delta = point;
  } else {
    ++counters.resets;
    delta = point;
  }
  // The point itself passed the checks, so it is taken. A difference of two sums can be off by
  // more than the buckets allow (a double's rounding of a long history): then the delta goes
  // without its sum, and at worst without its min and max, which only place it (counted).
  if (delta && delta->count > 0 && Record(metric, *delta, second, fields)) {
    ++counters.inexact_deltas;
    delta->sum.reset();
    if (Record(metric, *delta, second, fields)) {
      delta->min.reset();
      delta->max.reset();
      Record(metric, *delta, second, fields);
    }
  }
  Remember(key, std::move(point), 0);
  return std::nullopt;
}

OtlpConverter::State::Outcome OtlpConverter::State::Record(const Metric& metric,
                                                           const HistPoint& point, int64_t second,
                                                           const std::string& fields,
                                                           bool check_only) {
  const HistogramUnit unit = HistogramUnitOf(metric.unit());
  OtlpBuckets buckets;
  uint64_t total = 0;
  const auto add = [&buckets, &total](OtlpBucket b) {
    if (b.count == 0) return true;
    if (b.count > kMaxItemCount - std::min(total, kMaxItemCount)) return false;
    total += b.count;
    buckets.buckets.push_back(b);
    return true;
  };
  const auto too_many = [&point] {
    return Refusal{OtlpReject::kCount, "count " + std::to_string(point.count) +
                                           " is more than one item may hold (2^40)"};
  };
  const auto out_of_range = [&unit](double lo, double hi) {
    return Refusal{OtlpReject::kValue, "bucket (" + NumberText(lo) + ", " + NumberText(hi) +
                                           "] is past 2^64 " + unit.unit};
  };
  if (point.count > kMaxItemCount) return too_many();
  const auto exact = [&unit](const std::optional<double>& v, const char* what,
                             std::optional<uint128_t>* out) -> Outcome {
    if (!v) return std::nullopt;
    uint128_t held = 0;
    if (!OtlpBaseUnits(*v, unit.multiplier, &held) ||
        (std::string_view(what) != "sum" && held > std::numeric_limits<uint64_t>::max())) {
      return Refusal{OtlpReject::kValue, std::string(what) + " " + NumberText(*v) +
                                             " is negative, not finite or too large"};
    }
    *out = held;
    return std::nullopt;
  };
  std::optional<uint128_t> min, max;
  if (Outcome o = exact(point.min, "min", &min)) return o;
  if (Outcome o = exact(point.max, "max", &max)) return o;
  if (Outcome o = exact(point.sum, "sum", &buckets.sum)) return o;
  if (min) buckets.min = static_cast<uint64_t>(*min);
  if (max) buckets.max = static_cast<uint64_t>(*max);
  if (!point.exponential) {
    const std::vector<double>& b = point.bounds;
    for (size_t i = 0; i < b.size(); ++i) {
      if (!std::isfinite(b[i]) || (i > 0 && b[i] <= b[i - 1])) {
        return Refusal{OtlpReject::kShape, "explicit_bounds are not finite and increasing"};
      }
    }
    if (point.counts.empty() && point.count > 0) {
      // No buckets: one bucket over [min, max] when they are known.
      if (!point.min || !point.max) {
        return Refusal{OtlpReject::kShape, "a count without buckets, min and max"};
      }
      if (!add({buckets.min.value_or(0), buckets.max.value_or(0), point.count})) return too_many();
    } else if (!point.counts.empty() && point.counts.size() != b.size() + 1) {
      return Refusal{OtlpReject::kShape, std::to_string(point.counts.size()) +
                                             " bucket_counts for " + std::to_string(b.size()) +
                                             " explicit_bounds (must be one more)"};
    }
    for (size_t i = 0; i < point.counts.size(); ++i) {
      if (point.counts[i] == 0) continue;
      const double hi_bound = i < b.size() ? b[i] : std::numeric_limits<double>::infinity();
      if (hi_bound < 0) {
        return Refusal{OtlpReject::kValue,
                       "a bucket below 0 holds values: trailmap histograms hold values >= 0"};
      }
      const double lo = i == 0 ? 0 : std::max(0.0, b[i - 1]);
      // The last bucket is open: up to the max when known, else twice its lower bound.
      const double hi = i < b.size() ? b[i] : point.max && *point.max >= lo ? *point.max : lo * 2;
      OtlpBucket bucket;
      if (!OtlpBucketRange(lo, hi, unit.multiplier, &bucket)) return out_of_range(lo, hi);
      bucket.count = point.counts[i];
      if (!add(bucket)) return too_many();
    }
  } else {
    if (!std::isfinite(point.zero_threshold) || point.zero_threshold < 0) {
      return Refusal{OtlpReject::kShape, "zero_threshold is negative or not finite"};
    }
    if (point.zero_count > 0) {
      OtlpBucket zero;
      if (!OtlpBucketRange(0, point.zero_threshold, unit.multiplier, &zero)) {
        return out_of_range(0, point.zero_threshold);
      }
      zero.count = point.zero_count;
      if (!add(zero)) return too_many();
    }
    for (size_t i = 0; i < point.counts.size(); ++i) {
      if (point.counts[i] == 0) continue;
      double lo = 0, hi = 0;
      ExponentialBucketBounds(point.scale, point.offset + static_cast<int64_t>(i), &lo, &hi);
      OtlpBucket bucket;
      if (!OtlpBucketRange(lo, hi, unit.multiplier, &bucket)) return out_of_range(lo, hi);
      bucket.count = point.counts[i];
      if (!add(bucket)) return too_many();
    }
  }
  if (total != point.count) {
    return Refusal{OtlpReject::kShape, "bucket counts add up to " + std::to_string(total) +
                                           ", the count is " + std::to_string(point.count)};
  }
  Result<std::vector<PlacedValue>> placed = PlaceOtlpBuckets(std::move(buckets));
  if (!placed.ok()) return Refusal{OtlpReject::kValue, placed.status().message()};
  if (check_only) return std::nullopt;
  const SeriesDef series{metric.name(), unit.kind, unit.unit, fields};
  for (const PlacedValue& v : *placed) bucketizer->Add(second, series, v.value, v.count);
  counters.histogram_events += total;
  return std::nullopt;
}

OtlpConverter::State::Remembered* OtlpConverter::State::Find(const std::string& key) {
  const auto it = series.find(key);
  if (it == series.end()) return nullptr;
  lru.splice(lru.begin(), lru, it->second.lru);
  return &it->second;
}

void OtlpConverter::State::Remember(const std::string& key, HistPoint point, double value) {
  auto it = series.find(key);
  if (it == series.end()) {
    lru.push_front(key);
    it = series.emplace(key, Remembered{HistPoint{}, 0, lru.begin()}).first;
    bytes += key.size() * 2 + sizeof(Remembered);
  } else {
    lru.splice(lru.begin(), lru, it->second.lru);
  }
  bytes -= it->second.point.Bytes();
  bytes += point.Bytes();
  it->second.point = std::move(point);
  it->second.value = value;
  while (series.size() > 1 &&
         (series.size() > options.max_cumulative_series || bytes > options.max_cumulative_bytes)) {
    const auto last = series.find(lru.back());
    watermark_ns = std::max(watermark_ns, last->second.point.time_ns);
    bytes -= last->second.point.Bytes() + last->first.size() * 2 + sizeof(Remembered);
    series.erase(last);
    lru.pop_back();
    ++counters.evicted_series;
  }
}

}  // namespace trailmap
