#include "query/views/stats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>

#include "query/render/stats.h"

namespace trailmap {
namespace {

MergedGrid TwoHosts(std::vector<uint64_t>* a_values) {
  MergedGrid grid;
  grid.metric = "http.server.latency";
  grid.from = 1'700'000'000;
  grid.to = grid.from + 60;
  grid.step = 60;
  grid.columns = 1;
  grid.group_by = "host";
  grid.groups = {"web-1", "web-2"};
  grid.cells.assign(2, std::vector<Histogram>(1));
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> latency(std::log(2e6), 0.8);
  for (int i = 0; i < 100'000; ++i) {
    const auto v = static_cast<uint64_t>(latency(rng));
    a_values->push_back(v);
    grid.cells[0][0].Record(v);
  }
  grid.cells[1][0].Record(50'000'000, 10);
  return grid;
}

uint64_t Exact(std::vector<uint64_t> values, double p) {
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<size_t>(std::ceil(p / 100 * values.size()));
  return values[std::max<size_t>(rank, 1) - 1];
}

TEST(Stats, PercentilesWithinTheHistogramError) {
  std::vector<uint64_t> values;
  StatsTable table = ComputeStats(TwoHosts(&values));
  ASSERT_EQ(table.rows.size(), 2u);
  const StatsRow& a = table.rows[0];
  EXPECT_EQ(a.group, "web-1");
  EXPECT_EQ(a.count, 100'000u);
  EXPECT_EQ(a.min, *std::min_element(values.begin(), values.end()));
  EXPECT_EQ(a.max, *std::max_element(values.begin(), values.end()));
  const std::pair<double, uint64_t> checks[] = {
      {50, a.p50}, {90, a.p90}, {99, a.p99}, {99.9, a.p999}};
  for (const auto& [p, got] : checks) {
    const double want = static_cast<double>(Exact(values, p));
    EXPECT_NEAR(static_cast<double>(got), want, want * 0.008) << "p" << p;
  }
  double sum = 0;
  for (uint64_t v : values) sum += static_cast<double>(v);
  EXPECT_NEAR(a.mean, sum / values.size(), 1e-6 * a.mean);
}

TEST(Stats, SortAndTop) {
  std::vector<uint64_t> values;
  StatsTable table = ComputeStats(TwoHosts(&values));
  SortStats(&table, StatsSort::kP99, 1);
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_EQ(table.rows[0].group, "web-2");  // 50 ms beats ~12 ms
  EXPECT_FALSE(ParseStatsSort("p42").ok());
  EXPECT_EQ(*ParseStatsSort("p99.9"), StatsSort::kP999);
}

TEST(Stats, Renderings) {
  std::vector<uint64_t> values;
  StatsTable table = ComputeStats(TwoHosts(&values));
  table.rows[1].group = "web,2";  // needs quoting in CSV
  const std::string text = RenderStatsTable(table);
  EXPECT_NE(text.find("host     count    mean"), std::string::npos) << text;
  EXPECT_NE(text.find("50ms"), std::string::npos);
  const std::string csv = RenderStatsCsv(table);
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "group,count,mean,min,p50,p90,p99,p99.9,max");
  EXPECT_NE(csv.find("\"web,2\",10,50000000.0,"), std::string::npos) << csv;
  const auto j = nlohmann::json::parse(RenderStatsJson(table));
  EXPECT_EQ(j["view"], "stats");
  EXPECT_EQ(j["rows"].size(), 2u);
  EXPECT_EQ(j["rows"][1]["p99"], 50'000'000);
}

TEST(Stats, RowsCarryAMicroTrailOnOneAxis) {
  std::vector<uint64_t> values;
  StatsTable table = ComputeStats(TwoHosts(&values));
  EXPECT_EQ(table.trail_top, 20'000'000u);  // the p99 of everything (~13 ms), rounded up
  ASSERT_EQ(table.rows.size(), 2u);
  size_t chars = 0;
  for (unsigned char c : table.rows[0].trail) chars += (c & 0xC0) != 0x80;
  EXPECT_EQ(chars, kStatsTrailWidth);
  EXPECT_NE(table.rows[0].trail.find("█"), std::string::npos);
  EXPECT_EQ(table.rows[1].trail, std::string(kStatsTrailWidth, ' '));  // all at 50 ms, off the axis
  const std::string text = RenderStatsTable(table);
  EXPECT_NE(text.find("trail 0–20ms"), std::string::npos);
  EXPECT_NE(text.find(table.rows[0].trail), std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(RenderStatsJson(table));
  EXPECT_EQ(j["rows"][0]["trail"], table.rows[0].trail);
  EXPECT_EQ(j["trail_range"][1], 20'000'000);
}

}  // namespace
}  // namespace trailmap
