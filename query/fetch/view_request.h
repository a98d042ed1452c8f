// ViewRequest: what every view asks of the shards, as a front end received it. The CLI fills it
// from its flags (cli/cli_common.cc), trailmap-query from URL parameters (query/http/); both get
// the same parsing, the same error messages and the same fan-out from here.
//
// QueryContext: what main() reads once and hands down (clock, environment, ZeroMQ context), so
// nothing below main() reads a clock or the environment and tests hand in their own.
//
// Errors: InvalidArgument for what the user typed (the message names the flag, written as the
// CLI's long option: "--from: ..."), Unavailable when no shard answered at all, Corruption when
// the answers do not merge. Value types; FanOutAll and FetchGrid may run on several threads at
// once with one zmq::context_t (query/fetch/fanout.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "core/query_wire.h"
#include "core/status.h"
#include "query/fetch/fanout.h"
#include "query/fetch/partials.h"

namespace trailmap {

struct QueryContext {
  zmq::context_t* zmq = nullptr;
  int64_t now = 0;              // unix seconds (a main() reads UnixSecondsNow()): "-5m" is from it
  std::string env_aggregators;  // $TRAILMAP_AGGREGATORS
  std::string env_ingest;       // $TRAILMAP_INGEST
  std::string env_config;       // $TRAILMAP_CONFIG
  std::string env_cluster;      // $TRAILMAP_CLUSTER
  std::string home;             // $HOME
  bool stdout_is_terminal = false;  // the CLI's standard output is a terminal (never for HTTP)
  int terminal_columns = 0;         // 0 when unknown
  CurveClient curve;  // the keys queries are sent with; a query fails with Usable()'s message
  // When no shard answers: true (the CLI), FanOutAll returns the empty result with every shard
  // (in a replicated cluster, every owner set) failed, so a view prints its document with all of
  // them under missing_shards, as a partial answer does; false (trailmap-query), Unavailable.
  bool empty_when_none_answer = false;
  // Set (trailmap-query): the cluster to ask, read once and again on SIGHUP, instead of the one
  // QueryCluster would resolve from the request and the environment.
  std::shared_ptr<const Cluster> cluster;
  // true (the CLI): a view may deliver a large document as ViewDocument::stream, not bytes.
  bool stream_documents = false;
  // Set (trailmap-query): true once nobody will read the answer (its client left, the server
  // stops). The fan-out stops waiting for shards (FanoutOptions::cancelled), and a view stops
  // before it draws (GoOn).
  std::function<bool()> cancelled;
  // Set (trailmap-query): when the request came. A view still drawing past it plus twice the
  // request's timeout stops (GoOn): the shards may take one timeout, drawing as long again.
  std::chrono::steady_clock::time_point received{};
};

// The parameters every view shares, as text: parsing them is shared too.
struct ViewRequest {
  std::string metric;
  std::string from = "-5m";
  std::string to = "now";
  std::string by;              // "" | "host" | a field key
  std::string hosts;           // "a,b": only these hosts
  std::string where;           // a predicate (core/predicate.h), evaluated in the aggregators
  std::string aggregators;     // query endpoints; see query/fetch/endpoints.h for the fallbacks
  std::string config;          // a TOML file naming the aggregators
  std::string cluster;         // a cluster file (core/cluster.h), instead of `aggregators`
  std::string timeout = "5s";  // also sent as the query's deadline (9/10 of it, FanOutAll)
  // Ask the aggregators for less than their own limits (0 = theirs;
  // aggregator/scan/query_budget.h).
  uint64_t max_keys = 0;   // stored keys one shard may read
  uint64_t max_cells = 0;  // cells (columns x groups) one shard may answer
};

// The time range of `request` (usage errors name the flag).
struct TimeRange {
  int64_t from = 0;
  int64_t to = 0;
};
Result<TimeRange> ParseTimeRange(const ViewRequest& request, int64_t now);

// The outcome of one query over all shards: the merged grid and the shards that did not answer.
struct Fetched {
  MergedGrid grid;
  std::vector<std::string> missing;  // "tcp://host:port: reason"
  std::vector<std::string> skipped;  // down, but their replicas answered: "agg-2 (...): reason"
};

// The cluster `request` asks: context.cluster when set, else request.cluster or
// request.aggregators, else the environment and config files of `context`
// (query/fetch/endpoints.h). InvalidArgument names what is wrong.
Result<Cluster> QueryCluster(const QueryContext& context, const ViewRequest& request);

// Resolves the cluster and sends `query` (its id and limits are set here) to its members: for a
// histogram or stack query those of the epochs its range touches, in rounds when R > 1 so each
// host-second is answered once (FanOutReplicas); otherwise to every member. The query's deadline
// is 9/10 of request.timeout, so a shard's "over budget" answer arrives before the fan-out gives
// up on it. Fails with InvalidArgument for bad parameters and for a query a shard refused as over
// its budget ("agg-1 (tcp://...): query over budget: ... narrow it: ..."), PermissionDenied when
// no shard answered and some refused the client's key ("agg-1 (tcp://...) refused this key: key
// web may only ingest, not query: ..."), Unavailable when no shard answered at all (unless
// context.empty_when_none_answer); the shards that did not answer
// are in the result's failures (data missing) or skipped (their replicas answered instead).
Result<FanoutResult> FanOutAll(const QueryContext& context, const ViewRequest& request,
                               Query query);

// Resolves the aggregators, fans the query out (with request.where) and merges the answers. Fails
// with InvalidArgument for bad parameters, Unavailable when no shard answered at all (unless
// context.empty_when_none_answer: then an empty grid with every shard missing), Corruption
// when the answers do not merge.
Result<Fetched> FetchGrid(const QueryContext& context, const ViewRequest& request,
                          const HistogramQuery& query);

// A value-axis parameter (--ymax, --ymin) read in the metric's base unit: "20ms" for a metric in
// ns. InvalidArgument names the flag and the metric's unit.
Result<uint64_t> ParseAxisFlag(const char* flag, const std::string& text, const std::string& metric,
                               const std::string& unit);

// One column covering the whole range, grouped by `group_by`, over request.metric and
// request.hosts: the aggregators merge the seconds themselves (stats, columns, outliers).
HistogramQuery WholeRangeQuery(const ViewRequest& request, const TimeRange& range,
                               const std::string& group_by);

// Whether a view of `request` should go on with its next stage: Ok, or Unavailable when
// context.cancelled says nobody waits for it, or ResourceExhausted ("not drawn within twice
// --timeout 5s ...") once context.received plus twice request.timeout has passed. Cheap: call it
// between stages and in long loops.
Status GoOn(const QueryContext& context, const ViewRequest& request);

// "a,b,,c" → {"a", "b", "c"}.
std::vector<std::string> SplitList(const std::string& list);

}  // namespace trailmap
