// Small fixed views for the renderer tests (golden files) and the CLI tests.
#pragma once

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "query/fetch/partials.h"
#include "query/views/heatmap.h"

namespace trailmap::testing_views {

// A grid of `metric` with `columns` empty columns of `step` seconds from `from`, grouped by host
// into `hosts`.
inline MergedGrid EmptyHostGrid(std::string metric, int64_t from, uint32_t step, uint32_t columns,
                                std::vector<std::string> hosts) {
  MergedGrid grid;
  grid.metric = std::move(metric);
  grid.from = from;
  grid.to = from + int64_t{step} * columns;
  grid.step = step;
  grid.columns = columns;
  grid.group_by = "host";
  grid.groups = std::move(hosts);
  grid.cells.assign(grid.groups.size(), std::vector<Histogram>(columns));
  return grid;
}

// A disk.latency grid of one 10-minute column from 2026-11-22T16:00:00Z grouped by host, a cell
// for each of `hosts`, all empty: what the sorted per-host views (columns, trails) assemble.
inline MergedGrid HostGrid(std::vector<std::string> hosts) {
  return EmptyHostGrid("disk.latency", 1'795'363'200, 600, 1, std::move(hosts));
}

// 12 one-second columns from 2026-11-22T16:00:00Z, 8 rows up to 20 ms: a band near 3 ms with a
// slow spell in columns 5-7 and a lone outlier at 17 ms.
inline HeatmapView Small(Coloring coloring = Coloring::kRank) {
  MergedGrid grid;
  grid.metric = "disk.latency";
  grid.from = 1'795'363'200;
  grid.columns = 12;
  grid.to = grid.from + grid.columns;
  grid.step = 1;
  grid.groups = {""};
  grid.cells.assign(1, std::vector<Histogram>(grid.columns));
  for (uint32_t c = 0; c < grid.columns; ++c) {
    grid.cells[0][c].Record(3'000'000 + c * 20'000, 200 + c * 10);
    grid.cells[0][c].Record(1'000'000, 20);
    if (c >= 5 && c <= 7) grid.cells[0][c].Record(9'000'000, 30 * (c - 4));
  }
  grid.cells[0][9].Record(17'000'000, 1);
  HeatmapOptions options;
  options.rows = 8;
  options.coloring = coloring;
  return *AssembleHeatmap(grid, options);
}

// http.server.latency over one minute from 1'700'000'000, by host: web-1 100,000 lognormal
// values around 2 ms (each also appended to `a_values` when given), web-2 ten at 50 ms.
inline MergedGrid TwoLatencyHosts(std::vector<uint64_t>* a_values = nullptr) {
  MergedGrid grid = EmptyHostGrid("http.server.latency", 1'700'000'000, 60, 1, {"web-1", "web-2"});
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> latency(std::log(2e6), 0.8);
  for (int i = 0; i < 100'000; ++i) {
    const auto v = static_cast<uint64_t>(latency(rng));
    if (a_values) a_values->push_back(v);
    grid.cells[0][0].Record(v);
  }
  grid.cells[1][0].Record(50'000'000, 10);
  return grid;
}

}  // namespace trailmap::testing_views
