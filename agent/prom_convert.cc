#include "agent/prom_convert.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <limits>
#include <list>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "core/clock.h"
#include "core/counts.h"
#include "core/series.h"
#include "prometheus/remote.pb.h"

namespace trailmap {
namespace {

constexpr int32_t kCustomBucketsSchema = -53;
constexpr uint64_t kStaleNaN = 0x7ff0000000000002;  // Prometheus' staleness marker
constexpr double kInf = std::numeric_limits<double>::infinity();

struct Unit {
  MetricKind kind;
  const char* unit;
  double multiplier;  // base units per the metric's unit
};

// A histogram's kind and unit from its name's suffix (Prometheus' naming convention).
Unit UnitOfName(std::string_view name) {
  struct Row {
    std::string_view suffix;
    Unit unit;
  };
  static constexpr Row kRows[] = {
      {"_seconds", {MetricKind::kLatency, "ns", 1e9}},
      {"_milliseconds", {MetricKind::kLatency, "ns", 1e6}},
      {"_microseconds", {MetricKind::kLatency, "ns", 1e3}},
      {"_nanoseconds", {MetricKind::kLatency, "ns", 1}},
      {"_bytes", {MetricKind::kSize, "B", 1}},
  };
  for (const Row& row : kRows) {
    if (name.ends_with(row.suffix)) return row.unit;
  }
  return {MetricKind::kSize, "1", 1};
}

std::string NumberText(double v) {
  char text[32];
  return std::string(text, std::to_chars(text, text + sizeof text, v).ptr);
}

// The second a time in milliseconds falls in (rounded down, for times before 1970 too).
int64_t SecondOf(int64_t ms) { return ms / 1000 - (ms % 1000 < 0 ? 1 : 0); }

bool CutSuffix(std::string_view* name, std::string_view suffix) {
  if (!name->ends_with(suffix) || name->size() == suffix.size()) return false;
  name->remove_suffix(suffix.size());
  return true;
}

// A series' labels as trailmap holds them.
struct SeriesLabels {
  std::string name;    // __name__, ':' made '.'
  std::string host;    // the host label's value
  std::string fields;  // canonical
  std::optional<double> le;
  std::string key;  // the series' identity: name, host, fields, le
};

// Keys a query reads as something else (as statsd's tags, agent/statsd.h).
bool ReservedKey(std::string_view key) {
  return key == "host" || key == "value" || key == "latency" || key == "size" || key == "overflow";
}

// A label value made to fit a field value: bytes outside [!-~] and ',' become '_', cut at 200.
std::string FieldValueOf(std::string_view value) {
  std::string out(value.substr(0, kMaxFieldValue));
  for (char& c : out) {
    if (c < 0x21 || c > 0x7e || c == ',') c = '_';
  }
  return out;
}

Status ReadLabels(const prometheus::TimeSeries& ts, const std::string& host_label,
                  SeriesLabels* out) {
  FieldSet fields;
  std::optional<std::string> le;
  for (const prometheus::Label& l : ts.labels()) {
    if (l.name() == "__name__") {
      out->name = l.value();
    } else if (l.name() == host_label) {
      out->host = l.value();
    } else if (l.name() == "le") {
      le = l.value();
    } else if (!l.value().empty()) {
      std::string key = l.name().substr(0, kMaxFieldKey);
      if (ReservedKey(key)) key = "label_" + key;
      fields.emplace_back(std::move(key), FieldValueOf(l.value()));
    }
  }
  if (out->name.empty()) return Status::InvalidArgument("a series without a __name__ label");
  std::replace(out->name.begin(), out->name.end(), ':', '.');
  const std::string what = "series " + out->name;
  if (Status s = ValidateMetricName(out->name); !s.ok()) {
    return Status::InvalidArgument(what + ": " + s.message());
  }
  if (out->host.empty()) return Status::InvalidArgument(what + " has no " + host_label + " label");
  if (Status s = ValidateField("host", out->host); !s.ok()) {
    return Status::InvalidArgument(what + ": its " + host_label +
                                   " cannot be a host: " + s.message());
  }
  if (fields.size() > kMaxFields) {
    return Status::InvalidArgument(what + " has " + std::to_string(fields.size()) +
                                   " labels besides __name__, " + host_label + " and le (at most " +
                                   std::to_string(kMaxFields) + ")");
  }
  Result<std::string> canonical = CanonicalFields(std::move(fields));
  if (!canonical.ok()) return Status::InvalidArgument(what + ": " + canonical.status().message());
  out->fields = std::move(*canonical);
  if (le) {
    double v = 0;
    if (*le == "+Inf") {
      v = kInf;
    } else {
      const auto [end, ec] = std::from_chars(le->data(), le->data() + le->size(), v);
      if (ec != std::errc() || end != le->data() + le->size() || std::isnan(v)) {
        return Status::InvalidArgument(what + ": le=\"" + *le + "\" is not a number");
      }
    }
    out->le = v;
  }
  out->key = out->name + '\n' + out->host + '\n' + out->fields;
  return Status::Ok();
}

// A native histogram sample, its buckets by Prometheus index.
struct NativePoint {
  int32_t schema = 0;
  double zero_threshold = 0;
  uint64_t zero = 0;
  std::map<int32_t, uint64_t> positive, negative;
  uint64_t count = 0;
  double sum = 0;
  std::vector<double> custom;
  size_t Bytes() const { return sizeof(*this) + (positive.size() + negative.size()) * 48; }
};

// A whole number of events from a count sent as a double; false when it is not one.
bool WholeCount(double v, uint64_t* out) {
  if (!(v >= 0) || v > static_cast<double>(kMaxItemCount) || v != std::floor(v)) return false;
  *out = static_cast<uint64_t>(v);
  return true;
}

template <typename Spans, typename Deltas, typename Counts>
Status ReadBuckets(const Spans& spans, const Deltas& deltas, const Counts& counts, const char* side,
                   std::map<int32_t, uint64_t>* out) {
  const bool use_deltas = deltas.size() > 0;
  const int n = use_deltas ? deltas.size() : counts.size();
  int64_t spanned = 0;
  for (const prometheus::BucketSpan& s : spans) spanned += s.length();
  if (spanned != n) {
    return Status::InvalidArgument(std::string(side) + " spans cover " + std::to_string(spanned) +
                                   " buckets, " + std::to_string(n) + " are given");
  }
  int64_t index = 0, running = 0;
  int at = 0;
  for (const prometheus::BucketSpan& s : spans) {
    if (at > 0 && s.offset() < 0) {  // only the first span's offset may go down: an index
      return Status::InvalidArgument(std::string(side) + " spans overlap (a later offset < 0)");
    }
    index += s.offset();
    for (uint32_t j = 0; j < s.length(); ++j, ++index, ++at) {
      uint64_t count = 0;
      if (use_deltas) {
        if (__builtin_add_overflow(running, deltas[at], &running)) {
          return Status::InvalidArgument(std::string(side) + " bucket " + std::to_string(index) +
                                         " count is out of range");
        }
        if (running < 0) {
          return Status::InvalidArgument(std::string(side) + " bucket " + std::to_string(index) +
                                         " has a negative count");
        }
        count = static_cast<uint64_t>(running);
      } else if (!WholeCount(counts[at], &count)) {
        return Status::InvalidArgument(std::string(side) + " bucket " + std::to_string(index) +
                                       " count " + NumberText(counts[at]) +
                                       " is not a whole number >= 0");
      }
      if (index < std::numeric_limits<int32_t>::min() ||
          index > std::numeric_limits<int32_t>::max()) {
        return Status::InvalidArgument(std::string(side) + " bucket index out of range");
      }
      if (count > 0) (*out)[static_cast<int32_t>(index)] = count;
    }
  }
  return Status::Ok();
}

Status ReadNative(const prometheus::Histogram& h, NativePoint* p) {
  p->schema = h.schema();
  if (p->schema != kCustomBucketsSchema && (p->schema < -4 || p->schema > 8)) {
    return Status::InvalidArgument("schema " + std::to_string(p->schema) +
                                   " is not one of -4..8 or -53 (custom buckets)");
  }
  const auto whole = [](bool is_int, uint64_t i, double f, const char* what, uint64_t* out) {
    if (is_int) return *out = i, Status::Ok();
    if (WholeCount(f, out)) return Status::Ok();
    return Status::InvalidArgument(std::string(what) + " " + NumberText(f) +
                                   " is not a whole number >= 0");
  };
  if (Status s = whole(h.has_count_int(), h.count_int(), h.count_float(), "count", &p->count);
      !s.ok()) {
    return s;
  }
  if (Status s = whole(h.has_zero_count_int(), h.zero_count_int(), h.zero_count_float(),
                       "zero_count", &p->zero);
      !s.ok()) {
    return s;
  }
  p->sum = h.sum();
  p->zero_threshold = h.zero_threshold();
  if (!std::isfinite(p->zero_threshold) || p->zero_threshold < 0) {
    return Status::InvalidArgument("zero_threshold is negative or not finite");
  }
  if (Status s = ReadBuckets(h.positive_spans(), h.positive_deltas(), h.positive_counts(),
                             "positive", &p->positive);
      !s.ok()) {
    return s;
  }
  if (Status s = ReadBuckets(h.negative_spans(), h.negative_deltas(), h.negative_counts(),
                             "negative", &p->negative);
      !s.ok()) {
    return s;
  }
  if (p->schema == kCustomBucketsSchema) {
    p->custom.assign(h.custom_values().begin(), h.custom_values().end());
    for (size_t i = 0; i < p->custom.size(); ++i) {
      if (!std::isfinite(p->custom[i]) || (i > 0 && p->custom[i] <= p->custom[i - 1])) {
        return Status::InvalidArgument("custom_values are not finite and increasing");
      }
    }
    if (!p->negative.empty()) {
      return Status::InvalidArgument("a custom-bucket histogram with negative buckets");
    }
    for (const auto& [index, count] : p->positive) {
      if (index < 0 || static_cast<size_t>(index) > p->custom.size()) {
        return Status::InvalidArgument("custom bucket " + std::to_string(index) + " of " +
                                       std::to_string(p->custom.size() + 1));
      }
    }
  }
  uint64_t total = p->zero;
  bool wrapped = false;
  for (const auto* side : {&p->positive, &p->negative}) {
    for (const auto& [i, c] : *side) wrapped |= __builtin_add_overflow(total, c, &total);
  }
  if (wrapped) return Status::InvalidArgument("buckets hold more than 2^64 events");
  // A count above the buckets' is allowed: NaN observations count but fall in no bucket.
  if (total > p->count) {
    return Status::InvalidArgument("buckets hold " + std::to_string(total) +
                                   " events, the count is " + std::to_string(p->count));
  }
  return Status::Ok();
}

// `p`'s buckets at the coarser schema `schema` (Prometheus' downscaling of exponential indexes).
std::map<int32_t, uint64_t> Downscaled(const std::map<int32_t, uint64_t>& buckets, int shift) {
  if (shift == 0) return buckets;
  std::map<int32_t, uint64_t> out;
  for (const auto& [i, c] : buckets) {
    out[static_cast<int32_t>(((int64_t{i} - 1) >> shift) + 1)] += c;
  }
  return out;
}

// cur - prev per bucket; false when a bucket went down (a reset).
bool Subtract(const std::map<int32_t, uint64_t>& prev, std::map<int32_t, uint64_t>* cur) {
  for (const auto& [i, c] : prev) {
    const auto it = cur->find(i);
    if (it == cur->end() ? c > 0 : it->second < c) return false;
    if (it != cur->end()) it->second -= c;
  }
  return true;
}

// The increase from prev to cur; nullopt when they cannot be subtracted (a reset).
std::optional<NativePoint> NativeDelta(const NativePoint& prev, const NativePoint& cur) {
  if (cur.count < prev.count || cur.zero_threshold != prev.zero_threshold || cur.zero < prev.zero ||
      (cur.schema == kCustomBucketsSchema) != (prev.schema == kCustomBucketsSchema) ||
      cur.custom != prev.custom ||
      (cur.schema != kCustomBucketsSchema && cur.schema > prev.schema)) {
    return std::nullopt;
  }
  NativePoint d = cur;
  d.count = cur.count - prev.count;
  d.zero = cur.zero - prev.zero;
  d.sum = cur.sum - prev.sum;
  const int shift = cur.schema == kCustomBucketsSchema ? 0 : prev.schema - cur.schema;
  if (!Subtract(Downscaled(prev.positive, shift), &d.positive) ||
      !Subtract(Downscaled(prev.negative, shift), &d.negative)) {
    return std::nullopt;
  }
  return d;
}

// One classic histogram: its buckets' increases by timestamp, waiting until all have come.
struct ClassicGroup {
  struct Pending {
    std::map<double, double> increases;  // by le: the cumulative bucket's increase
    std::optional<double> sum;           // NAME_sum's increase
  };
  std::string host;
  SeriesDef series;
  std::map<double, int64_t> first_ms;  // by le: the bucket's first (baseline) sample
  std::map<int64_t, Pending> pending;  // by timestamp (ms)
  size_t Bytes() const { return sizeof(*this) + first_ms.size() * 48 + pending.size() * 200; }
};

// What is remembered of one series (or one classic histogram's group).
struct Entry {
  std::optional<std::pair<double, int64_t>> prev;  // a float series' last value and time (ms)
  std::optional<NativePoint> native;
  std::optional<ClassicGroup> group;
  size_t Bytes() const {
    return sizeof(*this) + (native ? native->Bytes() : 0) + (group ? group->Bytes() : 0);
  }
};

}  // namespace

void NativeBucketBounds(int32_t schema, int32_t index, double* lo, double* hi) {
  ExponentialBucketBounds(schema, static_cast<int64_t>(index) - 1, lo, hi);
}

struct PromConverter::State {
  explicit State(PromConvertOptions o) : options(std::move(o)) {}

