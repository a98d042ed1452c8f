#include "cli/import_command.h"

#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <algorithm>
#include <cstdlib>
#include <unordered_map>
#include <memory>
#include <optional>
#include <ostream>

#include "cli/stack_import.h"
#include "cli/stack_import_pprof.h"
#include "core/cluster.h"
#include "core/counts.h"
#include "core/endpoint.h"
#include "core/series.h"
#include "core/stack_collapse.h"
#include "core/timespec.h"
#include "core/units.h"
#include "ingest/bucketizer.h"
#include "ingest/hlog_reader.h"
#include "ingest/replicated_shipper.h"
#include "ingest/trace_source.h"
#include "query/draw/view_text.h"
#include "query/fetch/endpoints.h"

namespace trailmap {
namespace {

// "1 second", "2 seconds", "1,000 batches".
std::string CountOf(uint64_t n, const std::string& one, const std::string& many = "") {
  return FormatCount(n) + " " + (n == 1 ? one : many.empty() ? one + "s" : many);
}

// What both kinds of import need from the flags: the host's canonical --field set, the ack
// timeout, and the cluster whose owners of --host get every batch. Errors name the flag.
struct ImportTarget {
  FieldSet field_set;  // --field, as given
  std::string fields;  // the same, canonical
  uint64_t ack_timeout = 0;  // as ParseDuration gives it
  Cluster cluster;     // --cluster FILE, or the ingest endpoints' short form (R=1)
  std::optional<int64_t> start;  // --start: the first event's (or interval's) second
};

Result<ImportTarget> ResolveImportTarget(const ImportFlags& flags, const CliContext& context) {
  if (flags.host.empty()) return Status::InvalidArgument("--host is empty");
  FieldSet fields;
  for (const std::string& f : flags.fields) {
    const size_t eq = f.find('=');
    if (eq == std::string::npos) return Status::InvalidArgument("--field " + f + ": use key=value");
    fields.emplace_back(f.substr(0, eq), f.substr(eq + 1));
  }
  Result<std::string> canonical = CanonicalFields(fields);
  if (!canonical.ok()) return Status::InvalidArgument("--field: " + canonical.status().message());
  Result<uint64_t> ack_timeout = ParseDuration(flags.ack_timeout);
  if (!ack_timeout.ok()) {
    return Status::InvalidArgument("--ack-timeout: " + ack_timeout.status().message());
  }
  std::optional<int64_t> start;
  if (!flags.start.empty()) {
    Result<int64_t> t = ParseTimeSpec(flags.start, context.now);
    if (!t.ok()) return Status::InvalidArgument("--start: " + t.status().message());
    start = *t;
  }
  if (!flags.cluster.empty()) {
    if (!flags.ingest.empty()) {
      return Status::InvalidArgument(
          "give --cluster FILE or --aggregators LIST, not both (--aggregators is the short form "
          "of a one-zone cluster with R=1)");
    }
    Result<Cluster> cluster = LoadCluster(flags.cluster);
    if (!cluster.ok()) return Status::InvalidArgument("--cluster: " + cluster.status().message());
    return ImportTarget{std::move(fields), std::move(*canonical), *ack_timeout, std::move(*cluster),
                        start};
  }
  EndpointSources sources{flags.ingest, flags.config, context.env_ingest, context.env_config,
                          context.home};
  Result<std::vector<std::string>> endpoints = ResolveEndpoints(EndpointKind::kIngest, sources);
  if (!endpoints.ok()) {
    return Status::InvalidArgument("ingest endpoints: " + endpoints.status().message());
  }
  std::string list;
  for (const std::string& e : *endpoints) list += (list.empty() ? "" : ",") + e;
  Result<Cluster> cluster = ClusterFromList(list, kDefaultIngestPort);
  if (!cluster.ok()) {
    return Status::InvalidArgument("ingest endpoints: " + cluster.status().message());
  }
  return ImportTarget{std::move(fields), std::move(*canonical), *ack_timeout, std::move(*cluster),
                      start};
}

// Where imported events land: at their own second, or shifted so the first lands at --start;
// and the span they cover.
struct SecondPlacer {
  std::optional<int64_t> start;
  bool any = false;
  int64_t shift = 0, first = 0, last = 0;

