#include "cli/trails_command.h"

#include <CLI/CLI.hpp>

namespace trailmap {

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
  cmd->add_option("--limit", flags->limit,
                  "Keep the first N trails after sorting (default: SVG and PNG draw the first that "
                  "fit --height, 4 px apart; JSON has every trail)");
  cmd->add_option("--height", flags->height,
                  "Pixels for the waterfall of an SVG or PNG; how many trails fit by default")
      ->capture_default_str()
      ->check(CLI::Range(100, 100000));
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
  TrailsRequest request = flags;
  request.format = OutputFormat(flags.format, flags.output, "svg");
  return FinishView(context, "trails", RunTrailsView(request, context), flags.output);
}

}  // namespace trailmap
