// ExpectGolden: the renderer tests' comparison with a golden file in query/testing/testdata/.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace trailmap::testing_golden {

// Compares `got` with query/testing/testdata/NAME. TRAILMAP_UPDATE_GOLDEN=1 rewrites the file instead:
// run only the test's filter, then render the file with rsvg-convert and look at it before
// committing.
inline void ExpectGolden(const std::string& name, const std::string& got) {
  const std::string path = std::string(TRAILMAP_QUERY_TESTDATA) + "/" + name;
  if (std::getenv("TRAILMAP_UPDATE_GOLDEN")) {
    std::ofstream(path, std::ios::binary) << got;
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << "missing golden file " << path << " (run with TRAILMAP_UPDATE_GOLDEN=1)";
  std::stringstream want;
  want << in.rdbuf();
  EXPECT_EQ(got, want.str()) << "differs from " << path;
}

}  // namespace trailmap::testing_golden