  struct Remembered {
    Entry entry;
    std::list<std::string>::iterator lru;
  };

  // One request's conversion: entries are copied into `staged` when first touched, and only
  // committed when the whole request converted.
  struct Request {
    std::unordered_map<std::string, Entry> staged;
    PromWrites writes;
    std::map<std::tuple<std::string, std::string, int64_t>, size_t> scalar_at;  // key -> index
    PromConvertCounters counts;
    std::set<std::string> touched_groups;
  };

  Entry& Staged(Request* r, const std::string& key) {
    auto it = r->staged.find(key);
    if (it != r->staged.end()) return it->second;
    const auto held = series.find(key);
    return r->staged.emplace(key, held == series.end() ? Entry{} : held->second.entry)
        .first->second;
  }

  bool InWindow(int64_t ms, int64_t now) const {
    const int64_t second = SecondOf(ms);
    return second >= now - options.max_past_seconds && second <= now + options.max_future_seconds;
  }

  // The increase of a cumulative float series at this sample; nullopt for a baseline.
  std::optional<double> Increase(Request* r, Entry* e, double value, int64_t ms) {
    std::optional<double> d;
    if (!e->prev) {
      ++r->counts.baselines;
    } else if (value < e->prev->first) {
      ++r->counts.resets;
      d = value;
    } else {
      d = value - e->prev->first;
    }
    e->prev = {value, ms};
    return d;
  }

