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

#include "cli/cli_common.h"
#include "query/run/catalog.h"

namespace trailmap {

using MetricsFlags = MetricsRequest;
using FieldsFlags = FieldsRequest;

CLI::App* AddMetricsCommand(CLI::App* app, MetricsFlags* flags);
int RunMetrics(const MetricsFlags& flags, const CliContext& context);
CLI::App* AddFieldsCommand(CLI::App* app, FieldsFlags* flags);
int RunFields(const FieldsFlags& flags, const CliContext& context);

}  // namespace trailmap
