#include "aggregator/scan/scalar_query.h"

#include <gtest/gtest.h>

#include "aggregator/scan/store_query.h"
#include "aggregator/store/store.h"
#include "aggregator/store/testing.h"

namespace trailmap::aggregator {
namespace {

using testing::MakeBatch;
using testing::TempDir;

constexpr int64_t kT = 1'700'000'000;

SeriesDef Usage(std::string mode, std::string description = "") {
  return SeriesDef{"cpu.usage", MetricKind::kScalar, "%", "mode=" + mode, std::move(description)};
}

// "column/group=count[min..max]" for every cell, in the answer's unit.
std::string Cells(const HistogramAnswer& a) {
  std::string out;
  for (const QueryCell& c : a.cells) {
    if (!out.empty()) out += ' ';
    out += std::to_string(c.column) + "/" + a.groups.at(c.group) + "=" +
           std::to_string(c.histogram.count()) + "[" + std::to_string(c.histogram.min()) + ".." +
           std::to_string(c.histogram.max()) + "]";
  }
  return out;
}

class ScalarQueryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = testing::OpenTestStore(dir_.path());
    ASSERT_NE(store_, nullptr);
    // web-1: user 12.34% and system 1.5% in seconds 0..3; web-2 (role=web): user 80% in 0..1 and
    // 90.5% in 2; db-1 (role=db): user 50% in second 0 and a negative value in 1 (kept by
    // summaries, not by histograms).
    Add("web-1", "web",
        {{0, 0, 12.34},
         {1, 0, 12.34},
         {2, 0, 12.34},
         {3, 0, 12.34},
         {0, 1, 1.5},
         {1, 1, 1.5},
         {2, 1, 1.5},
         {3, 1, 1.5}});
    Add("web-2", "web", {{0, 0, 80}, {1, 0, 80}, {2, 0, 90.5}});
    Add("db-1", "db", {{0, 0, 50}, {1, 0, -1}, {9, 0, 70}});  // kT+9 is past the queried range
  }

  struct Value {
    int offset;
    uint32_t series;
    double value;
  };
  void Add(const std::string& host, const std::string& role, std::vector<Value> values) {
    Batch b = MakeBatch(host + "/1", 1, host, {Usage("user", "CPU time by mode"), Usage("system")});
    b.labels = {{"role", role}};
    for (const Value& v : values)
      b.seconds.push_back(SecondDelta{kT + v.offset, {}, {{v.series, v.value}}});
    Result<ApplyOutcome> r = store_->ApplyBatch(b);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(r->status, Ack::Status::kApplied);
  }

  HistogramAnswer Query(HistogramQuery q) {
    q.metric = "cpu.usage";
    if (q.from == 0) q.from = kT;
    if (q.to == 0) q.to = kT + 4;
    Result<HistogramAnswer> a = QueryHistograms(*store_, q);
    EXPECT_TRUE(a.ok()) << a.status().ToString();
    return a.ok() ? *a : HistogramAnswer{};
  }

  TempDir dir_;
  std::unique_ptr<Store> store_;
};

TEST_F(ScalarQueryTest, EachHostSecondIsOneSampleInHundredthsOfAPercent) {
  const HistogramAnswer a = Query({.group_by = "host"});
  EXPECT_EQ(a.kind, MetricKind::kScalar);
  EXPECT_EQ(a.unit, "0.01%");
  EXPECT_EQ(Cells(a),
            "0/db-1=1[5000..5000] 0/web-1=2[150..1234] 0/web-2=1[8000..8000] "
            "1/web-1=2[150..1234] 1/web-2=1[8000..8000] "
            "2/web-1=2[150..1234] 2/web-2=1[9050..9050] "
            "3/web-1=2[150..1234]");
  // Sums are exact in fixed point: web-1's four seconds of 12.34% and 1.5%.
  uint64_t sum = 0;
  for (const QueryCell& c : a.cells) {
    if (a.groups[c.group] == "web-1") sum += static_cast<uint64_t>(c.histogram.sum());
  }
  EXPECT_EQ(sum, 4u * (1234 + 150));
}

