// Reading pprof profiles for `trailmap import --stacks`: profile.proto (cli/pprof_profile.proto),
// gzipped as Go's runtime/pprof, async-profiler's `-o pprof` and the Pyroscope SDKs write it, or
// plain. A pure function of the bytes.
//
// What a profile becomes:
//   * One value per sample: the sample type chosen by PprofOptions::sample_type, or by default
//     the first whose unit is "count" (Go CPU: samples/count; async-profiler: samples), so
//     imported stacks count samples as the agent's perf source does; without one, the
//     profile's default_sample_type, else the last type (as the spec says).
//   * Frames root first: sample.location_id runs leaf first and each location's lines run from
//     the innermost inlined function to its caller; every line but a location's last is an
//     inlined frame and gets "_[i]" (stackcollapse-perf's mark). A line's name is its
//     function's name, else its system_name; a location without lines is "[MAPPING basename]",
//     or "[unknown]" without a mapping.
//   * Labels become fields: a string label key=str, a numeric one key=num (its unit dropped).
//     A label that is not a valid field (core/series.h) is left out and counted. The chosen
//     sample type is the field "sample_type" (e.g. sample_type=samples).
//   * Samples with the same frames and labels are added; a zero value is dropped, a negative
//     one (a difference of profiles) is dropped and counted, and so is a sample without locations.
// Lost: the other sample types, time_nanos and duration (the import places stacks at --time),
// addresses, file names and line numbers, mappings of symbolized frames, drop_frames/keep_frames.
//
// Hostile input is refused with a message naming what is wrong: a body that does not decode or
// inflates past kMaxPprofBytes, a string, location or function index out of range.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/series.h"
#include "core/status.h"

namespace trailmap {

inline constexpr size_t kMaxPprofBytes = size_t{256} << 20;  // inflated profile, 256 MiB

struct PprofOptions {
  std::string sample_type;  // a sample_type's type ("cpu", "samples", "alloc_space"); "" = default
};

struct PprofStack {
  FieldSet labels;                  // the sample's labels and sample_type, sorted by key
  std::vector<std::string> frames;  // root first
  uint64_t count = 0;               // the chosen value, summed over equal samples
};

struct PprofStacks {
  std::vector<PprofStack> stacks;         // sorted by labels, then frames
  std::string sample_type;                // "type/unit" of the value kept, e.g. "samples/count"
  std::vector<std::string> sample_types;  // every "type/unit" the profile has
  uint64_t samples = 0;                   // Sample messages read
  uint64_t negative_values = 0;           // samples dropped for a value below 0
  uint64_t labels_dropped = 0;            // labels that were not valid fields
  uint64_t empty_samples = 0;             // samples dropped for having no location
  int64_t time_nanos = 0;                 // when the profile was taken (0 when unset)
};

// True when `bytes` starts with gzip's magic (how `import --stacks` recognizes pprof).
bool LooksGzipped(std::string_view bytes);

Result<PprofStacks> DecodePprof(std::string_view bytes, const PprofOptions& options = {});

}  // namespace trailmap
