// What every trailmap command shares: exit codes, the context main() hands down, the query
// flags (aggregators, time range, timeout) and writing a view's document with what it says
// beside it. Fetching and the views themselves are in query/ (query/run/ runs a whole view).
//
// Exit codes (docs and --help say the same):
//   0 success; 1 any other error; 2 usage error (bad flag, time, unit: the message says what to
//   fix); 3 some shard did not answer (the output is still produced from the others, and stderr
//   names the missing shards).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "core/query_wire.h"
#include "core/status.h"
#include "query/fetch/view_request.h"
#include "query/run/view_document.h"

namespace CLI {
class App;
}

namespace trailmap {

enum ExitCode : int { kExitOk = 0, kExitError = 1, kExitUsage = 2, kExitPartial = 3 };

// Built by main() and handed to every command, so tests hand in their own: no clock, no
// environment and no terminal is read below main(). The query part is what trailmap-query builds
// too (query/fetch/view_request.h); the streams are the CLI's own.
struct CliContext : QueryContext {
  CliContext() {
    empty_when_none_answer = true;  // a document even when no shard answers
    stream_documents = true;        // a large document is written out as it is made
  }
  std::ostream* out = nullptr;  // standard output
  std::ostream* err = nullptr;  // standard error
};

// Flags of every query command: a ViewRequest filled in by CLI11 (each view's table of
// parameters, query/run/options.h, registers them: cli/cli_options.h).
using QueryFlags = ViewRequest;

// The output format: `format` when given, else by -o's extension (.svg, .png, .json), else
// `otherwise`.
std::string OutputFormat(const std::string& format, const std::string& output,
                         const std::string& otherwise);

// The exit code for a failed command: InvalidArgument → 2 (usage), Unavailable → 3 (shards
// missing), anything else → 1.
int ExitCodeFor(const Status& status);

// Writes `bytes` to `path`, or to context.out when path is "" or "-".
Status WriteOutput(const CliContext& context, const std::string& path, const std::string& bytes);
// A view's document: its bytes, or its parts as they are made (ViewDocument::stream).
Status WriteOutput(const CliContext& context, const std::string& path, const ViewDocument& doc);

// All of FILE's bytes, or of `in` when path is "-"; IOError "cannot open FILE" / "cannot read
// FILE" otherwise.
Result<std::string> ReadInputText(const std::string& path, std::istream& in);

// Prints the missing shards to stderr; returns kExitPartial if there are any, else kExitOk.
int ReportMissing(const CliContext& context, const std::vector<std::string>& missing);

// The shard flags alone (aggregators, config, cluster, timeout, budgets: ShardParameters), for
// `cluster`, which has no API endpoint.
void AddShardFlags(CLI::App* command, QueryFlags* flags);
// --format,-f for the commands that print a table or JSON (metrics, fields, cluster).
void AddTableOrJsonFormat(CLI::App* command, std::string* format);

// InvalidArgument naming the first option given to `command` whose value is not UTF-8, in
// trailmap-query's words for a parameter ("--palette \"\\xff\": not valid UTF-8"): documents
// are JSON or quote what was asked for, and hold only UTF-8. Options that name files or
// directories (-o, --config, --folded, ...) and positional arguments are paths, which may be any
// bytes, and are not checked.
Status CheckOptionsAreUtf8(const CLI::App& command);

// Delivers a view run by query/run/: the document to `output` (WriteOutput), its notes to
// stderr, then ReportMissing; or "trailmap COMMAND: message" on stderr and ExitCodeFor. Returns
// the exit code.
int FinishView(const CliContext& context, const char* command, const Result<ViewDocument>& document,
               const std::string& output);

}  // namespace trailmap