  void AddScalar(Request* r, const SeriesLabels& l, int64_t ms, const char* unit, double value,
                 bool add) {
    const int64_t second = SecondOf(ms);
    const auto [it, fresh] =
        r->scalar_at.emplace(std::make_tuple(l.key, std::string(unit), second), 0);
    if (fresh) {
      it->second = r->writes.scalars.size();
      r->writes.scalars.push_back(PromScalarWrite{
          l.host, second, SeriesDef{l.name, MetricKind::kScalar, unit, l.fields}, 0});
    }
    double& held = r->writes.scalars[it->second].value;
    held = add ? held + value : value;
  }

  // Places `buckets` (and the sum when it fits) into events of `series` at `second`.
  void Place(Request* r, const std::string& host, int64_t second, const SeriesDef& series,
             OtlpBuckets buckets) {
    if (buckets.buckets.empty()) return;
    uint64_t total = 0;
    for (const OtlpBucket& b : buckets.buckets) total += b.count;
    Result<std::vector<PlacedValue>> placed = PlaceOtlpBuckets(buckets);
    if (!placed.ok() && buckets.sum) {
      ++r->counts.inexact_sums;
      buckets.sum.reset();
      placed = PlaceOtlpBuckets(std::move(buckets));
    }
    if (!placed.ok()) return;  // without a sum placement cannot fail
    r->counts.histogram_events += total;
    r->writes.histograms.push_back(PromHistogramWrite{host, second, series, std::move(*placed)});
  }

