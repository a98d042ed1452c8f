// Reads `trailmap stats --format json` (docs/json.md) into plain structs for assertions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace trailmap::test {

struct GroupStats {
  uint64_t count = 0;
  uint64_t min = 0;
  uint64_t max = 0;
  double mean = 0;
  std::vector<std::pair<double, double>> percentiles;  // (p, value in base units)
};

// Group name -> its stats. Throws on JSON that does not have the documented shape.
std::map<std::string, GroupStats> ParseStats(const std::string& json);

}  // namespace trailmap::test
