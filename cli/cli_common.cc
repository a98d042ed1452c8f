#include "cli/cli_common.h"

#include <CLI/CLI.hpp>
#include <fstream>
#include <functional>
#include <ostream>
#include <set>
#include <sstream>
#include <string_view>

#include "core/predicate.h"
#include "core/timespec.h"
#include "core/utf8.h"
#include "core/units.h"
#include "query/fetch/endpoints.h"
#include "query/fetch/fanout.h"
#include "query/fetch/request_checks.h"

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
  AddShardFlags(command, flags);
}

Status CheckOptionsAreUtf8(const CLI::App& command) {
  static const std::set<std::string> kPaths = {"output", "config",     "cluster", "token-file",
                                               "key",    "server-key", "folded",  "baseline-folded",
                                               "dir"};
  for (const CLI::Option* option : command.get_options()) {
    if (option->get_positional() || option->get_lnames().empty() ||
        kPaths.count(option->get_lnames().front()) > 0) {
      continue;
    }
    for (const std::string& value : option->results()) {
      if (!IsValidUtf8(value)) {
        return Status::InvalidArgument("--" + option->get_lnames().front() + " \"" +
                                       Printable(value) + "\": not valid UTF-8");
      }
    }
  }
  return Status::Ok();
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

Result<std::string> ReadInputText(const std::string& path, std::istream& in) {
  std::ifstream file;
  std::istream* input = &in;
  if (path != "-") {
    file.open(path, std::ios::binary);
    if (!file) return Status::IOError("cannot open " + path);
    input = &file;
  }
  std::ostringstream text;
  text << input->rdbuf();
  if (input->bad()) return Status::IOError("cannot read " + path);
  return std::move(text).str();
}

namespace {

// Calls write() with standard output ("" or "-") or the file at `path`, then checks it.
Status WriteWith(const CliContext& context, const std::string& path,
                 const std::function<void(std::ostream&)>& write) {
  if (path.empty() || path == "-") {
    write(*context.out);
    context.out->flush();
    return context.out->good() ? Status::Ok() : Status::IOError("cannot write to standard output");
  }
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) return Status::IOError("cannot open " + path + " for writing");
  write(file);
  file.close();
  if (!file) return Status::IOError("cannot write " + path);
  return Status::Ok();
}

void WriteBytes(std::ostream& out, std::string_view bytes) {
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

Status WriteOutput(const CliContext& context, const std::string& path, const std::string& bytes) {
  return WriteWith(context, path, [&bytes](std::ostream& out) { WriteBytes(out, bytes); });
}

Status WriteOutput(const CliContext& context, const std::string& path, const ViewDocument& doc) {
  if (!doc.stream) return WriteOutput(context, path, doc.bytes);
  return WriteWith(context, path, [&doc](std::ostream& out) {
    doc.stream([&out](std::string_view part) { WriteBytes(out, part); });
  });
}

int ReportMissing(const CliContext& context, const std::vector<std::string>& missing) {
  if (missing.empty()) return kExitOk;
  *context.err << "trailmap: partial result, " << missing.size()
               << (missing.size() == 1 ? " shard" : " shards") << " did not answer:\n";
  for (const std::string& m : missing) *context.err << "  " << m << "\n";
  return kExitPartial;
}

int FinishView(const CliContext& context, const char* command, const Result<ViewDocument>& document,
               const std::string& output) {
  Status status = document.status();
  if (status.ok()) status = WriteOutput(context, output, *document);
  if (!status.ok()) {
    *context.err << "trailmap " << command << ": " << status.message() << "\n";
    return ExitCodeFor(status);
  }
  for (const std::string& note : document->notes) *context.err << note << "\n";
  return ReportMissing(context, document->missing);
}

std::string OutputFormat(const std::string& format, const std::string& output,
                         const std::string& otherwise) {
  if (!format.empty()) return format;
  for (const char* ext : {"svg", "png", "json"}) {
    if (output.ends_with(std::string(".") + ext)) return ext;
  }
  return otherwise;
}

void AddShardFlags(CLI::App* command, QueryFlags* flags) {
  command->add_option("--aggregators,-a", flags->aggregators,
                      "Aggregator QUERY endpoints HOST:PORT,... (default port 7401); else "
                      "$TRAILMAP_AGGREGATORS, else `aggregators` in the config file, else "
                      "127.0.0.1:7401");
  command->add_option("--config", flags->config,
                      "TOML file with aggregators = [\"HOST:PORT\", ...] (default "
                      "$TRAILMAP_CONFIG or ~/.config/trailmap/trailmap.toml)");
  command->add_option("--cluster", flags->cluster,
                      "Cluster file (members, zones, replication, epochs; else $TRAILMAP_CLUSTER): "
                      "with replication > 1 each host-second is counted once, from the most "
                      "complete of its owners that answers");
  command
      ->add_option("--timeout", flags->timeout,
                   "How long to wait for every shard's answer, at most 60s; the shards stop the "
                   "query at 9/10 of it and say so (docs/limits.md, bounded queries)")
      ->capture_default_str();
  command->add_option("--max-keys", flags->max_keys,
                      "Ask each shard to stop after reading this many stored keys (less than its "
                      "own [queries] max_keys; default its own)");
  command->add_option("--max-cells", flags->max_cells,
                      "Ask each shard to stop past this many cells (columns x groups; default its "
                      "own [queries] max_cells)");
}

void AddTableOrJsonFormat(CLI::App* command, std::string* format) {
  command->add_option("--format,-f", *format, "table or json")
      ->capture_default_str()
      ->check(CLI::IsMember({"table", "json"}));
}

}  // namespace trailmap