  // Adds bucket (lo, hi] with `count` events; false (the histogram is skipped) past the limits.
  static bool AddBucket(double lo, double hi, uint64_t count, double multiplier, OtlpBuckets* out,
                        uint64_t* total) {
    if (count == 0) return true;
    OtlpBucket b;
    if (!OtlpBucketRange(std::max(lo, 0.0), hi, multiplier, &b)) return false;
    if (count > kMaxItemCount - std::min(*total, kMaxItemCount)) return false;
    b.count = count;
    *total += count;
    out->buckets.push_back(b);
    return true;
  }

  void EmitNative(Request* r, const SeriesLabels& l, int64_t ms, const NativePoint& p) {
    const Unit unit = UnitOfName(l.name);
    const int64_t second = SecondOf(ms);
    OtlpBuckets positive, negative;
    uint64_t total = 0, negative_total = 0;
    bool ok = AddBucket(0, p.zero_threshold, p.zero, unit.multiplier, &positive, &total);
    for (const auto& [i, c] : p.positive) {
      double lo = 0, hi = 0;
      if (p.schema == kCustomBucketsSchema) {
        const size_t at = static_cast<size_t>(i);
        lo = at == 0 ? 0 : p.custom[at - 1];
        hi = at < p.custom.size() ? p.custom[at] : lo * 2;
        if (hi < 0) ok = false;
      } else {
        NativeBucketBounds(p.schema, i, &lo, &hi);
      }
      ok = ok && AddBucket(lo, hi, c, unit.multiplier, &positive, &total);
    }
    for (const auto& [i, c] : p.negative) {
      double lo = 0, hi = 0;
      NativeBucketBounds(p.schema, i, &lo, &hi);
      ok = ok && AddBucket(lo, hi, c, unit.multiplier, &negative, &negative_total);
    }
    if (!ok) {
      ++r->counts.incomplete;
      return;
    }
    uint128_t sum = 0;
    if (p.negative.empty() && OtlpBaseUnits(p.sum, unit.multiplier, &sum)) positive.sum = sum;
    Place(r, l.host, second, SeriesDef{l.name, unit.kind, unit.unit, l.fields},
          std::move(positive));
    Place(r, l.host, second, SeriesDef{l.name + ".negative", unit.kind, unit.unit, l.fields},
          std::move(negative));
  }

