// StackInterner: the agent's dictionary of frame names and stacks, each given an agent-local id
// that is never reused (schemas/ingest.capnp, "Stacks are interned"): the aggregator may still
// hold an old id's definition, so a forgotten stack that comes back gets a new id.
//
// Frames are cleaned on the way in, so every name is one the aggregator accepts (core/batch.h
// BatchLimits): ';' becomes ':' (as stackcollapse-perf does), a control character '?', an empty
// name "[unknown]", and a name longer than `max_frame_bytes` is cut (counted). A stack deeper
// than `max_depth` keeps its max_depth - 1 outermost frames and ends in kTruncatedFrame
// (counted).
//
// Not thread-safe: the Bucketizer calls it under its own lock.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/batch.h"

namespace trailmap {

struct StackInternerOptions {
  size_t max_depth = 1000;       // frames in one stack, kTruncatedFrame included (at least 2)
  size_t max_frame_bytes = 512;  // bytes of one frame name
  // The first ids given out (at least 1). A restarted agent that keeps its agent id starts above
  // every id its spool has seen (ingest/spool.h stack_high, frame_high), so no id is reused.
  uint32_t first_stack_id = 1;
  uint32_t first_frame_id = 1;
};

class StackInterner {
 public:
  explicit StackInterner(StackInternerOptions options = {});

  // The id of the stack `frames` (root first), defining it and its frames if new. Sets
  // *truncated_frames to the frame names cut and *truncated_stack when the depth was cut.
  uint32_t Intern(const std::vector<std::string>& frames, uint64_t* truncated_frames,
                  bool* truncated_stack);

  // Appends the definitions of `stacks` and of every frame they use (each once) to the lists.
  // Ids not held (never the case for ids Intern returned and Retain kept) are skipped.
  void Define(const std::vector<uint32_t>& stacks, std::vector<StackDef>* stack_defs,
              std::vector<FrameDef>* frame_defs) const;

  // Forgets every stack not in `keep` and every frame no kept stack uses.
  void Retain(const std::unordered_set<uint32_t>& keep);

  size_t stack_count() const { return stacks_.size(); }
  size_t frame_count() const { return frames_.size(); }

 private:
  uint32_t InternFrame(std::string name);

  const StackInternerOptions options_;
  std::unordered_map<std::string, uint32_t> frame_ids_;
  std::unordered_map<uint32_t, std::string> frames_;
  std::unordered_map<std::string, uint32_t> stack_ids_;  // key: the frame ids' bytes
  std::unordered_map<uint32_t, std::vector<uint32_t>> stacks_;
  uint32_t next_frame_ = 1;
  uint32_t next_stack_ = 1;
  std::string key_;  // scratch
};

}  // namespace trailmap
