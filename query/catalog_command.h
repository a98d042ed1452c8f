// `trailmap metrics` and `trailmap fields`: what the aggregators hold, so a user can find a
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

#include <string>

#include "query/cli_common.h"

namespace trailmap {

struct MetricsFlags {
  QueryFlags query;              // only the aggregator and timeout flags are used
  std::string format = "table";  // table | json
};

struct FieldsFlags {
  QueryFlags query;
  std::string format = "table";  // table | json
  size_t top = 20;               // values shown per field, most events first; 0 = all
};

// The field of the series an agent merges events into past its cardinality bound
// (agent/bucketizer.h): overflow="true".
inline constexpr const char* kOverflowField = "overflow";
// "note: N events over the cardinality bound went to the overflow series ...".
std::string OverflowNote(uint64_t events);

// Prints OverflowNote to stderr when events of flags.query.metric in [from, to) that pass
// flags.where went to the overflow series. Costs one catalog query, and a second (counting) query
// only when the metric has an overflow series at all; failures are silent (it is a note).
void NoteOverflow(const CliContext& context, const QueryFlags& flags, int64_t from, int64_t to);

CLI::App* AddMetricsCommand(CLI::App* app, MetricsFlags* flags);
int RunMetrics(const MetricsFlags& flags, const CliContext& context);
CLI::App* AddFieldsCommand(CLI::App* app, FieldsFlags* flags);
int RunFields(const FieldsFlags& flags, const CliContext& context);

}  // namespace trailmap
