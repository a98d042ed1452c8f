#include "aggregator/server/agent_limits.h"

#include <gtest/gtest.h>

namespace trailmap::aggregator {
namespace {

using Clock = AgentLimiter::Clock;
using std::chrono::milliseconds;

constexpr BatchCost kOne{.batches = 1};  // one batch's envelope

AgentLimits Only(AgentLimit limit, double rate) {
  AgentLimits l;
  l.batches_per_second = l.bytes_per_second = l.values_per_second = l.definitions_per_second =
      l.new_series_per_minute = 0;
  switch (limit) {
    case AgentLimit::kBatches:
      l.batches_per_second = rate;
      break;
    case AgentLimit::kBytes:
      l.bytes_per_second = rate;
      break;
    case AgentLimit::kValues:
      l.values_per_second = rate;
      break;
    case AgentLimit::kDefinitions:
      l.definitions_per_second = rate;
      break;
    case AgentLimit::kNewSeries:
      l.new_series_per_minute = rate;
      break;
  }
  l.burst_seconds = 1;
  return l;
}

TEST(AgentLimiter, AdmitsABurstThenItsRateAndSaysWhenToResend) {
  AgentLimiter limiter(Only(AgentLimit::kBatches, 10));
  const Clock::time_point t0{};
  int admitted = 0;
  for (int i = 0; i < 15; ++i) admitted += !limiter.Admit("web-1/a", kOne, t0).has_value();
  EXPECT_EQ(admitted, 10);  // one second's burst
  std::optional<LimitRefusal> r = limiter.Admit("web-1/a", kOne, t0);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->limit, AgentLimit::kBatches);
  EXPECT_EQ(r->retry_after_ms, 10u);  // 0 tokens: back above zero a hair after 1/10 s... capped
  EXPECT_EQ(r->reason,
            "rate-limited: agent web-1/a is over its 10 batches/s (aggregator [limits]); resend "
            "after 10 ms");
  // After the wait it names, the next batch is admitted; then one per 100 ms.
  EXPECT_FALSE(limiter.Admit("web-1/a", kOne, t0 + milliseconds(10)).has_value());
  EXPECT_TRUE(limiter.Admit("web-1/a", kOne, t0 + milliseconds(20)).has_value());
  EXPECT_FALSE(limiter.Admit("web-1/a", kOne, t0 + milliseconds(120)).has_value());
  // Another agent has buckets of its own.
  EXPECT_FALSE(limiter.Admit("web-2/b", kOne, t0).has_value());
  EXPECT_EQ(limiter.total().by_limit[0], 7u);
  auto top = limiter.TopRefused(5);
  ASSERT_EQ(top.size(), 1u);
  EXPECT_EQ(top[0].first, "web-1/a");
  EXPECT_EQ(top[0].second.total(), 7u);
}

TEST(AgentLimiter, ABatchBiggerThanTheBucketPassesWhenItIsFullAndTheDebtIsWaitedOut) {
  AgentLimiter limiter(Only(AgentLimit::kBytes, 1000));
  const Clock::time_point t0{};
  EXPECT_FALSE(limiter.Admit("a/1", {.bytes = 5000}, t0).has_value());  // bucket 1000 -> -4000
  std::optional<LimitRefusal> r = limiter.Admit("a/1", {.bytes = 10}, t0 + milliseconds(1000));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->limit, AgentLimit::kBytes);
  EXPECT_EQ(r->retry_after_ms, 3010u);  // -3000 tokens at 1000/s, + 10 for the batch itself
  EXPECT_FALSE(limiter.Admit("a/1", {.bytes = 10}, t0 + milliseconds(4010)).has_value());
}

TEST(AgentLimiter, ABucketTheBatchDoesNotDrawOnDoesNotHoldItBack) {
  AgentLimiter limiter(Only(AgentLimit::kDefinitions, 100));
  const Clock::time_point t0{};
  EXPECT_FALSE(limiter.Admit("a/1", {.definitions = 1000}, t0).has_value());
  EXPECT_TRUE(limiter.Admit("a/1", {.definitions = 1}, t0).has_value());
  EXPECT_FALSE(limiter.Admit("a/1", {.bytes = 100, .values = 10}, t0).has_value());
}

TEST(AgentLimiter, NewSeriesArePerMinute) {
  AgentLimiter limiter(Only(AgentLimit::kNewSeries, 600));  // 10/s, bucket of 1 s = 10
  const Clock::time_point t0{};
  EXPECT_FALSE(limiter.Admit("a/1", {.new_series = 10}, t0).has_value());
  std::optional<LimitRefusal> r = limiter.Admit("a/1", {.new_series = 1}, t0);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->reason,
            "rate-limited: agent a/1 is over its 600 new_series/min (aggregator [limits]); resend "
            "after 10 ms");
  EXPECT_FALSE(limiter.Admit("a/1", {.new_series = 0}, t0).has_value());  // no new series: fine
}

TEST(AgentLimiter, ZeroIsUnlimited) {
  AgentLimits none = Only(AgentLimit::kBatches, 0);
  AgentLimiter limiter(none);
  for (int i = 0; i < 10'000; ++i) {
    ASSERT_FALSE(limiter.Admit("a/1", {.bytes = 1e9, .values = 1e9}, Clock::time_point{}));
  }
}

TEST(AgentLimiter, KeepsAtMostMaxAgentsForgettingTheIdleFirst) {
  AgentLimits l = Only(AgentLimit::kBatches, 1);
  l.max_agents = 4;
  AgentLimiter limiter(l);
  const Clock::time_point t0{};
  for (int i = 0; i < 4; ++i) limiter.Admit("a/" + std::to_string(i), kOne, t0);
  EXPECT_EQ(limiter.tracked(), 4u);
  // 2 minutes later the four are idle (full again) and make room.
  limiter.Admit("b/0", kOne, t0 + std::chrono::minutes(2));
  EXPECT_EQ(limiter.tracked(), 1u);
  // All busy: the older half goes.
  for (int i = 1; i < 6; ++i)
    limiter.Admit("b/" + std::to_string(i), kOne, t0 + std::chrono::minutes(2) + milliseconds(i));
  EXPECT_LE(limiter.tracked(), 4u);
  // b/5, the newest, kept its (empty) bucket.
  EXPECT_TRUE(
      limiter.Admit("b/5", kOne, t0 + std::chrono::minutes(2) + milliseconds(5)).has_value());
}

}  // namespace
}  // namespace trailmap::aggregator
