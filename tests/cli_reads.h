// What the real CLI says about one metric, for the system tests of producers (statsd clients,
// OTLP exporters): each runs `trailmap ... --format json` against the aggregators in `q`.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tests/stats_json.h"

namespace trailmap::test {

// `trailmap line --step 1 --format json` of one scalar metric over the last 5 minutes: its unit
// and its non-null values in time order (every series, one after another). Empty when it fails.
struct Line {
  std::string unit;
  std::vector<double> values;
  double sum() const;
};
Line ReadLine(const std::string& metric, const std::string& q, const std::string& where = "");

// `trailmap stats --format json` of one metric over the last 5 minutes, by `by` ("" = one
// group). Empty when it fails.
std::map<std::string, GroupStats> ReadStats(const std::string& metric, const std::string& by,
                                            const std::string& q);

}  // namespace trailmap::test
