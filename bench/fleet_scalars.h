// WithFleetScalars: the per-second scalars of one simulated host, added to its FleetModel batch,
// so the demo fleet shows a utilization heat map and line charts.
//
//   cpu.usage{mode=user|system|iowait|steal}  %    of the whole host. Most hosts run 15-40% user
//                                                  on a five-minute wave; every 16th host (sim-004,
//                                                  sim-020, ...) is busy at 85-98%; every host's
//                                                  iowait jumps for 5 s in each minute.
//   mem.rss                                   B    2-8 GiB per host, creeping up slowly
//   net.rx.bytes{interface=eth0}              B/s  about user% × 0.4 MiB/s, with noise
//
// Deterministic: the same (host, second) always gives the same values. Pure function.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/batch.h"

namespace trailmap {

// Every 16th host, starting with the 4th (index 3), is busy.
bool IsBusyFleetHost(size_t host);
// `batch` with the scalar series and values of `host` at `second` appended.
Batch WithFleetScalars(Batch batch, size_t host, int64_t second);

}  // namespace trailmap
