// `trailmap import`: sends a trace file (trace2heatmap format: event time and latency per line)
// through the normal ingest path, with the events' own timestamps, so it can be viewed like live
// data. The trace is bucketized into per-second histograms (ingest/bucketizer.h) and shipped
// (ingest/shipper.h) to the aggregator that owns the host: rendezvous hashing (core/cluster.h) over
// the INGEST endpoints (port 7400), as the agents place it.
//
// With --stacks the file holds stacks instead: `perf script` text (folded by stacks/stack_collapse
// as stackcollapse-perf does, one batch of counts per second of the samples' own timestamps,
// which are shifted so the first lands at --time, or so the last lands a second before now) or
// folded "stack count" lines (all at --time, default now), or a pprof profile
// (cli/stack_import_pprof.h: one sample type, labels as fields, at --time). They become
// StackSamples of --metric (default cpu.stacks) with the --field fields, through the same
// bucketizer and shipper as the agent's stack sources.
//
// With --hlog the file is an HdrHistogram interval log (ingest/hlog_reader.h: HistogramLogWriter,
// wrk2, jHiccup, cassandra-stress): each interval's histogram becomes --metric's histogram at the
// second its start falls in (StartTime and BaseTime applied as HdrHistogram's reader does; --start
// shifts the first interval there). An interval longer than a second stays whole at its start
// second: the log does not say when within the interval each value came, so spreading it would
// invent a uniform rate and split integer counts; the summary says how many were that long.
// Every HdrHistogram bucket's count goes, exactly, to the bucket's middle value (times
// --value-unit, default ns for a log): a value moves by at most half its source bucket's width
// (1/2048 of its power of two at 3 significant digits), then sits in trailmap's own bucket.
//
// Nothing half-imported is claimed: the whole file is read and checked before the first batch is
// sent, so a bad line 10 million lines in sends nothing. Then every batch must be acknowledged;
// a rejected or unacknowledged batch makes the command fail (exit 1).
#pragma once

#include <string>
#include <vector>

#include "cli/cli_common.h"

namespace trailmap {

struct ImportFlags {
  std::string host;
  std::string metric;
  std::string time_unit = "us";  // trace2heatmap's default
  std::string value_unit;        // "" = "us" for traces (trace2heatmap's default), "ns" for --hlog
  std::vector<std::string> fields;  // k=v
  std::string start;                // "" = as in the file; else shift the first event to this time
  std::string ingest;               // INGEST endpoints HOST:PORT,...; see query/fetch/endpoints.h
  std::string config;
  std::string cluster;              // --cluster FILE (core/cluster.h); not with ingest
  std::string ack_timeout = "60s";  // how long to wait for the last acknowledgement
  bool quiet = false;
  std::string file;                    // "-" = standard input
  bool stacks = false;                 // --stacks: the file holds perf script or folded stacks
  std::string stacks_format = "auto";  // auto | perf | folded | pprof
  std::string sample_type;             // --sample-type: the pprof value to import ("" = default)
  std::string time;                    // --time: where stacks land ("" = see the header)
  bool hlog = false;                   // --hlog: the file is an HdrHistogram interval log
  std::string hlog_tag;                // --tag: its intervals of this tag ("" = untagged ones)
};

CLI::App* AddImportCommand(CLI::App* app, ImportFlags* flags);
int RunImport(const ImportFlags& flags, const CliContext& context);

}  // namespace trailmap
