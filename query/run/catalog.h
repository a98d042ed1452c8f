// The catalog views, `trailmap metrics` and `trailmap fields` (and /api/metrics, /api/fields): what the aggregators hold, so a user can find a
// metric and the fields to filter (--where) and decompose (--by) it by, without reading agent
// configs.
//
//   trailmap metrics                         name, kind, unit, field keys and description of
//                                            every metric
//   trailmap fields --metric disk.latency    each field (and host) with the values seen in the
//                                            time range and how many events each had (host-
//                                            seconds for a scalar metric), with a note when
//                                            events went to the overflow series
#pragma once

#include <cstdint>
#include <future>
#include <optional>
#include <string>

#include "core/status.h"
#include "query/fetch/view_request.h"
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

Result<ViewDocument> RunMetricsView(const MetricsRequest& request, const QueryContext& context);
Result<ViewDocument> RunFieldsView(const FieldsRequest& request, const QueryContext& context);

// The field of the series an agent merges events into past its cardinality bound
// (ingest/bucketizer.h): overflow="true".
inline constexpr const char* kOverflowField = "overflow";
// "note: N events over the cardinality bound went to the overflow series ...".
std::string OverflowNote(uint64_t events);

// OverflowNote when events of request.metric in [from, to) that pass request.where went to the
// overflow series, else nullopt. Costs one catalog query, and a second (counting) query only when
// the metric has an overflow series at all; failures give nullopt (it is a note).
std::optional<std::string> OverflowNoteFor(const QueryContext& context, const ViewRequest& request,
                                           int64_t from, int64_t to);

// OverflowNoteFor on its own thread, started before a view's own query so that its round trips
// overlap that query's instead of following it (a small view is mostly round trips). `context`
// must outlive the future, whose destructor waits for the thread.
std::future<std::optional<std::string>> StartOverflowNote(const QueryContext& context,
                                                          ViewRequest request, int64_t from,
                                                          int64_t to);

}  // namespace trailmap