TEST_F(ScalarQueryTest, ColumnsGroupsAndPredicates) {
  // One column of 4 s, grouped by mode: user has 4 + 3 + 1 host-seconds (db-1's -1 is skipped).
  EXPECT_EQ(Cells(Query({.step = 4, .group_by = "mode"})),
            "0/system=4[150..150] 0/user=8[1234..9050]");
  // By a host label.
  EXPECT_EQ(Cells(Query({.step = 4, .group_by = "role"})),
            "0/db=1[5000..5000] 0/web=11[150..9050]");
  // A comparison on the value keeps individual host-seconds, compared with their fraction.
  EXPECT_EQ(Cells(Query({.step = 4, .where = "value > 12.34"})), "0/=4[5000..9050]");
  EXPECT_EQ(Cells(Query({.step = 4, .where = "value >= 12.34 and value < 80%"})),
            "0/=5[1234..5000]");
  // Fields, host and labels select series.
  EXPECT_EQ(Cells(Query({.step = 4, .where = R"(mode == "user" and role == "web")"})),
            "0/=7[1234..9050]");
  EXPECT_EQ(Cells(Query({.step = 4, .hosts = {"web-2"}})), "0/=3[8000..9050]");
  // The JSON form of the same predicate.
  EXPECT_EQ(
      Cells(Query({.step = 4, .where = R"({"and": [{"field": "mode", "op": "==", "value": "user"},
      {"field": "value", "op": ">", "value": "50%"}]})"})),
      "0/=3[8000..9050]");
  // Nothing from past the range, and a bad predicate is an error.
  EXPECT_EQ(Query({.from = kT + 4, .to = kT + 9}).cells.size(), 0u);
  HistogramQuery bad{.metric = "cpu.usage", .from = kT, .to = kT + 4, .where = "value > 50ms%"};
  EXPECT_FALSE(QueryHistograms(*store_, bad).ok());
  // A value in another unit is refused, not silently empty.
  bad.where = "value > 10ms";
  EXPECT_EQ(QueryHistograms(*store_, bad).status().message(),
            "--where: cpu.usage is in %: \"10ms\" is not a number in %, e.g. 12.5%");
}

// A summaries query: count, sum, min and max of the raw values, exact and in %.
TEST_F(ScalarQueryTest, SummariesAreExactInTheMetricsUnit) {
  const HistogramAnswer a = Query({.step = 4, .group_by = "host", .summaries = true});
  EXPECT_EQ(a.unit, "%");
  EXPECT_TRUE(a.cells.empty());
  ASSERT_EQ(a.summaries.size(), 3u);
  EXPECT_EQ(a.groups, (std::vector<std::string>{"db-1", "web-1", "web-2"}));
  const CellSummary& web1 = a.summaries[1];
  EXPECT_EQ(web1.group, 1u);
  EXPECT_EQ(web1.count, 8u);
  EXPECT_DOUBLE_EQ(web1.sum, 4 * 12.34 + 4 * 1.5);
  EXPECT_DOUBLE_EQ(web1.min, 1.5);
  EXPECT_DOUBLE_EQ(web1.max, 12.34);
  EXPECT_DOUBLE_EQ(a.summaries[2].sum, 80 + 80 + 90.5);
  // db-1's -1 is kept (negative gauges are drawn below a zero line).
  const CellSummary& db1 = a.summaries[0];
  EXPECT_EQ(db1.count, 2u);
  EXPECT_DOUBLE_EQ(db1.sum, 49);
  EXPECT_DOUBLE_EQ(db1.min, -1);
  EXPECT_DOUBLE_EQ(db1.max, 50);
  // A histogram cannot hold it: the same cell as a histogram has the one value.
  const HistogramAnswer h = Query({.step = 4, .group_by = "host"});
  EXPECT_EQ(Cells(h).substr(0, Cells(h).find(' ')), "0/db-1=1[5000..5000]");
}

TEST_F(ScalarQueryTest, DescriptionsAreKeptAndSurviveReopen) {
  std::vector<MetricInfo> metrics = store_->Metrics();
  ASSERT_EQ(metrics.size(), 1u);
  EXPECT_EQ(metrics[0].description, "CPU time by mode");
  EXPECT_EQ(metrics[0].fields, std::vector<std::string>{"mode"});
  // A later batch with a new description replaces it; one without keeps it.
  Batch b = MakeBatch("web-1/1", 2, "web-1", {Usage("user", "CPU usage, % of one core")});
  b.seconds.push_back(SecondDelta{kT + 5, {}, {{0, 1}}});
  ASSERT_TRUE(store_->ApplyBatch(b).ok());
  Batch c = MakeBatch("web-1/1", 3, "web-1", {Usage("user")});
  c.seconds.push_back(SecondDelta{kT + 6, {}, {{0, 1}}});
  ASSERT_TRUE(store_->ApplyBatch(c).ok());
  EXPECT_EQ(store_->Metrics()[0].description, "CPU usage, % of one core");
  store_.reset();
  Result<std::unique_ptr<Store>> s = Store::Open(dir_.path());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ((*s)->Metrics()[0].description, "CPU usage, % of one core");
}

}  // namespace
}  // namespace trailmap::aggregator
