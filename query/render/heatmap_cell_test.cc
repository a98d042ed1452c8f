#include "query/render/heatmap_cell.h"

#include <gtest/gtest.h>

namespace trailmap {
namespace {

HeatmapCell Cell() {
  HeatmapCell cell;
  cell.metric = "disk.latency";
  cell.unit = "ns";
  cell.from = 1'795'363'205;  // 2026-11-22T16:00:05Z
  cell.to = 1'795'363'206;
  cell.row = 3;
  cell.column = 5;
  cell.low = 6'000'000;
  cell.high = 8'000'000;
  cell.count = 7;
  cell.group_by = "disk";
  cell.groups = {{"sdb", 5}, {"", 2}};
  cell.hosts = {{"web-2", 4}, {"web-1", 3}};
  cell.missing_shards = {"tcp://b:7401: no answer"};
  return cell;
}

TEST(HeatmapCellText, ALineForTheCellThenItsGroupsAndHosts) {
  EXPECT_EQ(RenderHeatmapCellText(Cell()),
            "disk.latency cell 16:00:05–16:00:06 UTC, 6ms to 8ms: 7 events\n"
            "by disk:\n"
            "  sdb  5\n"
            "  (none)  2\n"
            "by host:\n"
            "  web-2  4\n"
            "  web-1  3\n");
  HeatmapCell one = Cell();
  one.count = 1;
  one.groups.clear();
  one.hosts.clear();
  EXPECT_EQ(RenderHeatmapCellText(one),
            "disk.latency cell 16:00:05–16:00:06 UTC, 6ms to 8ms: 1 event\n"
            "by host:\n"
            "  (none)\n");
}

TEST(HeatmapCellJson, EveryKeyInOrder) {
  EXPECT_EQ(RenderHeatmapCellJson(Cell()),
            "{\n"
            "  \"view\": \"heatmap_cell\",\n"
            "  \"metric\": \"disk.latency\",\n"
            "  \"unit\": \"ns\",\n"
            "  \"from\": 1795363205,\n"
            "  \"to\": 1795363206,\n"
            "  \"row\": 3,\n"
            "  \"column\": 5,\n"
            "  \"low\": 6000000.0,\n"
            "  \"high\": 8000000.0,\n"
            "  \"count\": 7,\n"
            "  \"group_by\": \"disk\",\n"
            "  \"groups\": [\n"
            "    {\n"
            "      \"value\": \"sdb\",\n"
            "      \"count\": 5\n"
            "    },\n"
            "    {\n"
            "      \"value\": \"\",\n"
            "      \"count\": 2\n"
            "    }\n"
            "  ],\n"
            "  \"hosts\": [\n"
            "    {\n"
            "      \"host\": \"web-2\",\n"
            "      \"count\": 4\n"
            "    },\n"
            "    {\n"
            "      \"host\": \"web-1\",\n"
            "      \"count\": 3\n"
            "    }\n"
            "  ],\n"
            "  \"missing_shards\": [\n"
            "    \"tcp://b:7401: no answer\"\n"
            "  ]\n"
            "}\n");
}

}  // namespace
}  // namespace trailmap
