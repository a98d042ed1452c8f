// Heat map rendering throughput: cells per second for SVG and PNG on one fixed large view
// (600 one-second columns × 500 rows, about 40% of cells non-empty: a cache band, a disk cloud
// and scattered outliers), the size a 10-minute --rows 500 view has. The target is at least
// 10 million cells a second, so drawing never costs more than the query. Items = all cells of
// the view, empty or not; the PNG figure includes libpng's encoding, the SVG one building the
// document string.
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>

#include "query/views/heatmap.h"
#include "query/render/heatmap_png.h"
#include "query/render/heatmap_svg.h"

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

}  // namespace
}  // namespace trailmap

BENCHMARK_MAIN();