  int64_t Place(int64_t second) {
    if (!any) {
      any = true;
      if (start) shift = *start - second;
      first = last = second + shift;
    }
    second += shift;
    first = std::min(first, second);
    last = std::max(last, second);
    return second;
  }
  uint64_t seconds() const { return any ? static_cast<uint64_t>(last - first + 1) : 0; }
};

using FilePtr = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

// FILE, or standard input for "-" (not closed).
Result<FilePtr> OpenInput(const std::string& path) {
  if (path == "-") return FilePtr(stdin, [](std::FILE*) { return 0; });
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return Status::IOError("cannot open " + path);
  return FilePtr(file, &std::fclose);
}

constexpr size_t kChunk = 4 << 20;  // bytes read at a time
constexpr int64_t kYear2000 = 946'684'800;

int Fail(const CliContext& context, const Status& status) {
  *context.err << "trailmap import: " << status.message() << "\n";
  return ExitCodeFor(status);
}

// ParseTrace numbers lines from 1 within the text it is given; add the lines of earlier chunks.
Status ShiftLineNumber(const Status& status, uint64_t lines_before) {
  const std::string& m = status.message();
  if (m.rfind("line ", 0) != 0) return status;
  size_t end = 5;
  uint64_t line = 0;
  while (end < m.size() && m[end] >= '0' && m[end] <= '9') line = line * 10 + (m[end++] - '0');
  if (end == 5) return status;
  return Status::InvalidArgument("line " + std::to_string(line + lines_before) + m.substr(end));
}

// Ships every second the bucketizer holds to each of the host's owners in `cluster`, then waits
// for every acknowledgement of every owner.
int ShipAll(Bucketizer* bucketizer, const std::string& host, const Cluster& cluster,
            uint64_t ack_timeout_ns, std::chrono::steady_clock::time_point began,
            const std::string& summary, const CliContext& context) {
  if (const uint64_t refused = bucketizer->counters().refused_events; refused > 0) {
    return Fail(context, Status::InvalidArgument(
                             std::to_string(refused) + " events would take a second of the series "
                             "(or of one stack) past 2^40, the most one item carries; nothing sent"));
  }
  if (Status s = context.curve.Usable(); !s.ok()) return Fail(context, s);
  ReplicatedShipper shipper(
      cluster, [&host, &context](const ClusterMember& member) -> Result<std::unique_ptr<Shipper>> {
        ShipperOptions options;
        options.endpoint = member.ingest;
        options.curve = MemberCurve(context.curve, member);  // its own server key, if any
        if (member.name != member.ingest) options.name = member.name;
        options.agent_id = NewAgentId(host);
        // How soon the shipper's thread notices batches sent while it polls, and the end: at the
        // agents' 50 ms a small import waited out two polls (~100 ms of its ~170 ms).
        // An import is short-lived, so waking every 2 ms costs nothing that matters.
        options.poll_interval = std::chrono::milliseconds(2);
        return std::make_unique<Shipper>(std::move(options));
      });
  uint64_t batches = 0;
  const auto wait = std::chrono::milliseconds(std::max<uint64_t>(1, ack_timeout_ns / 1'000'000));
  // 600 seconds a batch, not the agents' 60: the aggregator syncs its log once per batch, so a
  // small import's five batches cost five syncs (~15 ms of a 40 ms import at load 6).
  // MakeBatches still cuts a batch that would pass the aggregator's limits.
  constexpr size_t kSecondsPerBatch = 600;
  for (;;) {
    CompletedSeconds done = bucketizer->TakeAll(kSecondsPerBatch);
    if (done.empty()) break;
    for (Batch& batch : MakeBatches(std::move(done), host, {})) {
      if (!shipper.Send(std::move(batch))) {
        return Fail(context, Status::ResourceExhausted("the shipper's queue is full"));
      }
    }
    // Keep the held batches (60,000 seconds) well below ShipperOptions::max_bytes on long traces.
    if (++batches % 100 == 0) {
      if (Status s = shipper.Flush(wait); !s.ok())
        return Fail(context, Status::IOError(s.message()));
    }
  }
  const Status flushed = shipper.Flush(wait);
  const ShipperCounters c = shipper.TotalCounters();
  std::string owners;
  for (const std::string& member : shipper.members()) owners += (owners.empty() ? "" : ", ") + member;
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  *context.err << "trailmap import: " << summary << " → " << owners << ": "
               << CountOf(c.sent, "batch", "batches") << " sent, "
               << FormatCount(c.acked)
               << " acknowledged, " << FormatCount(c.duplicates) << " duplicates, "
               << FormatCount(c.rejected) << " rejected, in " << FormatSignificant(took) << "s\n";
  if (!flushed.ok()) return Fail(context, Status::IOError(flushed.message()));
  if (c.rejected > 0 || c.dropped > 0) {
    *context.err << "trailmap import: " << c.rejected << " batches rejected and " << c.dropped
                 << " dropped; see the aggregator's log for the reasons\n";
    return kExitError;
  }
  return kExitOk;
}

Result<std::string> ReadWholeFile(const std::string& path) {
  std::FILE* file = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (file == nullptr) return Status::IOError("cannot open " + path);
  std::string text;
  char buffer[1 << 16];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0) text.append(buffer, n);
  const bool failed = std::ferror(file) != 0;
  if (file != stdin) std::fclose(file);
  if (failed) return Status::IOError("error reading " + path);
  return text;
}

int RunStackImport(const ImportFlags& flags, const CliContext& context) {
  const std::string metric = flags.metric.empty() ? "cpu.stacks" : flags.metric;
  if (Status s = ValidateMetricName(metric); !s.ok())
    return Fail(context, Status::InvalidArgument("--metric: " + s.message()));
  Result<ImportTarget> target = ResolveImportTarget(flags, context);
  if (!target.ok()) return Fail(context, target.status());
  const std::string& canonical = target->fields;
  const uint64_t ack_timeout = target->ack_timeout;
  const Cluster& cluster = target->cluster;
  const FieldSet& fields = target->field_set;
  std::optional<int64_t> at;
  if (!flags.time.empty()) {
    Result<int64_t> t = ParseTimeSpec(flags.time, context.now);
    if (!t.ok()) return Fail(context, Status::InvalidArgument("--time: " + t.status().message()));
    at = *t;
  }

  const auto began = std::chrono::steady_clock::now();
  Result<std::string> text = ReadWholeFile(flags.file);
  if (!text.ok()) return Fail(context, text.status());
  bool perf = flags.stacks_format == "perf";
  bool pprof = flags.stacks_format == "pprof";
  if (flags.stacks_format == "auto") {
    // pprof profiles are gzipped; perf script's frame lines start with a blank; folded lines
    // never do.
    pprof = LooksGzipped(*text);
    perf = !pprof &&
           (text->find("\n\t") != std::string::npos || text->find("\n ") != std::string::npos);
  }
  if (!flags.sample_type.empty() && !pprof) {
    return Fail(context, Status::InvalidArgument("--sample-type is for pprof profiles only"));
  }
  std::vector<std::pair<int64_t, FoldedStacks>> seconds;
  // pprof: each stack carries its own fields (labels, sample_type), so it is sent as it is.
  std::vector<PprofStack> pprof_stacks;
  std::string pprof_type;
  if (pprof) {
    Result<PprofStacks> decoded = DecodePprof(*text, {.sample_type = flags.sample_type});
    if (!decoded.ok()) return Fail(context, Status::InvalidArgument(flags.file + ": " +
                                                                    decoded.status().message()));
    if (decoded->negative_values + decoded->labels_dropped > 0) {
      *context.err << "trailmap import: " << decoded->negative_values
                   << " pprof samples with a negative value and " << decoded->labels_dropped
                   << " labels that are not valid fields left out\n";
    }
    for (const PprofStack& s : decoded->stacks) {
      if (s.count > kMaxItemCount) {
        return Fail(context,
                    Status::InvalidArgument(
                        flags.file + ": a stack holds " + std::to_string(s.count) + " " +
                        decoded->sample_type + ", more than one stack may carry (2^40); import "
                        "a count type (--sample-type samples) instead"));
      }
    }
    pprof_type = decoded->sample_type;
    pprof_stacks = std::move(decoded->stacks);
    seconds.emplace_back(at ? *at : context.now, FoldedStacks{});
  } else if (perf) {
    TimedStacks timed = CollapsePerfScriptBySecond(*text);
    if (timed.stats.malformed_lines > 0 || timed.stats.other_event_records > 0) {
      *context.err << "trailmap import: " << timed.stats.malformed_lines
                   << " perf script lines not understood and " << timed.stats.other_event_records
                   << " records of events other than " << timed.stats.event << " skipped\n";
    }
    const int64_t span = timed.seconds.empty() ? 0 : timed.seconds.back().first;
    const int64_t base = at ? *at : context.now - 1 - span;
    for (auto& [offset, stacks] : timed.seconds) seconds.emplace_back(base + offset, std::move(stacks));
  } else {
    Result<FoldedStacks> folded = ParseFoldedStackLines(*text);
    if (!folded.ok()) return Fail(context, folded.status());
    if (!folded->empty()) seconds.emplace_back(at ? *at : context.now, std::move(folded).value());
  }

  // perf script stacks start with the process name, which becomes the execname field (as the
  // agent's perf source sets it), unless --field gives one.
  const bool own_execname =
      !perf || std::any_of(fields.begin(), fields.end(),
                           [](const Field& f) { return f.first == "execname"; });
  std::unordered_map<std::string, std::string> fields_of_comm;
  const auto fields_for = [&](const std::string& comm) -> const std::string& {
    auto [it, added] = fields_of_comm.emplace(comm, canonical);
    if (added && ValidateField("execname", comm).ok()) {
      FieldSet with = fields;
      with.emplace_back("execname", comm);
      if (Result<std::string> c = CanonicalFields(with); c.ok()) it->second = *c;
    }
    return it->second;
  };
  Bucketizer bucketizer;
  uint64_t samples = 0;
  StackSample sample;
  sample.metric = metric;
  sample.fields = canonical;
  for (auto& [second, stacks] : seconds) {
    for (FoldedStack& s : stacks) {
      sample.second = second;
      sample.frames = SplitFoldedFrames(s.stack);
      if (!own_execname) sample.fields = fields_for(sample.frames.front());
      sample.count = s.count;
      samples += s.count;
      bucketizer.AddStack(sample);
    }
  }
  for (const PprofStack& s : pprof_stacks) {
    FieldSet with = fields;  // a --field wins over a label of the same key
    for (const Field& label : s.labels) {
      if (std::none_of(with.begin(), with.end(),
                       [&label](const Field& f) { return f.first == label.first; })) {
        with.push_back(label);
      }
    }
    Result<std::string> c = CanonicalFields(std::move(with));
    if (!c.ok()) {
      return Fail(context, Status::InvalidArgument(flags.file + ": a sample's labels with the "
                                                   "--field fields: " + c.status().message()));
    }
    sample.second = seconds.front().first;
    sample.fields = *c;
    sample.frames = s.frames;
    sample.count = s.count;
    samples += s.count;
    bucketizer.AddStack(sample);
  }
  if (samples == 0) {
    *context.err << "trailmap import: " << flags.file << " holds no stacks; nothing sent\n";
    return kExitOk;
  }
  const BucketizerCounters counters = bucketizer.counters();
  if (counters.truncated_stacks + counters.truncated_frames > 0) {
    *context.err << "trailmap import: cut " << counters.truncated_stacks
                 << " stacks at the depth bound and " << counters.truncated_frames
                 << " frame names at the length bound\n";
  }
  const std::string summary = FormatCount(samples) + " " +
                              (pprof ? "pprof (" + pprof_type + ")" : perf ? "perf" : "folded") +
                              " stack samples over " + CountOf(seconds.size(), "second") +
                              " (" + FormatRfc3339(seconds.front().first) + " to " +
                              FormatRfc3339(seconds.back().first) + ") for " + flags.host + " " +
                              metric;
  return ShipAll(&bucketizer, flags.host, cluster, ack_timeout, began, summary, context);
}

// --hlog: every interval of the log (or of --tag) into --metric's histograms at its start
// second; the whole log is read and checked before anything is sent.
int RunHlogImport(const ImportFlags& flags, const CliContext& context) {
  if (flags.metric.empty()) return Fail(context, Status::InvalidArgument("--metric is required"));
  if (flags.stacks)
    return Fail(context, Status::InvalidArgument("give --hlog or --stacks, not both"));
  const std::string unit_name = flags.value_unit.empty() ? "ns" : flags.value_unit;
  Result<double> unit = TraceUnitNs(unit_name);
  if (!unit.ok())
    return Fail(context, Status::InvalidArgument("--value-unit: " + unit.status().message()));
  const auto unit_ns = static_cast<uint64_t>(*unit);  // 1, 1e3, 1e6 or 1e9: integral
  if (Status s = ValidateMetricName(flags.metric); !s.ok())
    return Fail(context, Status::InvalidArgument("--metric: " + s.message()));
  Result<ImportTarget> target = ResolveImportTarget(flags, context);
  if (!target.ok()) return Fail(context, target.status());
  Result<FilePtr> input = OpenInput(flags.file);
  if (!input.ok()) return Fail(context, input.status());
  std::FILE* file = input->get();

  const auto began = std::chrono::steady_clock::now();
  const SeriesDef series{flags.metric, MetricKind::kLatency, "ns", target->fields};
  Bucketizer bucketizer;
  HlogReader reader({.tag = flags.hlog_tag});
  SecondPlacer placer{target->start};
  uint64_t events = 0;
  Status bad;  // the first value that does not fit in ns; the read goes on, nothing is sent
  const auto on_interval = [&bucketizer, &series, &placer, &events, &bad, unit_ns,
                            &unit_name](const HlogInterval& interval) {
    const int64_t second = placer.Place(interval.start_ns / 1'000'000'000);  // start_ns >= 0
    for (const HdrBucket& b : interval.histogram->buckets) {
      const uint64_t value = b.Representative();
      if (value > UINT64_MAX / unit_ns) {
        if (bad.ok()) {
          bad =
              Status::InvalidArgument("line " + std::to_string(interval.line) + ": a value of " +
                                      std::to_string(value) + " " + unit_name + " passes 2^64 ns");
        }
        return;
      }
      bucketizer.Add(second, series, value * unit_ns, b.count);
    }
    events += interval.histogram->total_count;
  };
  std::string buffer(kChunk, '\0'), pending;
  for (;;) {
    const size_t n = std::fread(buffer.data(), 1, buffer.size(), file);
    pending.append(buffer.data(), n);
    const bool eof = n < buffer.size();
    if (eof && std::ferror(file))
      return Fail(context, Status::IOError("error reading " + flags.file));
    const size_t cut = eof ? pending.size() : pending.rfind('\n') + 1;
    if (cut == 0 && !eof) {
      if (pending.size() <= kMaxHlogLineBytes) continue;
      return Fail(context, Status::InvalidArgument(
                               flags.file + ": line " + std::to_string(reader.summary().lines + 1) +
                               ": longer than " + std::to_string(kMaxHlogLineBytes >> 20) +
                               " MiB; nothing sent"));
    }
    if (Status s = reader.Read(std::string_view(pending.data(), cut), on_interval); !s.ok()) {
      return Fail(context,
                  Status::InvalidArgument(flags.file + ": " + s.message() + "; nothing sent"));
    }
    pending.erase(0, cut);
    if (eof) break;
  }
  if (!bad.ok())
    return Fail(context,
                Status::InvalidArgument(flags.file + ": " + bad.message() + "; nothing sent"));
  const HlogSummary& read = reader.summary();
  if (read.other_tags > 0) {
    *context.err << "trailmap import: " << CountOf(read.other_tags, "interval")
                 << (flags.hlog_tag.empty() ? " with a tag" : " not tagged " + flags.hlog_tag)
                 << " left out (--tag NAME imports a tag's)\n";
  }
  if (read.long_intervals > 0) {
    *context.err << "trailmap import: " << CountOf(read.long_intervals, "interval")
                 << " longer than a second, each placed whole at its start second\n";
  }
  if (!placer.any) {
    *context.err << "trailmap import: " << flags.file << " holds no intervals"
                 << (flags.hlog_tag.empty() ? "" : " tagged " + flags.hlog_tag)
                 << "; nothing sent\n";
    return kExitOk;
  }
  if (!placer.start && placer.first < kYear2000) {
    *context.err << "trailmap import: note: the first interval is at "
                 << FormatRfc3339(placer.first)
                 << "; if the log's times are not unix time, place them with --start\n";
  }
  const std::string summary =
      CountOf(read.intervals, "interval") + " (" + CountOf(events, "event") + ") over " +
      CountOf(placer.seconds(), "second") + " (" + FormatRfc3339(placer.first) + " to " +
      FormatRfc3339(placer.last) + ") for " + flags.host + " " + flags.metric;
  return ShipAll(&bucketizer, flags.host, target->cluster, target->ack_timeout, began, summary,
                 context);
}
}  // namespace

CLI::App* AddImportCommand(CLI::App* app, ImportFlags* flags) {
  CLI::App* cmd = app->add_subcommand(
      "import",
      "Send a trace file (time and latency per line) to the aggregators as a host's metric");
  cmd->add_option("--host", flags->host, "The host the events belong to")->required();
  cmd->add_option("--metric,-m", flags->metric,
                  "Metric name, e.g. disk.latency (required; with --stacks default cpu.stacks)");
  cmd->add_option("--time-unit", flags->time_unit, "Unit of the time column: s, ms, us, ns")
      ->capture_default_str();
  cmd->add_option("--value-unit", flags->value_unit,
                  "Unit of the latency column: s, ms, us, ns (default us; with --hlog, of the "
                  "log's values: default ns, as HdrHistogram's log tools assume)");
  cmd->add_option("--field", flags->fields,
                  "A field on every event, k=v (repeatable): --field op=read");
  cmd->add_option("--start", flags->start,
                  "Shift the events so the first lands at this time (-1h, RFC 3339, ...), for "
                  "traces whose times are not unix time");
  cmd->add_option("--ingest,--aggregators", flags->ingest,
                  "Aggregator INGEST endpoints HOST:PORT,... (default port 7400; not the query "
                  "port 7401), in the agents' order; else $TRAILMAP_INGEST, else `ingest` in the "
                  "config file, else 127.0.0.1:7400");
  cmd->add_option("--config", flags->config, "TOML file with ingest = [\"HOST:PORT\", ...]");
  cmd->add_option("--cluster", flags->cluster,
                  "Cluster file (TOML, core/cluster.h): every batch goes to each of the host's R "
                  "owners in it (not with --aggregators)");
  cmd->add_option("--ack-timeout", flags->ack_timeout,
                  "How long to wait for every batch to be acknowledged")
      ->capture_default_str();
  cmd->add_flag("--quiet,-q", flags->quiet, "No progress lines");
  cmd->add_flag("--stacks", flags->stacks,
                "The file holds stacks: perf script output, folded \"a;b;c 42\" lines (also "
                "async-profiler's and py-spy's) or a pprof profile (.pb.gz)");
  cmd->add_option("--stacks-format", flags->stacks_format,
                  "With --stacks: perf, folded, pprof, or auto (pprof when gzipped, perf when a "
                  "line starts with a blank, as perf script's frame lines do)")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "perf", "folded", "pprof"}));
  cmd->add_option("--sample-type", flags->sample_type,
                  "With a pprof profile: the sample type to import (cpu, samples, alloc_space, "
                  "...; default the first counted in \"count\", else the profile's default)");
  cmd->add_option("--time", flags->time,
                  "With --stacks: folded and pprof stacks land at this second (default now); perf script "
                  "samples are shifted so the first lands here (default: the last lands a "
                  "second before now)");
  cmd->add_flag("--hlog", flags->hlog,
                "The file is an HdrHistogram interval log (.hlog: HistogramLogWriter, wrk2, "
                "jHiccup, cassandra-stress); each interval lands at its start second");
  cmd->add_option("--tag", flags->hlog_tag,
                  "With --hlog: import the intervals tagged NAME (default: the untagged ones)");
  cmd->add_option("FILE", flags->file, "The trace file, - for standard input")->required();
  cmd->footer(
      "Examples:\n"
      "  trailmap import --host db-7 --metric disk.latency --time-unit us --value-unit us "
      "trace.txt\n"
      "  perf script ... | awk ... | trailmap import --host web-1 --metric io.latency "
      "--start -10m -\n"
      "  perf script | trailmap import --stacks --host web-1 -\n"
      "  trailmap import --stacks --host web-1 --time -2m --field execname=nginx out.folded\n"
      "  trailmap import --stacks --host api-3 --metric go.cpu.stacks cpu.pb.gz\n"
      "  trailmap import --cluster cluster.toml --host db-7 --metric disk.latency trace.txt\n"
      "  trailmap import --hlog --host web-1 --metric http.latency --value-unit us wrk2.hlog\n"
      "Exit codes: 0 every batch acknowledged, 1 a batch rejected or unacknowledged, 2 usage or "
      "file format error.");
  return cmd;
}

