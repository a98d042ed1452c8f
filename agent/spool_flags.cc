#include "agent/spool_flags.h"

#include <CLI/CLI.hpp>

namespace trailmap {

void AddSpoolFlags(CLI::App* app, SpoolFlags* f) {
  const std::string group = "Spool (what survives a restart or an aggregator outage)";
  app->add_option("--spool", f->dir,
                  "Directory of the on-disk spool: every batch is written here before it is "
                  "sent and removed when the aggregator acknowledges it, so a restart, a crash "
                  "or an aggregator outage loses nothing written. It also keeps the agent id, so "
                  "sequences continue across restarts. One agent per directory. \"off\" keeps "
                  "batches in memory only (lost on restart). Default: "
                  "/var/lib/trailmap-agent/spool/HOST if writable, else "
                  "$XDG_STATE_HOME (or ~/.local/state)/trailmap-agent/spool/HOST")
      ->group(group);
  app->add_option("--spool-bytes", f->bytes,
                  "Bound of the spool in bytes; when full the OLDEST batches are dropped, "
                  "counted and logged once per episode (default 1073741824 = 1 GiB: ~4.4 hours "
                  "of a busy host at 65 KB/s; see docs/BENCHMARKS.md)")
      ->group(group);
  app->add_option("--spool-fsync", f->fsync,
                  "When the spool reaches the disk: always (one fdatasync per batch, about one "
                  "a second: a power loss loses nothing spooled), interval (every "
                  "--spool-fsync-ms: a power loss loses up to that much), never (the kernel "
                  "decides, ~30 s). A kill -9 of the agent loses nothing spooled with any of "
                  "them (default always)")
      ->group(group);
  app->add_option("--spool-fsync-ms", f->fsync_ms,
                  "Period of --spool-fsync interval, 10..60000 (default 1000)")
      ->group(group);
}

void ApplySpoolFlags(const CLI::App& app, const SpoolFlags& f, AgentConfig* config) {
  if (app.count("--spool")) config->spool.dir = f.dir;
  if (app.count("--spool-bytes")) config->spool.max_bytes = f.bytes;
  if (app.count("--spool-fsync")) config->spool.fsync = f.fsync;
  if (app.count("--spool-fsync-ms")) config->spool.fsync_ms = f.fsync_ms;
}

std::string AgentSpoolDir(const AgentConfig& config) {
  const std::string& dir = config.spool.dir;
  return dir == "off" ? "" : dir.empty() ? DefaultSpoolDir(config.host) : dir;
}

Result<std::unique_ptr<Spool>> OpenAgentSpool(const AgentConfig& config,
                                              const std::string& segment) {
  if (segment == "." || segment == ".." || segment.find('/') != std::string::npos) {
    return Status::InvalidArgument("spool segment \"" + segment +
                                   "\": a cluster member's name must be usable as a directory "
                                   "name (no '/', not . or ..)");
  }
  SpoolOptions options;
  options.dir = AgentSpoolDir(config);
  if (!options.dir.empty() && !segment.empty()) options.dir += "/" + segment;
  options.max_bytes = static_cast<uint64_t>(config.spool.max_bytes);
  Result<SpoolFsync> fsync = ParseSpoolFsync(config.spool.fsync);
  if (!fsync.ok()) return fsync.status();
  options.fsync = *fsync;
  options.fsync_interval = std::chrono::milliseconds(config.spool.fsync_ms);
  return Spool::Open(std::move(options), config.host);
}

}  // namespace trailmap
