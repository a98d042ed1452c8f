#include "query/trails_command.h"

#include <CLI/CLI.hpp>
#include <ostream>

#include "core/units.h"
#include "query/render_trails.h"
#include "query/trails.h"

namespace trailmap {
namespace {

int Fail(const CliContext& context, const Status& status) {
  *context.err << "trailmap trails: " << status.message() << "\n";
  return ExitCodeFor(status);
}

// "0..20ms", "100us..5ms", "..20ms" (from 0).
Status ParseRange(const std::string& text, const std::string& unit, TrailOptions* options) {
  const size_t dots = text.find("..");
  if (dots == std::string::npos) {
    return Status::InvalidArgument("--range " + text + ": write LOW..HIGH, e.g. 0..20ms");
  }
  const std::string low = text.substr(0, dots), high = text.substr(dots + 2);
  uint64_t lo = 0;
  if (!low.empty() && low != "0") {
    Result<uint64_t> v = ParseQuantity(low, unit);
    if (!v.ok()) return Status::InvalidArgument("--range: " + v.status().message());
    lo = *v;
  }
  Result<uint64_t> hi = ParseQuantity(high, unit);
  if (!hi.ok()) return Status::InvalidArgument("--range: " + hi.status().message());
  if (*hi <= lo) return Status::InvalidArgument("--range " + text + ": HIGH must be above LOW");
  options->lo = lo;
  options->hi = *hi;
  return Status::Ok();
}

}  // namespace

CLI::App* AddTrailsCommand(CLI::App* app, TrailsFlags* flags) {
  CLI::App* cmd = app->add_subcommand(
      "trails",
      "Frequency trails: each host's distribution as a line where dense and rug ticks where "
      "sparse, in a waterfall sorted by CoV");
  AddQueryFlags(cmd, &flags->query);
  cmd->add_option("--range", flags->range,
                  "Value range LOW..HIGH with units (0..20ms); default 0 to the p99 of every "
                  "event, rounded up to 1, 2 or 5 x 10^k");
  cmd->add_option("--sort", flags->sort,
                  "Order, top of the waterfall first: cov, p99, p50, max, bimodality (largest "
                  "first) or name")
      ->capture_default_str()
      ->check(CLI::IsMember({"cov", "p99", "p50", "median", "max", "bimodality", "name"}));
  cmd->add_option("--limit", flags->limit, "Keep the first N trails after sorting");
  cmd->add_flag("--fill", flags->fill, "Fill under each trail's line");
  cmd->add_flag("--invert", flags->invert, "Light trails on black");
  cmd->add_flag("--border", flags->border,
                "Outline each trail and hide what is behind it, so overlapping trails stay apart");
  cmd->add_flag("--linear", flags->linear,
                "Heights are the density itself (default: its square root, so a band beside a "
                "tall spike stays visible)");
  cmd->add_option("--overlap", flags->overlap,
                  "Share of a trail's height the next one overlaps, 0..0.95 (default 0.85)")
      ->check(CLI::Range(0.0, 0.95));
  cmd->add_option("--threshold", flags->threshold,
                  "Density below this share of a trail's peak is drawn as rug ticks")
      ->capture_default_str();
  cmd->add_option("--bandwidth", flags->bandwidth,
                  "Kernel standard deviation with a unit (50us), 0 for none, or auto "
                  "(Silverman's rule per trail)")
      ->capture_default_str();
  cmd->add_option("--points", flags->points, "Points across the value range")
      ->capture_default_str()
      ->check(CLI::Range(16, 65536));
  cmd->add_option("--format,-f", flags->format,
                  "svg, png or json (docs/json.md); default svg, or png / json when -o ends in "
                  ".png / .json")
      ->check(CLI::IsMember({"svg", "png", "json"}));
  cmd->add_option("-o,--output", flags->output, "Write to FILE instead of standard output");
  cmd->footer(
      "Examples:\n"
      "  trailmap trails --metric disk.latency --from -10m -o trails.svg\n"
      "  trailmap trails --metric disk.latency --range 0..20ms --sort p99 --fill --border -o t.png\n"
      "  trailmap trails --metric http.server.latency --by url --format json\n"
      "Exit codes: 0 ok, 1 error, 2 usage error, 3 some shard did not answer (the view is "
      "drawn from the others).");
  return cmd;
}

int RunTrails(const TrailsFlags& flags, const CliContext& context) {
  Result<TimeRange> range = ParseTimeRange(flags.query, context.now);
  if (!range.ok()) return Fail(context, range.status());
  TrailOptions options;
  Result<TrailSort> sort = ParseTrailSort(flags.sort);
  if (!sort.ok()) return Fail(context, Status::InvalidArgument("--sort: " + sort.status().message()));
  options.sort = *sort;
  options.limit = flags.limit;
  options.points = flags.points;
  Result<double> threshold = ParsePercent(flags.threshold);
  if (!threshold.ok()) {
    return Fail(context, Status::InvalidArgument("--threshold: " + threshold.status().message()));
  }
  options.threshold = *threshold / 100;

  const std::string format = OutputFormat(flags.format, flags.output, "svg");

  // One column covering the whole range, one group per host (or field value).
  HistogramQuery query;
  query.metric = flags.query.metric;
  query.from = range->from;
  query.to = range->to;
  query.step = static_cast<uint32_t>(std::min<int64_t>(range->to - range->from, UINT32_MAX));
  query.group_by = flags.query.by.empty() ? "host" : flags.query.by;
  query.hosts = SplitList(flags.query.hosts);

  Result<Fetched> fetched = FetchGrid(context, flags.query, query);
  if (!fetched.ok()) return Fail(context, fetched.status());
  const std::string& unit = fetched->grid.unit;
  if (!flags.range.empty()) {
    if (Status s = ParseRange(flags.range, unit, &options); !s.ok()) return Fail(context, s);
  }
  if (flags.bandwidth != "auto") {
    if (flags.bandwidth == "0") {
      options.bandwidth = 0;
    } else {
      Result<uint64_t> bw = ParseQuantity(flags.bandwidth, unit);
      if (!bw.ok()) return Fail(context, Status::InvalidArgument("--bandwidth: " + bw.status().message()));
      options.bandwidth = static_cast<double>(*bw);
    }
  }

  TrailsView view = AssembleTrails(fetched->grid, options);
  view.missing_shards = fetched->missing;
  TrailsStyle style;
  style.fill = flags.fill;
  style.invert = flags.invert;
  style.border = flags.border;
  style.overlap = flags.overlap;
  style.root = !flags.linear;

  std::string bytes;
  if (format == "json") {
    bytes = RenderTrailsJson(view);
  } else if (format == "png") {
    Result<std::string> png = RenderTrailsPng(view, style);
    if (!png.ok()) return Fail(context, png.status());
    bytes = std::move(png).value();
  } else {
    bytes = RenderTrailsSvg(view, style);
  }
  if (Status s = WriteOutput(context, flags.output, bytes); !s.ok()) return Fail(context, s);
  return ReportMissing(context, fetched->missing);
}

}  // namespace trailmap