int RunImport(const ImportFlags& flags, const CliContext& context) {
  if (flags.hlog) return RunHlogImport(flags, context);
  if (flags.stacks) return RunStackImport(flags, context);
  if (!flags.hlog_tag.empty()) return Fail(context, Status::InvalidArgument("--tag is for --hlog"));
  if (flags.metric.empty()) return Fail(context, Status::InvalidArgument("--metric is required"));
  // Flags first: nothing is read or sent until they all make sense.
  Result<double> time_unit = TraceUnitNs(flags.time_unit);
  if (!time_unit.ok())
    return Fail(context, Status::InvalidArgument("--time-unit: " + time_unit.status().message()));
  Result<double> value_unit = TraceUnitNs(flags.value_unit.empty() ? "us" : flags.value_unit);
  if (!value_unit.ok())
    return Fail(context, Status::InvalidArgument("--value-unit: " + value_unit.status().message()));
  if (Status s = ValidateMetricName(flags.metric); !s.ok())
    return Fail(context, Status::InvalidArgument("--metric: " + s.message()));
  Result<ImportTarget> target = ResolveImportTarget(flags, context);
  if (!target.ok()) return Fail(context, target.status());
  const std::string& canonical = target->fields;
  const uint64_t ack_timeout = target->ack_timeout;
  const Cluster& cluster = target->cluster;

  // Read and bucketize the whole trace.
  Result<FilePtr> input = OpenInput(flags.file);
  if (!input.ok()) return Fail(context, input.status());
  std::FILE* file = input->get();
  uint64_t file_size = 0;
  struct stat st {};
  if (file != stdin && fstat(fileno(file), &st) == 0 && S_ISREG(st.st_mode)) file_size = st.st_size;

  const SeriesDef series{flags.metric, MetricKind::kLatency, "ns", canonical};
  Bucketizer bucketizer;
  TraceOptions trace_options{*time_unit, *value_unit};
  SecondPlacer placer{target->start};
  auto on_event = [&bucketizer, &series, &placer](int64_t time_ns, uint64_t value_ns) {
    const int64_t second = placer.Place(time_ns >= 0 ? time_ns / 1'000'000'000
                                                     : -((-time_ns + 999'999'999) / 1'000'000'000));
    bucketizer.Add(second, series, value_ns);
  };

  std::string buffer, pending;
  buffer.resize(kChunk);
  uint64_t bytes_read = 0, lines_before = 0, events = 0;
  auto last_progress = std::chrono::steady_clock::now();
  const auto began = last_progress;
  for (;;) {
    const size_t n = std::fread(buffer.data(), 1, buffer.size(), file);
    bytes_read += n;
    pending.append(buffer.data(), n);
    const bool eof = n < buffer.size();
    if (eof && std::ferror(file))
      return Fail(context, Status::IOError("error reading " + flags.file));
    // Parse up to the last complete line; the rest waits for the next block.
    const size_t cut = eof ? pending.size() : pending.rfind('\n') + 1;
    if (cut == 0 && !eof) continue;
    const std::string_view text(pending.data(), cut);
    Result<TraceSummary> summary = ParseTrace(text, trace_options, on_event);
    if (!summary.ok()) return Fail(context, ShiftLineNumber(summary.status(), lines_before));
    if (summary->had_header && lines_before > 0) {
      // Only the file's first non-blank line may be a header.
      Status bad = Status::InvalidArgument("line 1: expected two columns, time and latency");
      return Fail(context, ShiftLineNumber(bad, lines_before));
    }
    lines_before += summary->lines;
    events += summary->events;
    pending.erase(0, cut);
    const auto now = std::chrono::steady_clock::now();
    if (!flags.quiet && now - last_progress > std::chrono::seconds(2)) {
      last_progress = now;
      *context.err << "trailmap import: read " << FormatSignificant(bytes_read / 1e6) << " MB"
                   << (file_size ? " of " + FormatSignificant(file_size / 1e6) + " MB" : "") << ", "
                   << FormatCount(events) << " events, " << CountOf(placer.seconds(), "second")
                   << "\n";
    }
    if (eof) break;
  }
  if (!placer.any) {
    *context.err << "trailmap import: " << flags.file << " holds no events; nothing sent\n";
    return kExitOk;
  }
  if (!placer.start && placer.first < kYear2000) {
    *context.err << "trailmap import: note: the first event is at " << FormatRfc3339(placer.first)
                 << "; if the trace's times are not unix time, place them with --start\n";
  }

  const std::string summary = FormatCount(events) + " events over " +
                              CountOf(placer.seconds(), "second") + " (" +
                              FormatRfc3339(placer.first) + " to " + FormatRfc3339(placer.last) +
                              ") for " + flags.host + " " + flags.metric;
  return ShipAll(&bucketizer, flags.host, cluster, ack_timeout, began, summary, context);
}

}  // namespace trailmap
