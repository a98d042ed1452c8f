#include "cli/flame_command.h"

#include <CLI/CLI.hpp>

#include "cli/cli_common.h"

namespace trailmap {
namespace {

// The fleet flags, in their own group of the help text.
void AddFleetFlags(CLI::App* cmd, FlameFleetFlags* f) {
  const char* group = "Fleet (without --folded)";
  cmd->add_option("--metric,-m", f->view.metric, "Stacks metric to draw")
      ->capture_default_str()
      ->group(group);
  cmd->add_option("--from", f->view.from,
                  "Start: -10m, -1h, now, unix seconds or RFC 3339 (2026-11-22T16:00:00Z)")
      ->capture_default_str()
      ->group(group);
  cmd->add_option("--to", f->view.to, "End (exclusive), same forms as --from")
      ->capture_default_str()
      ->group(group);
  cmd->add_option("--hosts", f->view.hosts, "Only these hosts: web-1,web-2")->group(group);
  cmd->add_option("--where,-w", f->view.where,
                  "Only stacks whose host, labels or fields pass, evaluated in the aggregators: "
                  "'host =~ \"web-1[0-9]\" and execname == \"nginx\"' (docs/predicates.md)")
      ->group(group);
  cmd->add_option("--by", f->view.by,
                  "Decompose by host, a label or a field (execname, pid): each value becomes a "
                  "first frame, so the groups stand side by side")
      ->group(group);
  cmd->add_option("--baseline-from", f->baseline_from,
                  "Differential: the baseline starts here (default: --from)")
      ->group(group);
  cmd->add_option("--baseline-to", f->baseline_to,
                  "Differential: the baseline ends here (default: --to)")
      ->group(group);
  cmd->add_option("--baseline-where", f->baseline_where,
                  "Differential: the baseline's predicate (default: --where), e.g. the hosts "
                  "that are not slow")
      ->group(group);
  cmd->add_option("--region", f->region,
                  "Region -> code: FROM..TO,LOW..HIGH selects the events of --metric (then a "
                  "latency or size metric) in those seconds and that value band; the graph is "
                  "of the stacks of the host-seconds holding them, each weighted by how many it "
                  "holds (docs/region-flame.md)")
      ->group(group);
  cmd->add_option("--stacks", f->stacks, "With --region: the stacks metric to draw")
      ->capture_default_str()
      ->group(group);
  cmd->add_flag("--differential", f->region_differential,
                "With --region: red/blue against the same hosts' other seconds of --from..--to")
      ->group(group);
  // The shards, the deadline and the budget, as every query command takes them.
  AddShardFlags(cmd, &f->view);
  for (const char* name :
       {"--aggregators", "--config", "--cluster", "--timeout", "--max-keys", "--max-cells"}) {
    cmd->get_option(name)->group(group);
  }
}

}  // namespace

CLI::App* AddFlameCommand(CLI::App* app, FlameFlags* flags) {
  CLI::App* cmd = app->add_subcommand(
      "flame", "Flame graph of folded stacks: interactive SVG, d3-flame-graph JSON or folded");
  cmd->add_option("--folded", flags->folded,
                  "Folded stacks (\"a;b;c 42\" lines) to draw: FILE, or - for standard input; "
                  "without it the stacks come from the aggregators (see Fleet below)");
  AddFleetFlags(cmd, &flags->fleet);
  cmd->add_option("--format,-f", flags->format, "svg, json (d3-flame-graph) or folded")
      ->capture_default_str()
      ->check(CLI::IsMember({"svg", "json", "folded"}));
  cmd->add_option("--palette", flags->palette,
                  "hot, mem, io, java / js (by the _[j] _[i] _[k] annotations), self (self time)")
      ->capture_default_str()
      ->check(CLI::IsMember({"hot", "mem", "io", "java", "js", "self"}));
  cmd->add_option("--title", flags->title, "Title (default Flame Graph / Icicle Graph)");
  cmd->add_flag("--inverted", flags->inverted, "Icicle graph: root at the top");
  cmd->add_option("--minwidth", flags->min_width, "Omit frames narrower than this many pixels")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--width", flags->width, "Image width in pixels")
      ->capture_default_str()
      ->check(CLI::Range(100, 100000));
  cmd->add_option("--countname", flags->count_name, "What a count is, in tooltips")
      ->capture_default_str();
  cmd->add_option("-o,--output", flags->output, "Write to FILE instead of standard output");
  cmd->add_option("--baseline-folded", flags->baseline_folded,
                  "Differential graph: widths from --folded, each frame red where it grew and "
                  "blue where it shrank against these folded stacks (FILE or -; --palette is then "
                  "not used)");
  cmd->add_flag("--no-normalize", flags->no_normalize,
                "With a baseline (--baseline-folded or --baseline-from/-to/-where): compare raw "
                "counts instead of scaling the baseline to the target's total");
  cmd->footer(
      "Examples:\n"
      "  trailmap flame --from -5m --by host --where 'host =~ \"db-.*\"' -o per-host.svg\n"
      "  perf script | trailmap collapse | trailmap flame --folded - -o cpu.svg\n"
      "  trailmap flame --folded out.folded --inverted --palette self -o icicle.svg\n"
      "  trailmap flame --folded out.folded --format json > d3.json\n"
      "  trailmap flame --from -5m --where 'host =~ \"web-1[0-9]\"' -o cpu.svg\n"
      "  trailmap flame --from -10m --where 'execname == \"nginx\"' --format folded\n"
      "  trailmap flame --from -5m --baseline-from -1h --baseline-to -55m -o diff.svg\n"
      "  trailmap flame --from -10m --where 'host =~ \"db-(3|7)\"' \\\n"
      "      --baseline-where 'not (host =~ \"db-(3|7)\")' -o slow-vs-rest.svg\n"
      "  trailmap flame --folded after.folded --baseline-folded before.folded -o diff.svg\n"
      "  trailmap flame --metric http.latency --from -10m --region -5m..-4m,50ms..200ms \\\n"
      "      --differential --format json\n"
      "Exit codes: 0 ok, 1 error, 2 usage error, 3 some shard did not answer (the graph is "
      "drawn from the others).");
  return cmd;
}

int RunFlame(const FlameFlags& flags, const CliContext& context, std::istream& in) {
  return FinishView(context, "flame", RunFlameView(flags, context, in), flags.output);
}

}  // namespace trailmap
