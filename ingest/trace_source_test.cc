#include "ingest/trace_source.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

namespace trailmap {
namespace {

// Parses `text` and shows the events as "time value" lines, or the error.
std::string Events(std::string_view text, TraceOptions options = {}) {
  std::string out;
  Result<TraceSummary> r =
      ParseTrace(text, options, [&out](int64_t time_ns, uint64_t value_ns) {  // out outlives
        out += std::to_string(time_ns) + " " + std::to_string(value_ns) + "\n";
      });
  return r.ok() ? out : "error: " + r.status().message();
}

TEST(TraceSource, SkipsHeaderAndBlankLines) {
  EXPECT_EQ(Events("time latency\n1 2\n\n  \n3\t4\r\n5 6"), "1000 2000\n3000 4000\n5000 6000\n");
  EXPECT_EQ(Events("\n\nTIME(us) LAT(us)\n1 2\n"), "1000 2000\n");
  EXPECT_EQ(Events("1e3 2\n"), "1000000 2000\n");  // a number with 'e' is not a header
}

TEST(TraceSource, Units) {
  EXPECT_EQ(Events("1700000000.25 0.5\n", {.time_unit_ns = 1e9, .value_unit_ns = 1e6}),
            "1700000000250000000 500000\n");
  EXPECT_EQ(Events("17 3\n", {.time_unit_ns = 1, .value_unit_ns = 1}), "17 3\n");
  EXPECT_EQ(Events("1.0004 1.0006\n", {.time_unit_ns = 1, .value_unit_ns = 1}), "1 1\n");
  EXPECT_EQ(Events("1.0006 2.5\n", {.time_unit_ns = 1e3, .value_unit_ns = 1}), "1001 3\n");
  EXPECT_EQ(Events("-5 1\n", {.time_unit_ns = 1e9, .value_unit_ns = 1}), "-5000000000 1\n");
  // Exact for integers well past double precision.
  EXPECT_EQ(
      Events("1700000000123456789 18446744073709551615\n", {.time_unit_ns = 1, .value_unit_ns = 1}),
      "1700000000123456789 18446744073709551615\n");
  EXPECT_EQ(*TraceUnitNs("ms"), 1e6);
  EXPECT_EQ(TraceUnitNs("min").status().message(), "unit 'min' is not one of s, ms, us, ns");
}

TEST(TraceSource, BadLineNamesItsNumberAndTheProblem) {
  EXPECT_EQ(Events("t l\n1 2\n3 -4\n5 6\n"), "error: line 3: latency '-4' is negative");
  EXPECT_EQ(Events("1 2\nabc 2\n"), "error: line 2: time 'abc' is not a number");
  EXPECT_EQ(Events("1 2\n3\n"), "error: line 2: expected two columns, time and latency, got '3'");
  EXPECT_EQ(Events("1 2\n3 4 5\n"),
            "error: line 2: expected two columns, time and latency, got '3 4 5'");
  EXPECT_EQ(Events("1 2\n1 nan\n"), "error: line 2: latency 'nan' is not a number");
  EXPECT_EQ(Events("1 2\n1 inf\n"), "error: line 2: latency 'inf' is too large");
  EXPECT_EQ(Events("1 2\n1 1e300\n"), "error: line 2: latency '1e300' is too large");
  EXPECT_EQ(Events("1 18446744073709551616\n", {.time_unit_ns = 1, .value_unit_ns = 1}),
            "error: line 1: latency '18446744073709551616' is too large");
  EXPECT_EQ(Events("99999999999999999 1\n"),
            "error: line 1: time '99999999999999999' is too large");
  // The first non-blank line is a header if it holds a letter and is not an event.
  EXPECT_EQ(Events("1 nan\n3 4\n"), "3000 4000\n");
  // Only the first non-blank line can be a header.
  EXPECT_EQ(Events("1 2\ntime latency\n"), "error: line 2: time 'time' is not a number");
}

TEST(TraceSource, ReadsAFileAcrossBlockBoundaries) {
  char path[] = "/tmp/trailmap_trace_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  std::string text = "time latency\n";
  const int kEvents = 200'000;  // ~2.5 MB, several 1 MiB blocks
  for (int i = 0; i < kEvents; ++i) {
    text += std::to_string(1'700'000'000'000'000 + i) + " " + std::to_string(i % 977) + "\n";
  }
  text += "1 2";  // last line without '\n'
  ASSERT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  close(fd);

  uint64_t n = 0;
  uint64_t sum = 0;
  Result<TraceSummary> r = ReadTraceFile(path, {}, [&n, &sum](int64_t t, uint64_t v) {
    ++n;
    sum += v;
  });
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->had_header);
  EXPECT_EQ(r->events, kEvents + 1u);
  EXPECT_EQ(n, kEvents + 1u);
  uint64_t want = 2000;
  for (int i = 0; i < kEvents; ++i) want += (i % 977) * 1000u;
  EXPECT_EQ(sum, want);

  Result<TraceSummary> missing = ReadTraceFile("/nonexistent/trace.txt", {}, {});
  EXPECT_EQ(missing.status().code(), Status::Code::kIOError);
  unlink(path);
}

}  // namespace
}  // namespace trailmap
