#include "ingest/stack_interner.h"

#include <gtest/gtest.h>

namespace trailmap {
namespace {

std::vector<std::string> Names(const std::vector<FrameDef>& frames, const StackDef& stack) {
  std::vector<std::string> out;
  for (uint32_t id : stack.frames) {
    for (const FrameDef& f : frames) {
      if (f.id == id) out.push_back(f.name);
    }
  }
  return out;
}

TEST(StackInterner, SameStackSameIdAndFramesShared) {
  StackInterner interner;
  uint64_t cut = 0;
  bool truncated = false;
  const uint32_t a = interner.Intern({"main", "foo1", "bar"}, &cut, &truncated);
  const uint32_t b = interner.Intern({"main", "foo2", "bar"}, &cut, &truncated);
  EXPECT_EQ(interner.Intern({"main", "foo1", "bar"}, &cut, &truncated), a);
  EXPECT_NE(a, b);
  EXPECT_EQ(interner.stack_count(), 2u);
  EXPECT_EQ(interner.frame_count(), 4u);  // main, foo1, bar, foo2
  std::vector<StackDef> stacks;
  std::vector<FrameDef> frames;
  interner.Define({a, b}, &stacks, &frames);
  ASSERT_EQ(stacks.size(), 2u);
  EXPECT_EQ(frames.size(), 4u);  // each frame once
  EXPECT_EQ(Names(frames, stacks[0]), (std::vector<std::string>{"main", "foo1", "bar"}));
  EXPECT_EQ(Names(frames, stacks[1]), (std::vector<std::string>{"main", "foo2", "bar"}));
  EXPECT_EQ(cut, 0u);
  EXPECT_FALSE(truncated);
}

TEST(StackInterner, CutsDeepStacksAndLongFramesAndCleansNames) {
  StackInterner interner({/*max_depth=*/4, /*max_frame_bytes=*/9});
  uint64_t cut = 0;
  bool truncated = false;
  const uint32_t deep = interner.Intern({"a", "b", "c", "d", "e", "f"}, &cut, &truncated);
  EXPECT_TRUE(truncated);
  const uint32_t odd = interner.Intern({"x;y", "tab\there", "", "0123456789"}, &cut, &truncated);
  EXPECT_FALSE(truncated);
  EXPECT_EQ(cut, 1u);
  std::vector<StackDef> stacks;
  std::vector<FrameDef> frames;
  interner.Define({deep, odd}, &stacks, &frames);
  EXPECT_EQ(Names(frames, stacks[0]), (std::vector<std::string>{"a", "b", "c", "[truncated]"}));
  EXPECT_EQ(Names(frames, stacks[1]),
            (std::vector<std::string>{"x:y", "tab?here", "[unknown]", "012345678"}));
}

TEST(StackInterner, RetainForgetsButNeverReusesIds) {
  StackInterner interner;
  uint64_t cut = 0;
  bool truncated = false;
  const uint32_t a = interner.Intern({"main", "a"}, &cut, &truncated);
  const uint32_t b = interner.Intern({"main", "b"}, &cut, &truncated);
  interner.Retain({b});
  EXPECT_EQ(interner.stack_count(), 1u);
  EXPECT_EQ(interner.frame_count(), 2u);  // main, b
  const uint32_t a2 = interner.Intern({"main", "a"}, &cut, &truncated);
  EXPECT_NE(a2, a);
  EXPECT_NE(a2, b);
  std::vector<StackDef> stacks;
  std::vector<FrameDef> frames;
  interner.Define({a, a2}, &stacks, &frames);  // a is forgotten: skipped
  ASSERT_EQ(stacks.size(), 1u);
  EXPECT_EQ(Names(frames, stacks[0]), (std::vector<std::string>{"main", "a"}));
}

// A restarted agent that keeps its agent id starts above every id its spool has seen.
TEST(StackInterner, StartsAtTheFirstIdsItIsGiven) {
  StackInterner interner({.first_stack_id = 18, .first_frame_id = 41});
  uint64_t cut = 0;
  bool truncated = false;
  EXPECT_EQ(interner.Intern({"main", "a"}, &cut, &truncated), 18u);
  EXPECT_EQ(interner.Intern({"main", "b"}, &cut, &truncated), 19u);
  std::vector<StackDef> stacks;
  std::vector<FrameDef> frames;
  interner.Define({18, 19}, &stacks, &frames);
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[0].id, 41u);  // main
  EXPECT_EQ(frames[2].id, 43u);  // b
}

}  // namespace
}  // namespace trailmap
