#include "tests/cli_reads.h"

#include <nlohmann/json.hpp>

#include "tests/cluster.h"

namespace trailmap::test {

double Line::sum() const {
  double s = 0;
  for (double v : values) s += v;
  return s;
}

Line ReadLine(const std::string& metric, const std::string& q, const std::string& where) {
  Line out;
  std::vector<std::string> args = {"line",   "--metric", metric,     "--step", "1",
                                   "--from", "-5m",      "--format", "json"};
  if (!where.empty()) args.insert(args.end(), {"--where", where});
  CommandResult r = Cli(args, q);
  if (r.exit_code != 0) return out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  out.unit = j.value("unit", "");
  for (const auto& series : j.at("series")) {
    for (const auto& v : series.at("values")) {
      if (!v.is_null()) out.values.push_back(v.get<double>());
    }
  }
  return out;
}

std::map<std::string, GroupStats> ReadStats(const std::string& metric, const std::string& by,
                                            const std::string& q) {
  std::vector<std::string> args = {"stats", "--metric", metric, "--from",
                                   "-5m",   "--format", "json"};
  if (!by.empty()) args.insert(args.end(), {"--by", by});
  CommandResult r = Cli(args, q);
  if (r.exit_code != 0) return {};
  return ParseStats(r.out);
}

}  // namespace trailmap::test
