#include "query/render/stats.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "query/render/micro_trail.h"
#include "query/testing/views.h"
#include "query/views/stats.h"

namespace trailmap {
namespace {

TEST(Stats, Renderings) {
  StatsTable table = ComputeStats(testing_views::TwoLatencyHosts());
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
  StatsTable table = ComputeStats(testing_views::TwoLatencyHosts());
  EXPECT_EQ(table.trail_top, 20'000'000u);  // the p99 of everything (~13 ms), rounded up
  ASSERT_EQ(table.rows.size(), 2u);
  ASSERT_EQ(table.rows[0].trail.size(), kStatsTrailWidth);
  const std::string trail = Sparkline(table.rows[0].trail);
  size_t chars = 0;
  for (unsigned char c : trail) chars += (c & 0xC0) != 0x80;
  EXPECT_EQ(chars, kStatsTrailWidth);
  EXPECT_NE(trail.find("█"), std::string::npos);
  // All at 50 ms, off the axis.
  EXPECT_EQ(Sparkline(table.rows[1].trail), std::string(kStatsTrailWidth, ' '));
  const std::string text = RenderStatsTable(table);
  EXPECT_NE(text.find("trail 0–20ms"), std::string::npos);
  EXPECT_NE(text.find(trail), std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(RenderStatsJson(table));
  EXPECT_EQ(j["rows"][0]["trail"], trail);
  EXPECT_EQ(j["trail_range"][1], 20'000'000);
}

}  // namespace
}  // namespace trailmap
