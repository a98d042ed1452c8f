// The catalog views, `trailmap metrics` and `trailmap fields` (and /api/metrics, /api/fields): what
// the aggregators hold, so a user can find a metric and the fields to filter (--where) and
// decompose (--by) it by, without reading agent configs.
//
//   trailmap metrics                         name, kind, unit, field keys and description of
//                                            every metric
//   trailmap fields --metric disk.latency    each field (and host) with the values seen in the
//                                            time range and how many events each had (host-
//                                            seconds for a scalar metric), with a note when
//                                            events went to the overflow series
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "core/status.h"
#include "query/fetch/view_request.h"
#include "query/run/options.h"
#include "query/run/view_document.h"

namespace trailmap {

struct MetricsRequest {
  ViewRequest query;             // only the aggregators and the timeout are used
  std::string format = "table";  // table | json
};

struct FieldsRequest {
  ViewRequest query;
  std::string format = "table";  // table | json
  size_t top = 20;               // values shown per field, most events first; 0 = all
};

// The catalog views' parameters (query/run/options.h): a new option is a member above and a row
// here.
inline const OptionTable<MetricsRequest>& MetricsParameters() {
  using R = MetricsRequest;
  static const OptionTable<R> table = [] {
    OptionTable<R> t;
    t.Include(ShardParameters(), &R::query);
    t.Choice("format", &R::format, {"table", "json"}, "table or json").Short('f');
    return t;
  }();
  return table;
}
inline const OptionTable<FieldsRequest>& FieldsParameters() {
  using R = FieldsRequest;
  static const OptionTable<R> table = [] {
    OptionTable<R> t;
    t.Include(ViewRequestParameters(), &R::query);
    t.Choice("format", &R::format, {"table", "json"}, "table or json").Short('f');
    t.Whole("top", &R::top, 0, 1'000'000, "Values shown per field, most events first (0 = all)",
            "5");
    return t;
  }();
  return table;
}

Result<ViewDocument> RunMetricsView(const MetricsRequest& request, const QueryContext& context);
Result<ViewDocument> RunFieldsView(const FieldsRequest& request, const QueryContext& context);

// The field of the series an agent merges events into past its cardinality bound
// (ingest/bucketizer.h): overflow="true".
inline constexpr const char* kOverflowField = "overflow";
// "note: N events over the cardinality bound went to the overflow series ...".
std::string OverflowNote(uint64_t events);

// The overflow note, the named second stage of the heat map's and the stats' plans: after the
// view's own fan-out, and only when every shard answered it (else the note would count without
// the silent ones), OverflowNote when events of request.metric in [from, to) that pass
// request.where went to the overflow series, else nullopt. It asks the catalog, and only when the
// metric has an overflow series at all a count of the events that pass request.where and
// `overflow == "true"`, joined as a tree (query/run/predicate_tree.h). Both fan-outs get what is
// left of the view's own deadline, request.timeout counted from `view_started`, and carry its
// budgets (max-keys, max-cells); with no time left, or on any failure, nullopt (it is a note).
std::optional<std::string> OverflowNoteFor(const QueryContext& context, const ViewRequest& request,
                                           int64_t from, int64_t to,
                                           std::chrono::steady_clock::time_point view_started);

}  // namespace trailmap
