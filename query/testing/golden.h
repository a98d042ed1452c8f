// ExpectGolden: the comparison of a document with a golden file in query/testing/testdata/.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

namespace trailmap::testing_golden {

// Line `n` (1-based) of `text` with control characters shown as \xNN (ANSI escapes, tabs),
// or "(end of file)".
inline std::string ShownLine(std::string_view text, size_t n) {
  size_t start = 0;
  for (size_t i = 1; i < n; ++i) {
    start = text.find('\n', start);
    if (start == std::string_view::npos) return "(end of file)";
    ++start;
  }
  if (start >= text.size()) return "(end of file)";
  const size_t end = std::min(text.find('\n', start), text.size());
  std::string shown;
  for (char c : text.substr(start, end - start)) {
    if (static_cast<unsigned char>(c) < 0x20) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(c));
      shown += hex;
    } else {
      shown += c;
    }
  }
  return shown;
}

// Compares `got` with query/testing/testdata/NAME byte for byte; a difference names the first
// line that differs, with both versions of it. TRAILMAP_UPDATE_GOLDEN=1 rewrites the file
// instead: run only the test's filter, then check the new file by hand (render an SVG with
// rsvg-convert and look at it) before committing.
inline void ExpectGolden(const std::string& name, const std::string& got) {
  const std::string path = std::string(TRAILMAP_QUERY_TESTDATA) + "/" + name;
  if (std::getenv("TRAILMAP_UPDATE_GOLDEN")) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path, std::ios::binary) << got;
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << "missing golden file " << path << " (run with TRAILMAP_UPDATE_GOLDEN=1)";
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string want = buffer.str();
  if (got == want) return;
  const size_t at = static_cast<size_t>(
      std::mismatch(got.begin(),
                    got.begin() + static_cast<std::ptrdiff_t>(std::min(got.size(), want.size())),
                    want.begin())
          .first -
      got.begin());
  const size_t line = static_cast<size_t>(std::count(got.begin(), got.begin() + at, '\n')) + 1;
  ADD_FAILURE() << "differs from " << path << " (" << got.size() << " bytes, the file "
                << want.size() << ") first at line " << line
                << ":\n  got:  " << ShownLine(got, line) << "\n  file: " << ShownLine(want, line)
                << "\nIf the change is intended, rewrite it with TRAILMAP_UPDATE_GOLDEN=1 and "
                   "check the new file by hand.";
}

}  // namespace trailmap::testing_golden
