// Flags of the agent's stack sources (perf, folded files, commands), for trailmap-agent's main() to add beside its
// own: they override the [perf] and [folded] sections of the config file the same way the other
// flags override theirs (parse flags, load the file, then ApplyStackSourceFlags).
//
//   --perf                      sample CPU stacks with perf (perf.enabled)
//   --perf-frequency HZ         samples per second per CPU (perf.frequency, default 99)
//   --perf-window-ms MS         one window's length (perf.window_ms, default 10000)
//   --perf-callgraph MODE       fp, dwarf or lbr (perf.callgraph, default fp)
//   --perf-no-pid               leave the pid field out (perf.pid = false)
//   --perf-no-offsets           record no cpu.offsets (perf.offsets = false)
//   --perf-path PATH            the perf program (perf.perf_path, default perf from PATH)
//   --folded-stacks PATH        folded lines from a file, FIFO or - (folded.path)
//   --folded-follow             keep reading the file as it grows (folded.follow)
//   --folded-socket PATH        listen on a unix socket for folded lines (folded.socket)
//   --folded-metric NAME        metric of the folded lines (folded.metric, default app.stacks)
//   --folded-field KEY=VALUE    a field on every folded line (folded.fields; repeatable)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agent/agent_config.h"
#include "core/status.h"

namespace CLI {
class App;
}

namespace trailmap {

struct StackSourceFlags {
  bool perf = false;
  int64_t perf_frequency = 0;
  int64_t perf_window_ms = 0;
  std::string perf_callgraph;
  bool perf_no_pid = false;
  bool perf_no_offsets = false;
  std::string perf_path;
  std::string folded_stacks;
  bool folded_follow = false;
  std::string folded_socket;
  std::string folded_metric;
  std::vector<std::string> folded_fields;
};

// Adds the flags above to `app`, writing into `flags`.
void AddStackSourceFlags(CLI::App* app, StackSourceFlags* flags);

// Applies the flags that were given (app->count) over `config`; an error names the flag.
Status ApplyStackSourceFlags(const CLI::App& app, const StackSourceFlags& flags,
                             AgentConfig* config);

}  // namespace trailmap
