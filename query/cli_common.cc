#include "query/cli_common.h"

#include <CLI/CLI.hpp>
#include <fstream>
#include <ostream>

#include "core/predicate.h"
#include "core/timespec.h"
#include "core/units.h"
#include "query/endpoints.h"
#include "query/fanout.h"

namespace trailmap {

void AddQueryFlags(CLI::App* command, QueryFlags* flags) {
  command->add_option("--metric,-m", flags->metric, "Metric name, e.g. disk.latency")->required();
  command
      ->add_option("--from", flags->from,
                   "Start: -10m, -1h, -2d, now, unix seconds or RFC 3339 (2026-11-22T16:00:00Z)")
      ->capture_default_str();
  command->add_option("--to", flags->to, "End (exclusive), same forms as --from")
      ->capture_default_str();
  command->add_option("--by", flags->by, "Group by host or by a field key (op, disk, url, ...)");
  command->add_option("--hosts", flags->hosts, "Only these hosts: web-1,web-2");
  command->add_option("--where,-w", flags->where,
                      "Only events that pass a predicate, evaluated in the aggregators: "
                      "'host =~ \"web.*\" and op == \"read\" and latency > 10ms' (docs/predicates.md)");
  command->add_option("--aggregators,-a", flags->aggregators,
                      "Aggregator QUERY endpoints HOST:PORT,... (default port 7401); else "
                      "$TRAILMAP_AGGREGATORS, else `aggregators` in the config file, else "
                      "127.0.0.1:7401");
  command->add_option("--config", flags->config,
                      "TOML file with aggregators = [\"HOST:PORT\", ...] (default "
                      "$TRAILMAP_CONFIG or ~/.config/trailmap/trailmap.toml)");
  command->add_option("--timeout", flags->timeout, "How long to wait for every shard's answer")
      ->capture_default_str();
}

Result<TimeRange> ParseTimeRange(const QueryFlags& flags, int64_t now) {
  Result<int64_t> from = ParseTimeSpec(flags.from, now);
  if (!from.ok()) return Status::InvalidArgument("--from: " + from.status().message());
  Result<int64_t> to = ParseTimeSpec(flags.to, now);
  if (!to.ok()) return Status::InvalidArgument("--to: " + to.status().message());
  if (*to <= *from) {
    return Status::InvalidArgument("--from " + FormatRfc3339(*from) + " is not before --to " +
                                   FormatRfc3339(*to) + ": the time range is empty");
  }
  return TimeRange{*from, *to};
}

Result<FanoutResult> FanOutAll(const CliContext& context, const QueryFlags& flags, Query query) {
  Result<uint64_t> timeout = ParseDuration(flags.timeout);
  if (!timeout.ok()) return Status::InvalidArgument("--timeout: " + timeout.status().message());
  EndpointSources sources;
  sources.flag = flags.aggregators;
  sources.config_path = flags.config;
  sources.env_list = context.env_aggregators;
  sources.env_config = context.env_config;
  sources.home = context.home;
  Result<std::vector<std::string>> endpoints = ResolveEndpoints(EndpointKind::kQuery, sources);
  if (!endpoints.ok()) {
    return Status::InvalidArgument("aggregators: " + endpoints.status().message());
  }
  query.id = static_cast<uint64_t>(context.now) * 1000 + 1;
  FanoutOptions options;
  options.deadline = std::chrono::milliseconds(std::max<uint64_t>(1, *timeout / 1'000'000));
  FanoutResult result = FanOut(*context.zmq, *endpoints, query, options);
  if (result.answers.empty()) {
    std::string msg = "no aggregator answered:";
    for (const ShardFailure& f : result.failures) msg += "\n  " + f.endpoint + ": " + f.reason;
    return Status::Unavailable(msg);
  }
  return result;
}

Result<Fetched> FetchGrid(const CliContext& context, const QueryFlags& flags,
                          const HistogramQuery& query) {
  Query q;
  q.kind = Query::Kind::kHistograms;
  q.histograms = query;
  q.histograms.where = flags.where;  // every view filters the same way
  if (Result<Predicate> where = Predicate::Parse(flags.where); !where.ok()) {
    return Status::InvalidArgument("--where: " + where.status().message());
  }
  Result<FanoutResult> result = FanOutAll(context, flags, std::move(q));
  if (!result.ok()) return result.status();
  Fetched fetched;
  for (const ShardFailure& f : result->failures) {
    fetched.missing.push_back(f.endpoint + ": " + f.reason);
  }
  Result<MergedGrid> grid = MergePartials(query, result->answers);
  if (!grid.ok()) return grid.status();
  fetched.grid = std::move(grid).value();
  return fetched;
}

Result<uint64_t> ParseAxisFlag(const char* flag, const std::string& text, const std::string& metric,
                               const std::string& unit) {
  Result<uint64_t> value = ParseQuantity(text, unit);
  if (!value.ok()) {
    // A scalar's fixed-point unit ("0.01%") is shown as the unit people type ("%").
    return Status::InvalidArgument(std::string(flag) + ": " + metric + " is in " +
                                   std::string(SplitFixedPointUnit(unit).second) + ": " +
                                   value.status().message());
  }
  return value;
}

std::vector<std::string> SplitList(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    if (comma > start) out.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

int ExitCodeFor(const Status& status) {
  switch (status.code()) {
    case Status::Code::kOk:
      return kExitOk;
    case Status::Code::kInvalidArgument:
      return kExitUsage;
    case Status::Code::kUnavailable:
      return kExitPartial;
    default:
      return kExitError;
  }
}

Status WriteOutput(const CliContext& context, const std::string& path, const std::string& bytes) {
  if (path.empty() || path == "-") {
    context.out->write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    context.out->flush();
    return context.out->good() ? Status::Ok() : Status::IOError("cannot write to standard output");
  }
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) return Status::IOError("cannot open " + path + " for writing");
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  file.close();
  if (!file) return Status::IOError("cannot write " + path);
  return Status::Ok();
}

int ReportMissing(const CliContext& context, const std::vector<std::string>& missing) {
  if (missing.empty()) return kExitOk;
  *context.err << "trailmap: partial result, " << missing.size()
               << (missing.size() == 1 ? " shard" : " shards") << " did not answer:\n";
  for (const std::string& m : missing) *context.err << "  " << m << "\n";
  return kExitPartial;
}

std::string OutputFormat(const std::string& format, const std::string& output,
                         const std::string& otherwise) {
  if (!format.empty()) return format;
  for (const char* ext : {"svg", "png", "json"}) {
    if (output.ends_with(std::string(".") + ext)) return ext;
  }
  return otherwise;
}

}  // namespace trailmap
