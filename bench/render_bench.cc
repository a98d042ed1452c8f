// Heat map rendering throughput: cells per second for SVG and PNG on one fixed large view
// (600 one-second columns × 500 rows, about 40% of cells non-empty: a cache band, a disk cloud
// and scattered outliers), the size a 10-minute --rows 500 view has. The target is at least
// 10 million cells a second, so drawing never costs more than the query. Items = all cells of
// the view, empty or not; the PNG figure includes libpng's encoding, the SVG one building the
// document string.
//
// Columns of 1,000 hosts: assembling them (each host's statistics and its spread over
// the rows) and writing SVG, PNG and JSON. Items = hosts.
//
// Frequency trails of 1,000 hosts: assembling them (statistics, mass, density, split)
// for every host or for the trails a picture keeps, and writing SVG, PNG and JSON. Items = trails.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <utility>

#include "query/render/columns.h"
#include "query/render/heatmap_png.h"
#include "query/render/heatmap_svg.h"
#include "query/render/trails.h"
#include "query/testing/views.h"
#include "query/views/columns.h"
#include "query/views/heatmap.h"
#include "query/views/trails.h"

namespace trailmap {
namespace {

const HeatmapView& LargeView() {
  static const HeatmapView view = [] {
    MergedGrid grid;
    grid.metric = "disk.latency";
    grid.from = 1'795'363'200;
    grid.columns = 600;
    grid.to = grid.from + grid.columns;
    grid.groups = {""};
    grid.cells.assign(1, std::vector<Histogram>(grid.columns));
    std::mt19937_64 rng(7);
    std::lognormal_distribution<double> cache(std::log(400'000.0), 0.5);
    std::lognormal_distribution<double> disk(std::log(6'000'000.0), 0.6);
    std::uniform_real_distribution<double> outlier(0, 50'000'000);
    for (uint32_t c = 0; c < grid.columns; ++c) {
      for (int i = 0; i < 3000; ++i) grid.cells[0][c].Record(static_cast<uint64_t>(cache(rng)));
      for (int i = 0; i < 800; ++i) grid.cells[0][c].Record(static_cast<uint64_t>(disk(rng)));
      for (int i = 0; i < 5; ++i) grid.cells[0][c].Record(static_cast<uint64_t>(outlier(rng)));
    }
    HeatmapOptions options;
    options.rows = 500;
    options.ymax = 50'000'000;
    return *AssembleHeatmap(grid, options);
  }();
  return view;
}

void BM_RenderSvg(benchmark::State& state) {
  const HeatmapView& view = LargeView();
  SvgOptions options;
  options.plot_width = 1200;
  options.plot_height = 1500;
  size_t bytes = 0;
  for (auto _ : state) {
    std::string svg = RenderHeatmapSvg(view, options);
    bytes = svg.size();
    benchmark::DoNotOptimize(svg);
  }
  state.SetItemsProcessed(state.iterations() * int64_t{view.rows} * view.columns);
  state.counters["nonzero_cells"] = static_cast<double>(view.nonzero_cells);
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_RenderSvg)->Unit(benchmark::kMillisecond);

void BM_RenderPng(benchmark::State& state) {
  const HeatmapView& view = LargeView();
  PngOptions options;
  options.plot_width = 1200;
  options.plot_height = 1500;
  size_t bytes = 0;
  for (auto _ : state) {
    Result<std::string> png = RenderHeatmapPng(view, options);
    bytes = png->size();
    benchmark::DoNotOptimize(png);
  }
  state.SetItemsProcessed(state.iterations() * int64_t{view.rows} * view.columns);
  state.counters["nonzero_cells"] = static_cast<double>(view.nonzero_cells);
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_RenderPng)->Unit(benchmark::kMillisecond);

// Drawing alone, without the PNG encoding: where the time goes.
void BM_DrawPngCanvas(benchmark::State& state) {
  const HeatmapView& view = LargeView();
  PngOptions options;
  options.plot_width = 1200;
  options.plot_height = 1500;
  for (auto _ : state) {
    Canvas canvas = DrawHeatmap(view, options);
    benchmark::DoNotOptimize(canvas);
  }
  state.SetItemsProcessed(state.iterations() * int64_t{view.rows} * view.columns);
}
BENCHMARK(BM_DrawPngCanvas)->Unit(benchmark::kMillisecond);

// 1,000 hosts, each a cache band, a disk band and rare outliers, in one column; a tenth of the
// hosts slower, a tenth bimodal with more cache hits.
const MergedGrid& FleetGrid() {
  static const MergedGrid grid = [] {
    MergedGrid g = testing_views::HostGrid({});
    std::mt19937_64 rng(3);
    std::uniform_real_distribution<double> pick(0, 1);
    std::lognormal_distribution<double> outlier(std::log(250e6), 0.5);
    for (int h = 0; h < 1000; ++h) {
      char name[16];
      std::snprintf(name, sizeof name, "sim-%03d", h + 1);
      g.groups.push_back(name);
      std::lognormal_distribution<double> cache(std::log(40e3 * (1 + h % 7 * 0.1)), 0.35);
      std::lognormal_distribution<double> disk(std::log(4e6 * (h % 10 == 3 ? 3 : 1)), 0.45);
      const double cache_share = h % 10 == 7 ? 0.85 : 0.6;
      Histogram hist;
      for (int i = 0; i < 20000; ++i) {
        const double p = pick(rng);
        hist.Record(static_cast<uint64_t>(p < 0.001         ? outlier(rng)
                                          : p < cache_share ? cache(rng)
                                                            : disk(rng)));
      }
      g.cells.push_back({std::move(hist)});
    }
    return g;
  }();
  return grid;
}

void BM_AssembleTrails(benchmark::State& state) {
  TrailOptions options;
  options.limit = static_cast<size_t>(state.range(0));
  const MergedGrid& grid = FleetGrid();  // made once, before the timing
  for (auto _ : state) {
    TrailsView view = AssembleTrails(grid, options);
    benchmark::DoNotOptimize(view);
  }
  state.SetItemsProcessed(state.iterations() * 1000);
}
// 0: every host's shape (JSON); 200: the trails a default picture draws.
BENCHMARK(BM_AssembleTrails)->Arg(0)->Arg(200)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_AssembleColumns(benchmark::State& state) {
  const MergedGrid& grid = FleetGrid();
  for (auto _ : state) {
    state.PauseTiming();  // the CLI moves its grid in; the copy is not the view's work
    MergedGrid copy = grid;
    state.ResumeTiming();
    Result<ColumnsView> view = AssembleColumns(std::move(copy), {});
    benchmark::DoNotOptimize(view);
  }
  state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_AssembleColumns)->Unit(benchmark::kMillisecond)->UseRealTime();

// Times the renderer state.range(0) picks ({0 SVG, 1 PNG, 2 JSON}) of a view of `items` items.
template <typename Svg, typename Png, typename Json>
void TimeRenderer(benchmark::State& state, int64_t items, const Svg& svg, const Png& png,
                  const Json& json) {
  size_t bytes = 0;
  for (auto _ : state) {
    std::string out = state.range(0) == 0 ? svg() : state.range(0) == 1 ? png() : json();
    bytes = out.size();
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(state.iterations() * items);
  state.counters["bytes"] = static_cast<double>(bytes);
}

// {0 SVG, 1 PNG, 2 JSON} of the 1,000 hosts' columns.
void BM_RenderColumns(benchmark::State& state) {
  static const ColumnsView view = *AssembleColumns(FleetGrid(), {});
  TimeRenderer(
      state, 1000, [] { return RenderColumnsSvg(view); }, [] { return *RenderColumnsPng(view); },
      [] { return RenderColumnsJson(view); });
}
BENCHMARK(BM_RenderColumns)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

// Every trail (the JSON, or --limit 1000), or the 225 a default picture draws.
const TrailsView& FleetTrails(bool fitted) {
  static const TrailsView all = AssembleTrails(FleetGrid(), {});
  static const TrailsView fit = [] {
    TrailOptions options;
    options.limit = TrailsThatFit({});
    return AssembleTrails(FleetGrid(), options);
  }();
  return fitted ? fit : all;
}

void BM_RenderTrails(benchmark::State& state) {
  const TrailsView& view = FleetTrails(state.range(1) != 0);
  TimeRenderer(
      state, static_cast<int64_t>(view.trails.size()), [&view] { return RenderTrailsSvg(view); },
      [&view] { return *RenderTrailsPng(view); }, [&view] { return RenderTrailsJson(view); });
}
// {0 SVG, 1 PNG, 2 JSON} × {all 1,000 trails (a 4,000 px tall picture), the 225 that fit}.
BENCHMARK(BM_RenderTrails)
    ->Args({0, 0})
    ->Args({1, 0})
    ->Args({2, 0})
    ->Args({0, 1})
    ->Args({1, 1})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace trailmap

BENCHMARK_MAIN();
