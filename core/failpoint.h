// Failpoints: named places in the daemons where a fault test makes something happen on purpose,
// so the window it tests (between a write and its ack, say) is hit every time, not by luck.
//
// They exist only in builds configured with -DTRAILMAP_FAILPOINTS=ON (scripts/test turns it on;
// scripts/demo and release builds do not), where TRAILMAP_FAILPOINT(name) expands to a check of
// the environment variable TRAILMAP_FAILPOINTS:
//
//   TRAILMAP_FAILPOINTS := spec ("," spec)*
//   spec                := name "=" action ["@" n]     fire at the n-th time the point is reached
//                                                       (1-based; without "@n", every time)
//   action              := "kill"                      raise SIGKILL (the process dies right there)
//                        | "error"                     TRAILMAP_FAILPOINT returns true: the caller
//                                                       takes its failure path
//                        | "sleep:" ms                 sleep that long, then go on
//
// e.g. TRAILMAP_FAILPOINTS="ingest.after_write=kill@3" kills an aggregator after its third
// write, before that write's ack. In other builds TRAILMAP_FAILPOINT(name) is `false` and
// compiles to nothing. The variable is read at every check and parsed again when it changes
// (hit counts start from 0 then). Thread-safe.
#pragma once

#include <string_view>

namespace trailmap {

// Whether failpoint `name` fires now (for "error"); "kill" and "sleep" act before returning.
// Only in TRAILMAP_FAILPOINTS builds.
bool FailpointFires(std::string_view name);

}  // namespace trailmap

#ifdef TRAILMAP_FAILPOINTS
#define TRAILMAP_FAILPOINT(name) (::trailmap::FailpointFires(name))
#else
#define TRAILMAP_FAILPOINT(name) (false)
#endif
