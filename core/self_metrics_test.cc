#include "core/self_metrics.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

namespace trailmap {
namespace {

TEST(CounterDeltas, CountersStoreTheirGainGaugesTheirValue) {
  CounterDeltas deltas;
  SelfReadings r;
  AddCounter(&r, "x.sent", "batches/s", "sent", 5);
  AddCounter(&r, "x.rejected", "lines/s", "rejected", 2, "reason=a");
  AddCounter(&r, "x.rejected", "lines/s", "rejected", 7, "reason=b");
  AddGauge(&r, "x.bytes", "B", "held", 4096);
  // The first reading counts from 0, the process's start.
  EXPECT_EQ(deltas.Take(r), (std::vector<double>{5, 2, 7, 4096}));
  r[0].value = 9;   // +4
  r[1].value = 2;   // +0
  r[2].value = 10;  // +3: a series of its own, told apart by its fields
  r[3].value = 100;
  EXPECT_EQ(deltas.Take(r), (std::vector<double>{4, 0, 3, 100}));
  r[0].value = 3;  // went backwards: the source restarted its count
  EXPECT_EQ(deltas.Take(r), (std::vector<double>{3, 0, 0, 100}));
  r[0].value = 4;
  EXPECT_EQ(deltas.Take(r), (std::vector<double>{1, 0, 0, 100}));
}

TEST(CounterDeltas, SumsOfStoredValuesAreTheTotal) {
  CounterDeltas deltas;
  double sum = 0;
  for (uint64_t total : {0, 3, 3, 10, 1000, 1001}) {
    SelfReadings r;
    AddCounter(&r, "x.lines", "lines/s", "lines", total);
    sum += deltas.Take(r)[0];
  }
  EXPECT_EQ(sum, 1001);
}

TEST(SelfReadings, AreScalarsWithUnitAndDescription) {
  SelfReadings r;
  AddGauge(&r, "trailmap.agent.spool.bytes", "B", "bytes in the spool", 12);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].series.kind, MetricKind::kScalar);
  EXPECT_EQ(r[0].series.unit, "B");
  EXPECT_EQ(r[0].series.description, "bytes in the spool");
  EXPECT_FALSE(r[0].counter);
}

TEST(ProcessStats, StatmResidentPages) {
  Result<uint64_t> pages = ParseStatmResidentPages("5830 1402 1022 220 0 484 0\n");
  ASSERT_TRUE(pages.ok());
  EXPECT_EQ(*pages, 1402u);
  EXPECT_EQ(ParseStatmResidentPages("5830").status().message(),
            "statm: no resident field in '5830'");
  EXPECT_EQ(ParseStatmResidentPages("5830 14x2 0").status().message(),
            "statm: resident field '14x2' is not a number");
  EXPECT_FALSE(ParseStatmResidentPages("5830 99999999999999999999999 0").ok());
}

TEST(ProcessStats, ReadsThisProcess) {
  Result<ProcessStats> before = ReadProcessStats();
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  EXPECT_GT(before->rss_bytes, 1u << 20);
  EXPECT_GE(before->open_fds, 3u);  // stdin, stdout, stderr at least
  // Three more descriptors are counted exactly (nothing else here opens or closes any).
  int fds[3];
  for (int& fd : fds) fd = open("/dev/null", O_RDONLY);
  Result<ProcessStats> during = ReadProcessStats();
  for (int fd : fds) close(fd);
  ASSERT_TRUE(during.ok());
  EXPECT_EQ(during->open_fds, before->open_fds + 3);
  // CPU time only grows; burn some to see user time move.
  volatile uint64_t x = 0;
  for (int i = 0; i < 20'000'000; ++i) x = x + i;
  Result<ProcessStats> after = ReadProcessStats();
  ASSERT_TRUE(after.ok());
  EXPECT_GT(after->user_cpu_ns + after->system_cpu_ns, before->user_cpu_ns + before->system_cpu_ns);
  EXPECT_EQ(after->open_fds, before->open_fds);
}

TEST(ProcessStats, MissingProcIsAnIOError) {
  Result<ProcessStats> s = ReadProcessStats("/nonexistent/self");
  EXPECT_EQ(s.status().code(), Status::Code::kIOError);
  EXPECT_EQ(s.status().message(), "cannot read /nonexistent/self/statm");
}

TEST(ProcessStats, Readings) {
  ProcessStats s{.rss_bytes = 1 << 20, .open_fds = 9, .user_cpu_ns = 500, .system_cpu_ns = 70};
  SelfReadings r;
  AddProcessReadings("trailmap.agent", s, &r);
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].series.metric, "trailmap.agent.process.rss");
  EXPECT_EQ(r[0].value, 1 << 20);
  EXPECT_EQ(r[1].series.metric, "trailmap.agent.process.fds");
  EXPECT_EQ(r[1].value, 9);
  EXPECT_EQ(r[2].series.metric, "trailmap.agent.process.cpu");
  EXPECT_EQ(r[2].series.fields, "mode=user");
  EXPECT_TRUE(r[2].counter);
  EXPECT_EQ(r[3].series.fields, "mode=system");
  EXPECT_EQ(r[3].value, 70);
  for (const SelfReading& x : r) EXPECT_TRUE(ValidateMetricName(x.series.metric).ok());
}

}  // namespace
}  // namespace trailmap
