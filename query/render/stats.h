// The renderings of a StatsTable: pure functions from the table to bytes.
#pragma once

#include <string>

#include "query/views/stats.h"

namespace trailmap {

// An aligned text table with values in the metric's unit ("12.5ms").
std::string RenderStatsTable(const StatsTable& table);
// JSON: see docs/json.md ("stats"); values in the base unit.
std::string RenderStatsJson(const StatsTable& table);
// CSV with a header line; values in the base unit, group names quoted when they need it.
std::string RenderStatsCsv(const StatsTable& table);

}  // namespace trailmap
