// Flags of the agent's spool (ingest/spool.h), for trailmap-agent's main() to add beside its own:
// they override the [spool] section of the config file the way the other flags override theirs.
//
//   --spool DIR            where unacknowledged batches wait (spool.dir; "off" = in memory)
//   --spool-bytes N        the bound; beyond it the oldest batches are dropped (spool.max_bytes)
//   --spool-fsync MODE     always | interval | never (spool.fsync)
//   --spool-fsync-ms MS    interval's period (spool.fsync_ms)
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "agent/agent_config.h"
#include "core/status.h"
#include "ingest/spool.h"

namespace CLI {
class App;
}

namespace trailmap {

struct SpoolFlags {
  std::string dir;
  int64_t bytes = 0;
  std::string fsync;
  int64_t fsync_ms = 0;
};

// Adds the flags above to `app`, writing into `flags`.
void AddSpoolFlags(CLI::App* app, SpoolFlags* flags);

// Applies the flags that were given (app.count) over config->spool.
void ApplySpoolFlags(const CLI::App& app, const SpoolFlags& flags, AgentConfig* config);

// The spool directory `config` names (after ValidateAgentConfig): its dir, or
// DefaultSpoolDir(host) when none is given, or "" (in memory) for "off".
std::string AgentSpoolDir(const AgentConfig& config);

// Opens the spool `config` names: the directory itself when `segment` is "", else its
// subdirectory `segment` (one per cluster member the agent ships to: ingest/replicated_shipper.h),
// each a spool of its own with its own agent id and lock. In memory for "off". InvalidArgument
// for a segment name that is not a plain directory name.
Result<std::unique_ptr<Spool>> OpenAgentSpool(const AgentConfig& config,
                                              const std::string& segment = "");

}  // namespace trailmap
