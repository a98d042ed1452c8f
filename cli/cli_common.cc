#include "cli/cli_common.h"

#include <CLI/CLI.hpp>
#include <fstream>
#include <functional>
#include <ostream>
#include <set>
#include <sstream>
#include <string_view>

#include "cli/cli_options.h"
#include "core/predicate.h"
#include "core/timespec.h"
#include "core/units.h"
#include "core/utf8.h"
#include "query/fetch/endpoints.h"
#include "query/fetch/fanout.h"
#include "query/fetch/request_checks.h"

namespace trailmap {

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
  AddOptions(command, ShardParameters(), static_cast<ViewRequest*>(flags));
}

void AddTableOrJsonFormat(CLI::App* command, std::string* format) {
  command->add_option("--format,-f", *format, "table or json")
      ->capture_default_str()
      ->check(CLI::IsMember({"table", "json"}));
}

}  // namespace trailmap
