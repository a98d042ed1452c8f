// A pprof profile (cli/stack_import_pprof.h's DecodePprof, as `trailmap import --stacks` reads
// it): the bytes as they are (gzipped or plain profile.proto). Properties of a decoded profile:
// stacks sorted by (labels, frames) and distinct; each has at least one frame, a count from 1 to
// kMaxTotalCount and valid fields (core/series.h) that include sample_type; the sample type kept
// is one the profile lists. A refusal says why.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <tuple>

#include "cli/stack_import_pprof.h"
#include "core/counts.h"
#include "core/series.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  trailmap::Result<trailmap::PprofStacks> p = trailmap::DecodePprof(bytes);
  if (!p.ok()) {
    FUZZ_CHECK(!p.status().message().empty());
    return 0;
  }
  bool listed = false;
  for (const std::string& t : p->sample_types) listed |= t == p->sample_type;
  FUZZ_CHECK(listed, "kept sample type %s is not listed", p->sample_type.c_str());
  for (size_t i = 0; i < p->stacks.size(); ++i) {
    const trailmap::PprofStack& s = p->stacks[i];
    FUZZ_CHECK(!s.frames.empty());
    FUZZ_CHECK(s.count >= 1 && s.count <= trailmap::kMaxTotalCount);
    bool has_type = false;
    for (const trailmap::Field& f : s.labels) {
      FUZZ_CHECK(trailmap::ValidateField(f.first, f.second).ok());
      has_type |= f.first == "sample_type";
    }
    FUZZ_CHECK(has_type);
    FUZZ_CHECK(trailmap::CanonicalFields(s.labels).ok(), "labels repeat a key");
    if (i > 0) {
      const trailmap::PprofStack& prev = p->stacks[i - 1];
      FUZZ_CHECK(std::tie(prev.labels, prev.frames) < std::tie(s.labels, s.frames),
                 "stacks not sorted and distinct");
    }
  }
  return 0;
}
