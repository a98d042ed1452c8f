#include "query/flame_command.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <istream>
#include <iterator>
#include <map>
#include <ostream>
#include <sstream>

#include "core/query_wire.h"
#include "query/fanout.h"
#include "query/flame.h"
#include "query/render_flame.h"

namespace trailmap {
namespace {

int Fail(const CliContext& context, const Status& status) {
  *context.err << "trailmap flame: " << status.message() << "\n";
  return ExitCodeFor(status);
}

// The fleet flags, in their own group of the help text.
void AddFleetFlags(CLI::App* cmd, FlameFleetFlags* f) {
  const char* group = "Fleet (without --folded)";
  cmd->add_option("--metric,-m", f->metric, "Stacks metric to draw")
      ->capture_default_str()
      ->group(group);
  cmd->add_option("--from", f->from,
                  "Start: -10m, -1h, now, unix seconds or RFC 3339 (2026-11-22T16:00:00Z)")
      ->capture_default_str()
      ->group(group);
  cmd->add_option("--to", f->to, "End (exclusive), same forms as --from")
      ->capture_default_str()
      ->group(group);
  cmd->add_option("--hosts", f->hosts, "Only these hosts: web-1,web-2")->group(group);
  cmd->add_option("--where,-w", f->where,
                  "Only stacks whose host, labels or fields pass, evaluated in the aggregators: "
                  "'host =~ \"web-1[0-9]\" and execname == \"nginx\"' (docs/predicates.md)")
      ->group(group);
  cmd->add_option("--by", f->by,
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
  cmd->add_option("--aggregators,-a", f->aggregators,
                  "Aggregator QUERY endpoints HOST:PORT,... (default port 7401); else "
                  "$TRAILMAP_AGGREGATORS, else the config file, else 127.0.0.1:7401")
      ->group(group);
  cmd->add_option("--config", f->config, "TOML file with aggregators = [\"HOST:PORT\", ...]")
      ->group(group);
  cmd->add_option("--timeout", f->timeout, "How long to wait for every shard's answer")
      ->capture_default_str()
      ->group(group);
}

// One stack query over every aggregator: the merged stacks, and the shards that did not answer.
Result<FoldedStacks> FetchStacks(const FlameFleetFlags& flags, const CliContext& context,
                                 const std::string& from, const std::string& to,
                                 const std::string& where, const char* what,
                                 std::vector<std::string>* missing) {
  QueryFlags query_flags;
  query_flags.metric = flags.metric;
  query_flags.from = from;
  query_flags.to = to;
  query_flags.aggregators = flags.aggregators;
  query_flags.config = flags.config;
  query_flags.timeout = flags.timeout;
  // The baseline's mistakes name the baseline's flags: "--where: ..." -> "--baseline-where: ...".
  const bool baseline = what[0] != '\0';
  const auto rename = [baseline](const std::string& message) {
    if (!baseline || message.rfind("--", 0) != 0) return message;
    return "--baseline-" + message.substr(2);
  };
  Result<TimeRange> range = ParseTimeRange(query_flags, context.now);
  if (!range.ok()) return Status::InvalidArgument(rename(range.status().message()));
  Query query;
  query.kind = Query::Kind::kStacks;
  query.stacks.metric = flags.metric;
  query.stacks.from = range->from;
  query.stacks.to = range->to;
  query.stacks.hosts = SplitList(flags.hosts);
  query.stacks.where = where;
  query.stacks.group_by = flags.by;
  if (Status s = CheckStackQuery(query.stacks); !s.ok()) {
    return Status::InvalidArgument(rename(s.message()));
  }
  Result<FanoutResult> result = FanOutAll(context, query_flags, std::move(query));
  if (!result.ok()) return result.status();
  for (const ShardFailure& f : result->failures) {
    missing->push_back(std::string(what) + f.endpoint + ": " + f.reason);
  }
  return MergeStackAnswers(result->answers);
}

}  // namespace

Result<FleetStacks> FetchFleetStacks(const FlameFleetFlags& flags, const CliContext& context) {
  FleetStacks out;
  Result<FoldedStacks> target =
      FetchStacks(flags, context, flags.from, flags.to, flags.where, "", &out.missing);
  if (!target.ok()) return target.status();
  out.target = std::move(target).value();
  if (flags.has_baseline()) {
    Result<FoldedStacks> baseline = FetchStacks(
        flags, context, flags.baseline_from.empty() ? flags.from : flags.baseline_from,
        flags.baseline_to.empty() ? flags.to : flags.baseline_to,
        flags.baseline_where.empty() ? flags.where : flags.baseline_where, "baseline: ",
        &out.missing);
    if (!baseline.ok()) return baseline.status();
    out.baseline = std::move(baseline).value();
  }
  return out;
}

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
      "Exit codes: 0 ok, 1 error, 2 usage error, 3 some shard did not answer (the graph is "
      "drawn from the others).");
  return cmd;
}