  // Emits every timestamp of `g` whose buckets have all come.
  void EmitClassic(Request* r, ClassicGroup* g) {
    const Unit unit = UnitOfName(g->series.metric);
    for (auto it = g->pending.begin(); it != g->pending.end();) {
      const int64_t ms = it->first;
      bool complete = true;
      for (const auto& [le, first] : g->first_ms) {
        if (first < ms && !it->second.increases.contains(le)) complete = false;
      }
      if (!complete || it->second.increases.empty()) {
        ++it;
        continue;
      }
      for (auto old = g->pending.begin(); old != it;) {  // older ones can no longer complete
        // (a sum alone came after its buckets were placed: nothing is lost with it)
        if (!old->second.increases.empty()) ++r->counts.incomplete;
        old = g->pending.erase(old);
      }
      OtlpBuckets buckets;
      uint64_t total = 0;
      double below = 0, lower = 0;
      bool ok = true;
      for (const auto& [le, increase] : it->second.increases) {
        uint64_t count = 0;
        ok = ok && increase >= below && WholeCount(increase - below, &count);
        const double hi = std::isinf(le) ? lower * 2 : le;
        if (count > 0 && hi < 0) ok = false;
        ok = ok && AddBucket(lower, hi, count, unit.multiplier, &buckets, &total);
        below = increase;
        lower = le;
      }
      uint128_t sum = 0;
      if (it->second.sum && OtlpBaseUnits(*it->second.sum, unit.multiplier, &sum)) {
        buckets.sum = sum;
      }
      const int64_t second = SecondOf(ms);
      if (ok) {
        Place(r, g->host, second, g->series, std::move(buckets));
      } else {
        ++r->counts.incomplete;
      }
      it = g->pending.erase(it);
    }
    while (g->pending.size() > options.max_pending_timestamps) {
      ++r->counts.incomplete;
      g->pending.erase(g->pending.begin());
    }
  }

