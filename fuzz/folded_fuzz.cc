// A folded line (agent/folded_source.h's FoldedLineParser, one stream): the input is split at
// '\n' into lines, each parsed as the source does (small frame and depth bounds, so cutting is
// reached). Properties of every sample: a count from 1 to 2^63-1, 1..max_depth non-empty frames
// with no ';', each at most max_frame_bytes; written back as "@SECOND STACK COUNT" it parses to
// the same sample (unless a cut left the last frame ending in a blank).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "agent/folded_source.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  trailmap::FoldedSourceOptions options;
  options.path = "-";
  options.max_depth = 8;
  options.max_frame_bytes = 16;
  trailmap::FoldedLineParser parser(options, {{"service", "fuzz"}});
  trailmap::FoldedLineParser reparser(options, {});
  constexpr int64_t kNow = 1'700'000'000;
  for (size_t start = 0; start <= text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    trailmap::FoldedLineParser::Parsed r = parser.Parse(line, kNow);
    FUZZ_CHECK(r.ok || !r.error.empty());
    FUZZ_CHECK(!r.has_sample || r.ok);
    if (!r.has_sample) continue;
    const trailmap::StackSample& s = r.sample;
    FUZZ_CHECK(s.count >= 1 && s.count <= uint64_t{INT64_MAX});
    FUZZ_CHECK(!s.frames.empty() && s.frames.size() <= options.max_depth);
    FUZZ_CHECK(s.metric == options.metric);
    std::string again = "@" + std::to_string(s.second) + " ";
    for (size_t i = 0; i < s.frames.size(); ++i) {
      FUZZ_CHECK(!s.frames[i].empty() && s.frames[i].size() <= options.max_frame_bytes);
      FUZZ_CHECK(s.frames[i].find(';') == std::string::npos);
      if (i > 0) again += ';';
      again += s.frames[i];
    }
    again += " " + std::to_string(s.count);
    // A cut (frame or depth) can leave the last frame ending in a blank, which a line cannot
    // carry before its count.
    const char last = s.frames.back().back();
    if (last == ' ' || last == '\t' || last == '\r') continue;
    trailmap::FoldedLineParser::Parsed back = reparser.Parse(again, 0);
    FUZZ_CHECK(back.has_sample, "'%s' does not parse again: %s", again.c_str(), back.error.c_str());
    FUZZ_CHECK(back.sample.second == s.second && back.sample.frames == s.frames &&
                   back.sample.count == s.count,
               "'%s' parses to another sample", again.c_str());
  }
  return 0;
}
