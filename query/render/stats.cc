#include "query/render/stats.h"

#include <nlohmann/json.hpp>

#include "core/timespec.h"
#include "core/units.h"
#include "query/draw/json_text.h"
#include "query/draw/view_text.h"
#include "query/render/micro_trail.h"

namespace trailmap {
namespace {

size_t DisplayWidth(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;  // "µ" is one column
  return n;
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string RenderStatsTable(const StatsTable& table) {
  const std::string first = table.group_by.empty() ? "" : table.group_by;
  std::vector<std::vector<std::string>> cells;
  cells.push_back({first, "count", "mean", "min", "p50", "p90", "p99", "p99.9", "max",
                   "trail 0–" + FormatQuantity(static_cast<double>(table.trail_top), table.unit)});
  for (const StatsRow& r : table.rows) {
    auto q = [&table](double v) { return FormatQuantity(v, table.unit); };
    cells.push_back({table.group_by.empty() ? "all" : (r.group.empty() ? "(none)" : r.group),
                     FormatCount(r.count), q(r.mean), q(static_cast<double>(r.min)),
                     q(static_cast<double>(r.p50)), q(static_cast<double>(r.p90)),
                     q(static_cast<double>(r.p99)), q(static_cast<double>(r.p999)),
                     q(static_cast<double>(r.max)), Sparkline(r.trail)});
  }
  std::vector<size_t> width(cells.front().size(), 0);
  for (const auto& row : cells) {
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], DisplayWidth(row[i]));
  }
  std::string out = table.metric + "  " + FormatRfc3339(table.from) + " + " +
                    FormatSpan(table.to - table.from) + "\n";
  for (const auto& row : cells) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      const std::string pad(width[i] - DisplayWidth(row[i]), ' ');
      // The group name and the trail are left-aligned, numbers right-aligned.
      line += i == 0 ? row[i] + pad : i + 1 == row.size() ? "  " + row[i] + pad : "  " + pad + row[i];
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  if (table.rows.empty()) out += "(no events in this range)\n";
  for (const std::string& m : table.missing_shards) out += "shard missing: " + m + "\n";
  return out;
}

std::string RenderStatsJson(const StatsTable& table) {
  nlohmann::ordered_json j;
  AddJsonHead({.view = "stats", .metric = table.metric, .unit = table.unit,
               .group_by = table.group_by, .from = table.from, .to = table.to},
              &j);
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const StatsRow& r : table.rows) {
    rows.push_back({{"group", r.group},
                    {"count", r.count},
                    {"mean", r.mean},
                    {"min", r.min},
                    {"p50", r.p50},
                    {"p90", r.p90},
                    {"p99", r.p99},
                    {"p99.9", r.p999},
                    {"max", r.max},
                    {"trail", Sparkline(r.trail)}});
  }
  j["trail_range"] = {0, table.trail_top};
  j["rows"] = std::move(rows);
  j["missing_shards"] = table.missing_shards;
  return j.dump(2) + "\n";
}

std::string RenderStatsCsv(const StatsTable& table) {
  std::string out = "group,count,mean,min,p50,p90,p99,p99.9,max\n";
  for (const StatsRow& r : table.rows) {
    char mean[32];
    std::snprintf(mean, sizeof mean, "%.1f", r.mean);
    out += CsvField(r.group) + "," + std::to_string(r.count) + "," + mean + "," +
           std::to_string(r.min) + "," + std::to_string(r.p50) + "," + std::to_string(r.p90) + "," +
           std::to_string(r.p99) + "," + std::to_string(r.p999) + "," + std::to_string(r.max) +
           "\n";
  }
  return out;
}

}  // namespace trailmap
