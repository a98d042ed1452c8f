#include "query/views/flame.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "query/testing/folded.h"

namespace trailmap {
namespace {

using testing::kSeedFolded;

std::string Describe(const FlameTree& tree, uint32_t id = 0, int indent = 0) {
  const FlameNode& n = tree.nodes[id];
  std::ostringstream out;
  out << std::string(indent, ' ') << n.name << " total=" << n.total << " self=" << n.self << "\n";
  for (uint32_t c : n.children) out << Describe(tree, c, indent + 2);
  return out.str();
}

TEST(FlameTree, SeedExampleMergesAlongCallPaths) {
  const FlameTree tree = BuildFlameTree(kSeedFolded);
  EXPECT_EQ(Describe(tree),
            "all total=9 self=0\n"
            "  main total=9 self=2\n"
            "    foo1 total=4 self=1.5\n"
            "      bar total=2.5 self=2.5\n"
            "    foo2 total=3 self=0.5\n"
            "      bar total=2.5 self=2.5\n");
  EXPECT_EQ(tree.max_depth, 3u);
  EXPECT_EQ(tree.invalid_lines, 0u);
}

TEST(FlameTree, InputOrderDoesNotMatterAndBadLinesAreCounted) {
  const FlameTree a = BuildFlameTree("a;b 1\na;c 2\nx 3\na;b;d 4\n");
  const FlameTree b = BuildFlameTree("a;b;d 4\n\nx 3\nnot a count\na;c 2\n  \na;b 1\nno-count -1\n");
  EXPECT_EQ(Describe(a), Describe(b));
  EXPECT_EQ(b.invalid_lines, 2u);
  EXPECT_EQ(a.total(), 10);
}

TEST(FlameTree, FromCollapsedStacks) {
  const FlameTree tree = BuildFlameTree(FoldedStacks{{"p;a", 3}, {"p;a;b", 2}});
  EXPECT_EQ(Describe(tree), "all total=5 self=0\n  p total=5 self=0\n    a total=5 self=3\n"
                            "      b total=2 self=2\n");
}

}  // namespace
}  // namespace trailmap