static Result<std::string> ReadFolded(const std::string& path, std::istream& in) {
  if (path == "-") {
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) return Status::IOError("cannot open " + path);
  std::ostringstream buf;
  buf << file.rdbuf();
  return std::move(buf).str();
}

int RunFlame(const FlameFlags& flags, const CliContext& context, std::istream& in) {
  Result<FlamePalette> palette = ParseFlamePalette(flags.palette);
  if (!palette.ok()) return Fail(context, palette.status());
  if (!flags.baseline_folded.empty() && !flags.folded.empty() && flags.fleet.has_baseline()) {
    return Fail(context, Status::InvalidArgument(
                             "give a local baseline (--baseline-folded) or a fleet one "
                             "(--baseline-from/--baseline-to/--baseline-where), not both"));
  }
  if (!flags.folded.empty() && !flags.fleet.by.empty()) {
    return Fail(context, Status::InvalidArgument(
                             "--by decomposes fleet stacks; a --folded file has no fields (use "
                             "trailmap collapse --pid to split by process)"));
  }
  if (!flags.baseline_folded.empty() && flags.baseline_folded == "-" && flags.folded == "-") {
    return Fail(context, Status::InvalidArgument(
                             "--folded and --baseline-folded cannot both be standard input"));
  }
  // The target and (for a differential graph) the baseline, as folded text.
  std::string text;
  std::optional<std::string> base_text;
  std::string baseline_name;
  std::vector<std::string> missing;
  if (flags.folded.empty()) {
    Result<FleetStacks> fleet = FetchFleetStacks(flags.fleet, context);
    if (!fleet.ok()) return Fail(context, fleet.status());
    missing = std::move(fleet->missing);
    if (fleet->target.empty()) {
      *context.err << "trailmap flame: no " << flags.fleet.metric
                   << " samples in that range and filter\n";
    }
    text = FormatFolded(fleet->target);
    if (fleet->baseline) {
      base_text = FormatFolded(*fleet->baseline);
      baseline_name = "the baseline";
    }
  } else {
    Result<std::string> read = ReadFolded(flags.folded, in);
    if (!read.ok()) return Fail(context, read.status());
    text = std::move(*read);
    if (!flags.baseline_folded.empty()) {
      Result<std::string> base = ReadFolded(flags.baseline_folded, in);
      if (!base.ok()) return Fail(context, base.status());
      base_text = std::move(*base);
      baseline_name = flags.baseline_folded;
    }
  }
  FlameTree tree;
  std::string diff_folded;
  std::string subtitle;
  if (!base_text) {
    tree = BuildFlameTree(text);
  } else {
    uint64_t bad_target = 0, bad_base = 0;
    const FoldedMap target = ParseFoldedMap(text, &bad_target);
    const FoldedMap baseline = ParseFoldedMap(*base_text, &bad_base);
    if (bad_base > 0) {
      *context.err << "trailmap flame: ignored " << bad_base
                   << " baseline lines with invalid format\n";
    }
    tree = BuildDiffFlameTree(baseline, target, !flags.no_normalize);
    tree.invalid_lines = bad_target;
    if (flags.format == "folded") diff_folded = FormatDiffFolded(baseline, target, !flags.no_normalize);
    char scale[64];
    snprintf(scale, sizeof scale, "%.4g", tree.baseline_scale);
    subtitle = "red: more than in " + baseline_name + ", blue: less" +
               (flags.no_normalize ? std::string(" (raw counts)")
                                   : " (baseline scaled by " + std::string(scale) +
                                         " to the same total)");
  }
  if (tree.invalid_lines > 0) {
    *context.err << "trailmap flame: ignored " << tree.invalid_lines
                 << " lines with invalid format\n";
  }
  std::string bytes;
  if (flags.format == "json") {
    bytes = RenderFlameJson(tree);
  } else if (flags.format == "folded") {
    bytes = tree.differential ? diff_folded : RenderFlameFolded(tree);
  } else {
    FlameSvgOptions options;
    options.title = flags.title;
    options.inverted = flags.inverted;
    options.min_width = flags.min_width;
    options.width = flags.width;
    options.palette = *palette;
    options.count_name = flags.count_name;
    options.subtitle = subtitle;
    bytes = RenderFlameSvg(tree, options);
  }
  const Status written = WriteOutput(context, flags.output, bytes);
  if (!written.ok()) return Fail(context, written);
  return ReportMissing(context, missing);
}

}  // namespace trailmap
