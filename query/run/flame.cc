#include "query/run/flame.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <istream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <sstream>

#include "core/counts.h"
#include "core/query_wire.h"
#include "query/fetch/fanout.h"
#include "query/fetch/request_checks.h"
#include "query/render/flame.h"
#include "query/run/region.h"
#include "query/views/flame.h"

namespace trailmap {
namespace {

// `query` over every aggregator: the answers; the shards that did not answer are added to
// `missing`, each prefixed by `what`.
Result<std::vector<Answer>> FanOutStackQuery(const FlameFleetRequest& flags,
                                             const QueryContext& context, StackQuery stacks,
                                             const char* what, std::vector<std::string>* missing) {
  Query query;
  query.kind = Query::Kind::kStacks;
  query.stacks = std::move(stacks);
  Result<FanoutResult> result = FanOutAll(context, flags.view, std::move(query));
  if (!result.ok()) return result.status();
  for (const ShardFailure& f : result->failures) {
    missing->push_back(std::string(what) + f.endpoint + ": " + f.reason);
  }
  return std::move(result->answers);
}

// The region's weighted stacks and, with region_differential, the same hosts' other seconds:
// one query, each aggregator finding the region's host-seconds itself (query/run/region.h).
Result<FleetStacks> FetchRegionStacks(const FlameFleetRequest& flags, const QueryContext& context) {
  if (flags.has_baseline()) {
    return Status::InvalidArgument(
        "--region compares with the same hosts' other seconds (--differential); "
        "--baseline-from/--baseline-to/--baseline-where do not apply");
  }
  if (!flags.view.by.empty()) return Status::InvalidArgument("--by does not apply with --region");
  if (flags.view.metric == "cpu.stacks" || flags.view.metric == flags.stacks) {
    return Status::InvalidArgument(
        "--region selects events of a latency or size metric: name it "
        "with --metric (the stacks come from --stacks, default "
        "cpu.stacks)");
  }
  Result<StackQuery> query =
      RegionQuery(flags.region, flags.view, context, flags.stacks, flags.region_differential);
  if (!query.ok()) return query.status();
  FleetStacks out;
  Result<std::vector<Answer>> answers =
      FanOutStackQuery(flags, context, std::move(query).value(), "", &out.missing);
  if (!answers.ok()) return answers.status();
  out.target = MergeStackAnswers(*answers);
  if (flags.region_differential) out.baseline = MergeStackAnswers(*answers, /*baseline=*/true);
  // Each host is answered by one shard; the shards' lists are joined, most events first.
  bool saturated = false;
  for (const Answer& a : *answers) {
    for (const RegionHost& h : a.stacks.region_hosts) {
      out.region_hosts.emplace_back(h.host, h.events);
      out.region_events = SaturatingCountAdd(out.region_events, h.events, &saturated);
      out.region_host_seconds += h.host_seconds;
    }
  }
  std::sort(out.region_hosts.begin(), out.region_hosts.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  return out;
}

// One stack query over every aggregator: the merged stacks, and the shards that did not answer.
Result<FoldedStacks> FetchStacks(const FlameFleetRequest& flags, const QueryContext& context,
                                 const std::string& from, const std::string& to,
                                 const std::string& where, const char* what,
                                 std::vector<std::string>* missing) {
  ViewRequest query_flags = flags.view;
  query_flags.from = from;
  query_flags.to = to;
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
  query.stacks.metric = flags.view.metric;
  query.stacks.from = range->from;
  query.stacks.to = range->to;
  query.stacks.hosts = SplitList(flags.view.hosts);
  query.stacks.where = where;
  query.stacks.group_by = flags.view.by;
  if (Status s = CheckStackQuery(query.stacks); !s.ok()) {
    return Status::InvalidArgument(rename(s.message()));
  }
  Result<std::vector<Answer>> answers =
      FanOutStackQuery(flags, context, std::move(query.stacks), what, missing);
  if (!answers.ok()) return answers.status();
  return MergeStackAnswers(*answers);
}

}  // namespace

Result<FleetStacks> FetchFleetStacks(const FlameFleetRequest& flags, const QueryContext& context) {
  // As FanOutAll would, but before the stack query's own checks, whose messages quote the name
  // as it came.
  if (Status s = CheckViewRequest(flags.view); !s.ok()) return s;
  if (!flags.region.empty()) return FetchRegionStacks(flags, context);
  FleetStacks out;
  Result<FoldedStacks> target = FetchStacks(flags, context, flags.view.from, flags.view.to,
                                            flags.view.where, "", &out.missing);
  if (!target.ok()) return target.status();
  out.target = std::move(target).value();
  if (flags.has_baseline()) {
    Result<FoldedStacks> baseline = FetchStacks(
        flags, context, flags.baseline_from.empty() ? flags.view.from : flags.baseline_from,
        flags.baseline_to.empty() ? flags.view.to : flags.baseline_to,
        flags.baseline_where.empty() ? flags.view.where : flags.baseline_where,
        "baseline: ", &out.missing);
    if (!baseline.ok()) return baseline.status();
    out.baseline = std::move(baseline).value();
  }
  return out;
}

namespace {

Result<std::string> ReadFolded(const std::string& path, std::istream& in) {
  if (path == "-") {
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) return Status::IOError("cannot open " + path);
  std::ostringstream buf;
  buf << file.rdbuf();
  return std::move(buf).str();
}

}  // namespace

Result<ViewDocument> RunFlameView(const FlameRequest& flags, const QueryContext& context,
                                  std::istream& in) {
  if (Status s = FlameParameters().Check(flags); !s.ok()) return s;
  ViewDocument doc;
  doc.format = flags.format;
  Result<FlamePalette> palette = ParseFlamePalette(flags.palette);
  if (!palette.ok()) return palette.status();
  if (!flags.baseline_folded.empty() && !flags.folded.empty() && flags.fleet.has_baseline()) {
    return Status::InvalidArgument(
        "give a local baseline (--baseline-folded) or a fleet one "
        "(--baseline-from/--baseline-to/--baseline-where), not both");
  }
  if (flags.fleet.region_differential && flags.fleet.region.empty()) {
    return Status::InvalidArgument(
        "--differential compares a --region with the rest of its hosts' "
        "seconds: give --region FROM..TO,LOW..HIGH");
  }
  if (!flags.folded.empty() && !flags.fleet.region.empty()) {
    return Status::InvalidArgument("--region selects fleet stacks; not with --folded");
  }
  if (!flags.folded.empty() && !flags.fleet.view.by.empty()) {
    return Status::InvalidArgument(
        "--by decomposes fleet stacks; a --folded file has no fields (use "
        "trailmap collapse --pid to split by process)");
  }
  if (!flags.baseline_folded.empty() && flags.baseline_folded == "-" && flags.folded == "-") {
    return Status::InvalidArgument("--folded and --baseline-folded cannot both be standard input");
  }
  // The target and (for a differential graph) the baseline, as folded text.
  std::string text;
  std::optional<std::string> base_text;
  std::string baseline_name;
  std::vector<std::string> missing;
  nlohmann::ordered_json region;  // with --region: what it selected
  if (flags.folded.empty()) {
    Result<FleetStacks> fleet = FetchFleetStacks(flags.fleet, context);
    if (!fleet.ok()) return fleet.status();
    missing = std::move(fleet->missing);
    if (fleet->target.empty() && flags.fleet.region.empty()) {
      doc.notes.push_back("trailmap flame: no " + flags.fleet.view.metric +
                          " samples in that range and filter");
    }
    text = FormatFolded(fleet->target);
    if (fleet->baseline) {
      base_text = FormatFolded(*fleet->baseline);
      baseline_name = flags.fleet.region.empty() ? "the baseline" : "the hosts' other seconds";
    }
    if (!flags.fleet.region.empty()) {
      if (fleet->region_events == 0) {
        doc.notes.push_back("trailmap flame: no " + flags.fleet.view.metric +
                            " events in the region " + flags.fleet.region);
      }
      region = nlohmann::ordered_json{
          {"region", flags.fleet.region},   {"metric", flags.fleet.view.metric},
          {"stacks", flags.fleet.stacks},   {"differential", flags.fleet.region_differential},
          {"events", fleet->region_events}, {"host_seconds", fleet->region_host_seconds}};
      nlohmann::ordered_json hosts = nlohmann::ordered_json::array();
      for (const auto& [host, events] : fleet->region_hosts) {
        hosts.push_back({{"host", host}, {"events", events}});
      }
      region["hosts"] = std::move(hosts);
    }
  } else {
    Result<std::string> read = ReadFolded(flags.folded, in);
    if (!read.ok()) return read.status();
    text = std::move(*read);
    if (!flags.baseline_folded.empty()) {
      Result<std::string> base = ReadFolded(flags.baseline_folded, in);
      if (!base.ok()) return base.status();
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
      doc.notes.push_back("trailmap flame: ignored " + std::to_string(bad_base) +
                          " baseline lines with invalid format");
    }
    tree = BuildDiffFlameTree(baseline, target, !flags.no_normalize);
    tree.invalid_lines = bad_target;
    if (flags.format == "folded")
      diff_folded = FormatDiffFolded(baseline, target, !flags.no_normalize);
    char scale[64];
    snprintf(scale, sizeof scale, "%.4g", tree.baseline_scale);
    subtitle =
        "red: more than in " + baseline_name + ", blue: less" +
        (flags.no_normalize ? std::string(" (raw counts)")
                            : " (baseline scaled by " + std::string(scale) + " to the same total)");
  }
  if (tree.invalid_lines > 0) {
    doc.notes.push_back("trailmap flame: ignored " + std::to_string(tree.invalid_lines) +
                        " lines with invalid format");
  }
  std::string bytes;
  if (flags.format == "json") {
    bytes = RenderFlameJson(tree);
    if (!region.is_null()) {
      // The region's selection joins the root object as one more field: "...]}\n" ends it.
      bytes.resize(bytes.size() - 2);
      bytes += ",\"region\":" + region.dump() + "}\n";
    }
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
  doc.bytes = std::move(bytes);
  doc.missing = std::move(missing);
  return doc;
}

}  // namespace trailmap
