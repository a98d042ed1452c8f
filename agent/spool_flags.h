// Flags of the agent's spool (agent/spool.h), for trailmap-agent's main() to add beside its own:
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
#include "agent/spool.h"
#include "core/status.h"

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

// Opens the spool `config` names (after ValidateAgentConfig): its dir, or DefaultSpoolDir(host)
// when none is given, or an in-memory one for "off".
Result<std::unique_ptr<Spool>> OpenAgentSpool(const AgentConfig& config);

}  // namespace trailmap
