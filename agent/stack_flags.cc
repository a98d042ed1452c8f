#include "agent/stack_flags.h"

#include <CLI/CLI.hpp>

namespace trailmap {

void AddStackSourceFlags(CLI::App* app, StackSourceFlags* f) {
  const std::string group = "Stack sources (flame graphs)";
  app->add_flag("--perf", f->perf,
                "Sample every process's CPU stacks with Linux perf (needs root, CAP_PERFMON or "
                "kernel.perf_event_paranoid <= -1; without it the agent logs why and retries)")
      ->group(group);
  app->add_option("--perf-frequency", f->perf_frequency,
                  "perf samples per second per CPU, 1..10000 (default 99)")
      ->group(group);
  app->add_option("--perf-window-ms", f->perf_window_ms,
                  "Length of one perf window, read while the next records (default 10000; each "
                  "window costs ~0.25 CPU s, so 2000 costs 5x as much)")
      ->group(group);
  app->add_option("--perf-callgraph", f->perf_callgraph,
                  "How perf walks stacks: fp (frame pointers, cheapest), dwarf (no frame "
                  "pointers needed, far costlier) or lbr (Intel only) (default fp)")
      ->group(group);
  app->add_flag("--perf-no-pid", f->perf_no_pid,
                "Fields execname only, no pid (bounds the series when processes come and go)")
      ->group(group);
  app->add_flag("--perf-no-offsets", f->perf_no_offsets,
                "Do not record each sample's offset within its second as the histogram "
                "cpu.offsets (what `trailmap subsecond` draws without a FILE)")
      ->group(group);
  app->add_option("--perf-path", f->perf_path, "The perf program (default: perf in PATH)")
      ->group(group);
  app->add_option("--folded-stacks", f->folded_stacks,
                  "Folded stack lines \"a;b;c 5\" (optionally \"@UNIXTIME a;b;c 5\") from a "
                  "FILE, a FIFO, or - for standard input")
      ->group(group);
  app->add_flag("--folded-follow", f->folded_follow,
                "Keep reading --folded-stacks FILE as it grows, like tail -f")
      ->group(group);
  app->add_option("--folded-socket", f->folded_socket,
                  "Listen on this unix socket for folded lines from applications that sample "
                  "themselves (many clients; \"#fields k=v\" sets a connection's fields)")
      ->group(group);
  app->add_option("--folded-metric", f->folded_metric,
                  "Metric name of the folded stacks (default app.stacks)")
      ->group(group);
  app->add_option("--folded-field", f->folded_fields,
                  "KEY=VALUE field on every folded line (repeatable)")
      ->group(group);
}

Status ApplyStackSourceFlags(const CLI::App& app, const StackSourceFlags& f, AgentConfig* c) {
  if (app.count("--perf")) c->perf_enabled = f.perf;
  if (app.count("--perf-frequency")) {
    if (f.perf_frequency < 1 || f.perf_frequency > 10'000) {
      return Status::InvalidArgument("--perf-frequency must be from 1 to 10000 Hz, got " +
                                     std::to_string(f.perf_frequency));
    }
    c->perf.frequency = static_cast<int>(f.perf_frequency);
  }
  if (app.count("--perf-window-ms")) c->perf.window_ms = f.perf_window_ms;
  if (app.count("--perf-callgraph")) c->perf.callgraph = f.perf_callgraph;
  if (app.count("--perf-no-pid")) c->perf.pid_field = !f.perf_no_pid;
  if (app.count("--perf-no-offsets")) c->perf.offsets = !f.perf_no_offsets;
  if (app.count("--perf-path")) c->perf.perf_path = f.perf_path;
  if (app.count("--folded-stacks")) c->folded.path = f.folded_stacks;
  if (app.count("--folded-follow")) c->folded.follow = f.folded_follow;
  if (app.count("--folded-socket")) c->folded.socket = f.folded_socket;
  if (app.count("--folded-metric")) c->folded.metric = f.folded_metric;
  for (const std::string& field : f.folded_fields) {
    if (Status s = AddLabel(field, &c->folded.fields); !s.ok()) {
      return Status::InvalidArgument("--folded-field: " + s.message());
    }
  }
  return Status::Ok();
}

}  // namespace trailmap
