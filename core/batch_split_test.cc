#include "core/batch_split.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <tuple>

#include "core/histogram.h"

namespace trailmap {
namespace {

constexpr int64_t kT = 1'700'000'000;

// `seconds` seconds of `series` latency series each (a histogram of `series` + 1 values per
// series), a scalar each, and stacks of growing depth on one stacks series.
Batch Busy(size_t seconds, size_t series) {
  Batch b;
  b.agent = "web-1/abc";
  b.sequence = 9;
  b.host = "web-1";
  b.labels = {{"role", "web"}};
  b.sent_at_ms = 123;
  for (size_t i = 0; i < series; ++i) {
    b.series.push_back({"disk.latency", MetricKind::kLatency, "ns", "dev=d" + std::to_string(i)});
  }
  b.series.push_back({"cpu.user", MetricKind::kScalar, "1", "", "CPU time in user mode"});
  b.series.push_back({"cpu.stacks", MetricKind::kStacks, "samples", ""});
  for (uint32_t f = 1; f <= 6; ++f) b.frames.push_back({f, "frame_" + std::string(f * 3, 'x')});
  for (uint32_t s = 1; s <= 5; ++s) {
    StackDef d{s, {}};
    for (uint32_t f = 1; f <= s + 1; ++f) d.frames.push_back(f);
    d.frames.push_back(1);  // a recursion: frame 1 twice
    b.stacks.push_back(d);
  }
  for (size_t t = 0; t < seconds; ++t) {
    SecondDelta sd;
    sd.time = kT + static_cast<int64_t>(t);
    for (uint32_t i = 0; i < series; ++i) {
      Histogram h;
      h.Record(1000 + i * 37 + t, i + 1);
      sd.histograms.push_back({i, h.Encode()});
    }
    sd.scalars.push_back({static_cast<uint32_t>(series), 0.25 * static_cast<double>(t)});
    for (uint32_t s = 1; s <= 5; ++s) {
      sd.stacks.push_back({static_cast<uint32_t>(series + 1), s, s + t});
    }
    b.seconds.push_back(std::move(sd));
  }
  return b;
}

// Every item of a batch by what it is, not where it sits: (time, series def, kind, value).
using Item = std::tuple<int64_t, std::string, char, std::string>;
std::multiset<Item> Items(const Batch& b) {
  std::multiset<Item> items;
  for (const SecondDelta& s : b.seconds) {
    auto name = [&b](uint32_t i) { return b.series[i].metric + "{" + b.series[i].fields + "}"; };
    for (const HistogramDelta& h : s.histograms)
      items.insert({s.time, name(h.series), 'h', h.encoded});
    for (const ScalarValue& v : s.scalars) {
      items.insert({s.time, name(v.series), 's', std::to_string(v.value)});
    }
    for (const StackCount& c : s.stacks) {
      // The stack by its frame names, so a cut batch's own definitions are checked too.
      std::string folded;
      for (const StackDef& d : b.stacks) {
        if (d.id != c.stack) continue;
        for (uint32_t f : d.frames) {
          for (const FrameDef& fd : b.frames) {
            if (fd.id == f) folded += fd.name + ";";
          }
        }
      }
      items.insert({s.time, name(c.series), 'k', folded + std::to_string(c.count)});
    }
  }
  return items;
}

TEST(EncodedBatchBytes, IsExact) {
  for (size_t series : {0, 1, 3, 50}) {
    Batch b = Busy(3, series);
    EXPECT_EQ(EncodedBatchBytes(b), EncodeBatch(b).size()) << series;
    b.frames.clear();
    b.stacks.clear();
    b.labels.clear();
    b.seconds[0].stacks.clear();
    b.seconds[1].histograms.clear();
    EXPECT_EQ(EncodedBatchBytes(b), EncodeBatch(b).size()) << series;
  }
  EXPECT_EQ(EncodedBatchBytes(Batch()), EncodeBatch(Batch()).size());
}

TEST(SplitBatch, ABatchWithinTheLimitsIsLeftAlone) {
  const Batch b = Busy(2, 4);
  std::vector<Batch> out = SplitBatch(b);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(EncodeBatch(out[0]), EncodeBatch(b));
}

// Splits `b` under `limits` and checks every cut batch decodes under them with nothing refused,
// and that together they hold every item exactly once. Returns how many batches.
size_t CheckSplit(const Batch& b, const BatchLimits& limits) {
  std::vector<Batch> out = SplitBatch(b, limits);
  std::multiset<Item> all;
  for (const Batch& part : out) {
    const std::string bytes = EncodeBatch(part);
    EXPECT_EQ(bytes.size(), EncodedBatchBytes(part));
    Refusals refused;
    Result<Batch> back = DecodeBatch(bytes, limits, nullptr, nullptr, &refused);
    EXPECT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(refused.total, 0u);
    EXPECT_EQ(part.agent, b.agent);
    EXPECT_EQ(part.host, b.host);
    EXPECT_EQ(part.labels, b.labels);
    EXPECT_EQ(part.sent_at_ms, b.sent_at_ms);
    std::multiset<Item> items = Items(part);
    EXPECT_FALSE(items.empty());
    all.insert(items.begin(), items.end());
  }
  EXPECT_EQ(all, Items(b));
  return out.size();
}

TEST(SplitBatch, TooManySeriesInOneSecondIsCutNotRefused) {
  const Batch b = Busy(1, 250);
  BatchLimits limits;
  limits.max_series = 100;
  EXPECT_FALSE(DecodeBatch(EncodeBatch(b), limits).ok());  // as one batch: refused whole
  EXPECT_EQ(CheckSplit(b, limits), 3u);                    // 252 series, 100 at a time
}

TEST(SplitBatch, TooManyBytesIsCutUnderTheByteLimit) {
  const Batch b = Busy(10, 40);
  BatchLimits limits;
  limits.max_bytes = 4096;
  ASSERT_GT(EncodeBatch(b).size(), 4 * limits.max_bytes);
  EXPECT_GE(CheckSplit(b, limits), 5u);
}

TEST(SplitBatch, EveryOtherLimitIsKept) {
  const Batch b = Busy(12, 7);
  BatchLimits histograms;
  histograms.max_histograms = 10;
  EXPECT_EQ(CheckSplit(b, histograms), 9u);  // 84 histograms
  BatchLimits stack_counts;
  stack_counts.max_stack_counts = 7;
  EXPECT_EQ(CheckSplit(b, stack_counts), 9u);  // 60 stack counts
  BatchLimits seconds;
  seconds.max_seconds = 5;
  EXPECT_EQ(CheckSplit(b, seconds), 3u);
  BatchLimits definitions;
  definitions.max_stack_defs = 2;
  definitions.max_frame_defs = 6;  // the deepest stack uses 6 frames
  // Any three stack counts in a row name three stacks: at most two per batch.
  EXPECT_GE(CheckSplit(b, definitions), 30u);
}

}  // namespace
}  // namespace trailmap
