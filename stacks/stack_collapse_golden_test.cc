// `trailmap collapse` against stackcollapse-perf.pl, byte for byte: every stacks/testdata/collapse
// input (perf script text written for one of the Perl's rules, or recorded here with perf 6.1)
// folded under each option set must equal what the Perl printed for it (the .folded files; how
// they were made is in stacks/testdata/collapse/README.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "stacks/stack_collapse.h"

namespace trailmap {
namespace {

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

struct OptionSet {
  const char* suffix;  // NAME<suffix>.folded
  CollapseOptions options;
};

const OptionSet kOptionSets[] = {
    {"", {}},
    {".pid", {.include_pid = true}},
    {".tid", {.include_tid = true}},
    {".kernel", {.annotate_kernel = true}},
    {".jit", {.annotate_jit = true}},
    {".all", {.annotate_kernel = true, .annotate_jit = true}},
    {".addrs", {.include_addrs = true}},
    {".tid-all-addrs",
     {.include_tid = true, .annotate_kernel = true, .annotate_jit = true, .include_addrs = true}},
};

TEST(StackCollapseGolden, EveryInputUnderEveryOptionMatchesThePerl) {
  const std::filesystem::path dir = TRAILMAP_STACKS_TESTDATA "/collapse";
  std::vector<std::filesystem::path> inputs;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".perf") inputs.push_back(entry.path());
  }
  std::sort(inputs.begin(), inputs.end());
  // java, javacomm, node, kernel, inlined, unknown, events, pidtid, sort, and two recorded with
  // real perf.
  ASSERT_EQ(inputs.size(), 11u);
  for (const std::filesystem::path& input : inputs) {
    const std::string text = ReadFile(input);
    for (const OptionSet& set : kOptionSets) {
      std::filesystem::path want_path = input;
      want_path.replace_extension(std::string(set.suffix) + ".folded");
      SCOPED_TRACE(want_path.filename().string());
      ASSERT_TRUE(std::filesystem::exists(want_path));
      const std::string want = ReadFile(want_path);
      ASSERT_FALSE(want.empty());
      EXPECT_EQ(FormatFolded(CollapsePerfScript(text, set.options)), want);
      // Fed in pieces that split lines anywhere, the answer is the same.
      StackCollapser pieces(set.options);
      for (size_t i = 0; i < text.size(); i += 97) pieces.Add(std::string_view(text).substr(i, 97));
      EXPECT_EQ(FormatFolded(pieces.Finish()), want);
    }
  }
}

}  // namespace
}  // namespace trailmap
