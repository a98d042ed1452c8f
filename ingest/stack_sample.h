// StackSample: what the agent's stack sources (perf, folded-stack lines) hand to the bucketizer.
//
// One call stack seen `count` times during one second of one process. Frames run root first
// (the order of folded text: "main;foo;bar" is main -> foo -> bar), already folded by
// stacks/stack_collapse (offsets stripped, annotations kept). `fields` is a canonical field set
// (core/series.h), for perf "execname=nginx,pid=1234".
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace trailmap {

struct StackSample {
  int64_t second = 0;  // unix seconds of the samples
  std::string metric = "cpu.stacks";
  std::string fields;               // canonical, e.g. "execname=nginx,pid=1234"
  std::vector<std::string> frames;  // root first, each at most the source's frame length bound
  uint64_t count = 1;               // samples (or the period sum when counting by period)
};

// Where a source delivers its samples. Called from the source's own thread.
using StackSink = std::function<void(StackSample&&)>;

}  // namespace trailmap
