// What every trailmap command shares: exit codes, the context main() hands down, the query
// flags (aggregators, time range, timeout) and running one histogram query across the shards.
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
#include "query/fanout.h"
#include "query/partials.h"

namespace CLI {
class App;
}

namespace trailmap {

enum ExitCode : int { kExitOk = 0, kExitError = 1, kExitUsage = 2, kExitPartial = 3 };

// Built by main() and handed to every command, so tests hand in their own: no clock, no
// environment and no terminal is read below main().
struct CliContext {
  zmq::context_t* zmq = nullptr;
  int64_t now = 0;              // unix seconds
  std::string env_aggregators;  // $TRAILMAP_AGGREGATORS
  std::string env_ingest;       // $TRAILMAP_INGEST
  std::string env_config;       // $TRAILMAP_CONFIG
  std::string home;             // $HOME
  bool stdout_is_terminal = false;
  int terminal_columns = 0;     // 0 when unknown
  std::ostream* out = nullptr;  // standard output
  std::ostream* err = nullptr;  // standard error
};

// Flags of every query command.
struct QueryFlags {
  std::string metric;
  std::string from = "-5m";
  std::string to = "now";
  std::string by;           // "" | "host" | a field key
  std::string hosts;        // "a,b": only these hosts
  std::string where;        // a predicate (core/predicate.h), evaluated in the aggregators
  std::string aggregators;  // query endpoints; see query/endpoints.h for the fallbacks
  std::string config;       // a TOML file naming the aggregators
  std::string timeout = "5s";
};
void AddQueryFlags(CLI::App* command, QueryFlags* flags);

// The time range of `flags` (usage errors name the flag).
struct TimeRange {
  int64_t from = 0;
  int64_t to = 0;
};
Result<TimeRange> ParseTimeRange(const QueryFlags& flags, int64_t now);

// The outcome of one query over all shards: the merged grid and the shards that did not answer.
struct Fetched {
  MergedGrid grid;
  std::vector<std::string> missing;  // "tcp://host:port: reason"
};

// Resolves the aggregators and sends `query` (its id is set here) to every one. Fails with
// InvalidArgument for bad flags and Unavailable when no shard answered at all; the shards that
// did not answer are in the result's failures.
Result<FanoutResult> FanOutAll(const CliContext& context, const QueryFlags& flags, Query query);

// Resolves the aggregators, fans the query out (with flags.where) and merges the answers. Fails with
// InvalidArgument for bad flags, Unavailable when no shard answered at all, Corruption when the
// answers do not merge.
Result<Fetched> FetchGrid(const CliContext& context, const QueryFlags& flags,
                          const HistogramQuery& query);

// The output format: `format` when given, else by -o's extension (.svg, .png, .json), else
// `otherwise`.
std::string OutputFormat(const std::string& format, const std::string& output,
                         const std::string& otherwise);

// The exit code for a failed command: InvalidArgument → 2 (usage), Unavailable → 3 (shards
// missing), anything else → 1.
int ExitCodeFor(const Status& status);

// A value-axis flag (--ymax, --ymin) read in the metric's base unit: "20ms" for a metric in ns.
// InvalidArgument names the flag and the metric's unit.
Result<uint64_t> ParseAxisFlag(const char* flag, const std::string& text, const std::string& metric,
                               const std::string& unit);

// "a,b,,c" → {"a", "b", "c"}.
std::vector<std::string> SplitList(const std::string& list);

// Writes `bytes` to `path`, or to context.out when path is "" or "-".
Status WriteOutput(const CliContext& context, const std::string& path, const std::string& bytes);

// Prints the missing shards to stderr; returns kExitPartial if there are any, else kExitOk.
int ReportMissing(const CliContext& context, const std::vector<std::string>& missing);

}  // namespace trailmap