  Result<PromWrites> Convert(const prometheus::WriteRequest& request,
                             const std::function<Status(std::string_view)>& admit_host);
  void Commit(Request* r);

  PromConvertOptions options;
  PromConvertCounters counters;
  std::unordered_map<std::string, Remembered> series;
  std::list<std::string> lru;  // most recently used first
  size_t bytes = 0;
  std::unordered_set<std::string> counter_families;  // from metadata (bounded by max_series)
};

Result<PromWrites> PromConverter::State::Convert(
    const prometheus::WriteRequest& request,
    const std::function<Status(std::string_view)>& admit_host) {
  const int64_t now = NowSeconds(options.clock);
  Request r;
  std::unordered_set<std::string> counters_here;
  for (const prometheus::MetricMetadata& m : request.metadata()) {
    if (m.type() == prometheus::MetricMetadata::COUNTER)
      counters_here.insert(m.metric_family_name());
  }
  // Labels first: every series' host and fields, and which families have buckets here.
  std::vector<SeriesLabels> labels(static_cast<size_t>(request.timeseries_size()));
  std::unordered_set<std::string> bucket_groups;
  for (int i = 0; i < request.timeseries_size(); ++i) {
    SeriesLabels& l = labels[static_cast<size_t>(i)];
    if (Status s = ReadLabels(request.timeseries(i), options.host_label, &l); !s.ok()) {
      return Status::InvalidArgument("timeseries " + std::to_string(i) + ": " + s.message());
    }
    if (admit_host) {
      if (Status s = admit_host(l.host); !s.ok()) return s;
    }
    std::string_view family = l.name;
    if (l.le && CutSuffix(&family, "_bucket")) {
      bucket_groups.insert(std::string(family) + '\n' + l.host + '\n' + l.fields);
    }
  }
  // Cumulative bucket values per (histogram, timestamp), to check they grow with le.
  std::map<std::pair<std::string, int64_t>, std::map<double, double>> cumulative;
  for (int i = 0; i < request.timeseries_size(); ++i) {
    const prometheus::TimeSeries& ts = request.timeseries(i);
    const SeriesLabels& l = labels[static_cast<size_t>(i)];
    const std::string what = "series " + l.name + "{" + l.fields + "}";
    for (const prometheus::Histogram& h : ts.histograms()) {
      if (std::bit_cast<uint64_t>(h.sum()) == kStaleNaN) {
        ++r.counts.stale;
        continue;
      }
      NativePoint p;
      if (Status s = ReadNative(h, &p); !s.ok()) {
        return Status::InvalidArgument(what + " at " + std::to_string(h.timestamp()) +
                                       " ms: " + s.message());
      }
      ++r.counts.histogram_samples;
      ++r.writes.samples;
      const bool in_window = InWindow(h.timestamp(), now);
      if (!in_window) ++r.counts.out_of_window;
      if (h.reset_hint() == prometheus::Histogram::GAUGE) {
        if (in_window) EmitNative(&r, l, h.timestamp(), p);
        continue;
      }
      Entry& e = Staged(&r, "n\n" + l.key);
      std::optional<NativePoint> d;
      if (!e.native) {
        ++r.counts.baselines;
      } else if (h.reset_hint() == prometheus::Histogram::YES || !(d = NativeDelta(*e.native, p))) {
        ++r.counts.resets;
        d = p;
      }
      if (d && in_window) EmitNative(&r, l, h.timestamp(), *d);
      e.native = std::move(p);
    }
    if (ts.samples_size() == 0) continue;
    std::string_view family = l.name;
    const bool bucket = l.le && CutSuffix(&family, "_bucket");
    std::string group_key;
    bool sum = false, count = false;
    if (!bucket) {
      std::string_view f = l.name;
      sum = CutSuffix(&f, "_sum");
      count = !sum && CutSuffix(&f, "_count");
      if (sum || count) {
        family = f;  // the histogram's name, whichever of its series comes first
        group_key = std::string(f) + '\n' + l.host + '\n' + l.fields;
        const bool grouped = bucket_groups.contains(group_key) ||
                             series.contains("g\n" + group_key) ||
                             r.staged.contains("g\n" + group_key);
        if (!grouped) sum = count = false;
      }
    } else {
      group_key = std::string(family) + '\n' + l.host + '\n' + l.fields;
    }
    const bool counter =
        l.name.ends_with("_total") || counters_here.contains(l.name) ||
        counter_families.contains(l.name) ||
        (!bucket && !sum && !count &&
         (l.name.ends_with("_sum") || l.name.ends_with("_count") || l.name.ends_with("_bucket")));
    for (const prometheus::Sample& s : ts.samples()) {
      if (std::isnan(s.value())) {
        ++r.counts.stale;
        continue;
      }
      ++r.counts.samples;
      ++r.writes.samples;
      const bool in_window = InWindow(s.timestamp(), now);
      if (!in_window) ++r.counts.out_of_window;
      if (count) continue;  // the +Inf bucket's, and a classic histogram's count is that
      if (bucket || sum) {
        if (bucket) {
          if (!(s.value() >= 0) || std::isinf(s.value()) || s.value() != std::floor(s.value())) {
            return Status::InvalidArgument(what + " le=" + NumberText(*l.le) + ": bucket count " +
                                           NumberText(s.value()) + " is not a whole number >= 0");
          }
          cumulative[{group_key, s.timestamp()}][*l.le] = s.value();
        }
        Entry& e = Staged(&r, "s\n" + l.key + '\n' + (bucket ? NumberText(*l.le) : "sum"));
        const std::optional<double> d = Increase(&r, &e, s.value(), s.timestamp());
        Entry& g = Staged(&r, "g\n" + group_key);
        if (!g.group) {
          g.group.emplace();
          g.group->host = l.host;
          const Unit unit = UnitOfName(family);
          g.group->series = SeriesDef{std::string(family), unit.kind, unit.unit, l.fields};
        }
        r.touched_groups.insert("g\n" + group_key);
        if (bucket) {
          auto [first, fresh] = g.group->first_ms.emplace(*l.le, s.timestamp());
          if (!fresh) first->second = std::min(first->second, s.timestamp());
        }
        if (!d || !in_window) continue;
        ClassicGroup::Pending& p = g.group->pending[s.timestamp()];
        if (bucket) {
          p.increases[*l.le] = *d;
        } else {
          p.sum = *d;
        }
      } else if (counter) {
        Entry& e = Staged(&r, "s\n" + l.key);
        const std::optional<double> d = Increase(&r, &e, s.value(), s.timestamp());
        if (d && in_window && std::isfinite(*d)) AddScalar(&r, l, s.timestamp(), "/s", *d, true);
      } else if (in_window && std::isfinite(s.value())) {
        AddScalar(&r, l, s.timestamp(), "1", s.value(), false);
      }
    }
  }
  for (const auto& [at, values] : cumulative) {
    double below = 0, below_le = -kInf;
    for (const auto& [le, value] : values) {
      if (value < below) {
        const std::string name = at.first.substr(0, at.first.find('\n'));
        return Status::InvalidArgument(
            "series " + name + "_bucket at " + std::to_string(at.second) +
            " ms: buckets are not cumulative: le=" + NumberText(le) + " holds " +
            NumberText(value) + ", less than le=" + NumberText(below_le) + "'s " +
            NumberText(below));
      }
      below = value;
      below_le = le;
    }
  }
  for (const std::string& key : r.touched_groups) EmitClassic(&r, &*r.staged[key].group);
  for (const std::string& family : counters_here) {
    if (counter_families.size() < options.max_series) counter_families.insert(family);
  }
  Commit(&r);
  return std::move(r.writes);
}

void PromConverter::State::Commit(Request* r) {
  PromConvertCounters& c = counters;
  const PromConvertCounters& n = r->counts;
  ++c.requests;
  c.samples += n.samples;
  c.histogram_samples += n.histogram_samples;
  c.histogram_events += n.histogram_events;
  c.baselines += n.baselines;
  c.resets += n.resets;
  c.stale += n.stale;
  c.out_of_window += n.out_of_window;
  c.incomplete += n.incomplete;
  c.inexact_sums += n.inexact_sums;
  for (auto& [key, entry] : r->staged) {
    auto it = series.find(key);
    if (it == series.end()) {
      lru.push_front(key);
      it = series.emplace(key, Remembered{Entry{}, lru.begin()}).first;
      bytes += key.size() * 2 + sizeof(Remembered);
    } else {
      lru.splice(lru.begin(), lru, it->second.lru);
    }
    bytes -= it->second.entry.Bytes();
    bytes += entry.Bytes();
    it->second.entry = std::move(entry);
  }
  while (series.size() > 1 &&
         (series.size() > options.max_series || bytes > options.max_state_bytes)) {
    const auto last = series.find(lru.back());
    // What Commit added for it: the key twice (map and list), the slot, and the entry's growth.
    bytes -=
        last->second.entry.Bytes() - sizeof(Entry) + last->first.size() * 2 + sizeof(Remembered);
    series.erase(last);
    lru.pop_back();
    ++c.evicted_series;
  }
}

PromConverter::PromConverter(PromConvertOptions options)
    : state_(std::make_unique<State>(std::move(options))) {}
PromConverter::~PromConverter() = default;

Result<PromWrites> PromConverter::Convert(
    const prometheus::WriteRequest& request,
    const std::function<Status(std::string_view host)>& admit_host) {
  std::lock_guard<std::mutex> lock(mu_);
  return state_->Convert(request, admit_host);
}

PromConvertCounters PromConverter::counters() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_->counters;
}

size_t PromConverter::remembered_series() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_->series.size();
}

}  // namespace trailmap
