#include "query/render/heatmap_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "query/testing/views.h"

namespace trailmap {
namespace {

TEST(RenderJson, Shape) {
  HeatmapView view = testing_views::Small();
  view.missing_shards = {"tcp://b:7401: no answer within 5000 ms"};
  const auto j = nlohmann::json::parse(RenderHeatmapJson(view));
  EXPECT_EQ(j["view"], "heatmap");
  EXPECT_EQ(j["metric"], "disk.latency");
  EXPECT_EQ(j["unit"], "ns");
  EXPECT_EQ(j["coloring"], "rank");
  EXPECT_EQ(j["ymin"], 0);
  EXPECT_EQ(j["ymax"], 20'000'000);
  EXPECT_EQ(j["rows"], 8);
  EXPECT_EQ(j["columns"], 12);
  EXPECT_EQ(j["step"], 1);
  EXPECT_EQ(j["above"], 0);
  ASSERT_EQ(j["counts"].size(), 8u);
  ASSERT_EQ(j["counts"][0].size(), 12u);
  ASSERT_EQ(j["saturation"].size(), 8u);
  ASSERT_EQ(j["levels"][7].size(), 12u);
  ASSERT_EQ(j["row_bounds"].size(), 8u);
  EXPECT_EQ(j["row_bounds"][1][0], 2'500'000.0);
  EXPECT_EQ(j["row_bounds"][1][1], 5'000'000.0);
  ASSERT_EQ(j["column_times"].size(), 12u);
  EXPECT_EQ(j["column_times"][1], 1'795'363'201);
  EXPECT_EQ(j["palette"].size(), 32u);
  EXPECT_EQ(j["palette"][0], "#ffffff");
  EXPECT_EQ(j["counts"][6][9], 1);  // the outlier at 17 ms
  EXPECT_EQ(j["missing_shards"][0], "tcp://b:7401: no answer within 5000 ms");
  uint64_t sum = 0;
  for (const auto& row : j["counts"]) {
    for (const auto& c : row) sum += c.get<uint64_t>();
  }
  EXPECT_EQ(sum, j["total"].get<uint64_t>());
  EXPECT_FALSE(j.contains("groups"));
  // The compact form is the same document.
  EXPECT_EQ(nlohmann::json::parse(RenderHeatmapJson(view, false)), j);
}

}  // namespace
}  // namespace trailmap
