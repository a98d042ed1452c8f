#include "tests/stats_json.h"

#include <nlohmann/json.hpp>

namespace trailmap::test {

std::map<std::string, GroupStats> ParseStats(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text);
  std::map<std::string, GroupStats> out;
  for (const auto& row : j.at("rows")) {
    GroupStats s;
    s.count = row.at("count").get<uint64_t>();
    s.min = row.at("min").get<uint64_t>();
    s.max = row.at("max").get<uint64_t>();
    s.mean = row.at("mean").get<double>();
    for (const auto& [name, p] :
         {std::pair{"p50", 50.0}, {"p90", 90.0}, {"p99", 99.0}, {"p99.9", 99.9}}) {
      s.percentiles.emplace_back(p, row.at(name).get<double>());
    }
    out[row.at("group").get<std::string>()] = s;
  }
  return out;
}

}  // namespace trailmap::test
