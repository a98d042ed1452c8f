#include "aggregator/scan/histogram_query.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "aggregator/scan/store_query.h"
#include "aggregator/store/store.h"
#include "aggregator/store/testing.h"

namespace trailmap::aggregator {
namespace {

using testing::Encoded;
using testing::Latency;
using testing::MakeBatch;
using testing::TempDir;

constexpr int64_t kT = 1'700'000'000;

// "column/group=count" for every cell, e.g. "0/web-1=3 1/web-2=1".
std::string Cells(const HistogramAnswer& a) {
  std::string out;
  for (const QueryCell& c : a.cells) {
    if (!out.empty()) out += ' ';
    out += std::to_string(c.column) + "/" + a.groups.at(c.group) + "=" +
           std::to_string(c.histogram.count());
  }
  return out;
}

class HistogramQueryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = testing::OpenTestStore(dir_.path());
    ASSERT_NE(store_, nullptr);
    // Series 0: op=read, 1: op=write, 2: no fields. Second kT+i holds i+1 values per histogram
    // on web-1; web-2 writes op=read only; db-1 the unfielded series only.
    Add("web-1", "role=web", {{0, 0}, {0, 1}, {1, 0}, {1, 1}, {3, 0}, {3, 1}});
    Add("web-2", "role=web", {{0, 0}, {2, 0}, {4, 0}});
    Add("db-1", "role=db", {{1, 2}, {5, 2}, {6, 2}});  // kT+6 is past the queried range
  }

  // Adds one histogram of (i+1) values for each (second offset i, series).
  void Add(const std::string& host, const std::string& role,
           std::vector<std::pair<int, uint32_t>> cells) {
    Batch b = MakeBatch(host + "/1", 1, host,
                        {Latency("disk.latency", "op=read"), Latency("disk.latency", "op=write"),
                         Latency("disk.latency")});
    b.labels = {{"role", role.substr(5)}};
    for (auto [offset, series] : cells) {
      Histogram h;
      h.Record(1000 + offset, offset + 1);
      b.seconds.push_back(SecondDelta{kT + offset, {{series, h.Encode()}}, {}});
    }
    Result<ApplyOutcome> r = store_->ApplyBatch(b);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(r->status, Ack::Status::kApplied);
  }

  HistogramAnswer Query(HistogramQuery q) {
    Result<HistogramAnswer> a = QueryHistograms(*store_, q);
    EXPECT_TRUE(a.ok()) << a.status().ToString();
    return a.ok() ? *a : HistogramAnswer();
  }

  TempDir dir_;
  std::unique_ptr<Store> store_;
};

HistogramQuery Where(std::string where, std::string group_by = "") {
  HistogramQuery q{"disk.latency", kT, kT + 6, 6, std::move(group_by), {}};
  q.where = std::move(where);
  return q;
}

TEST_F(HistogramQueryTest, WhereIsEvaluatedHereOnFieldsHostsAndLabels) {
  // op=read: web-1 at offsets 0, 1, 3 (1+2+4) and web-2 at 0, 2, 4 (1+3+5).
  EXPECT_EQ(Cells(Query(Where(R"(op == "read")"))), "0/=16");
  // A host label: db-1 at offsets 1 and 5 (2+6).
  EXPECT_EQ(Cells(Query(Where(R"(role == "db")"))), "0/=8");
  EXPECT_EQ(Cells(Query(Where(R"(host =~ "web-.*" and not (op in ("write")))", "host"))),
            "0/web-1=7 0/web-2=9");
  // A series without the field fails a comparison on it and passes its negation.
  EXPECT_EQ(Cells(Query(Where(R"(op != "read")", "host"))), "0/db-1=8 0/web-1=7");
  // A comparison on the value selects buckets: every value here is near 1 µs.
  EXPECT_EQ(Cells(Query(Where("latency > 2us"))), "");
  EXPECT_EQ(Cells(Query(Where(R"(latency < 2us and op == "write")"))), "0/=7");
  EXPECT_EQ(Query(Where("latency < 2us")).cells.at(0).histogram.count(), 31u);
  // A bad predicate is an error naming the column, not an empty answer.
  Result<HistogramAnswer> bad = QueryHistograms(*store_, Where("op = 1"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("column 4"), std::string::npos) << bad.status().message();
}

// The query server's pass-through: a cell of one stored value keeps its encoding, a cell of
// several is merged and encoded on the scan's thread, and either way the histogram stays empty.
// Materialized, every answer is the decoded one, cell for cell, and EncodeAnswer sends the same
// bytes either way.
TEST_F(HistogramQueryTest, PassThroughKeepsSingleValuesEncodedAndAnswersTheSame) {
  for (HistogramQuery q : {HistogramQuery{"disk.latency", kT, kT + 6, 1, "host", {}},
                           HistogramQuery{"disk.latency", kT, kT + 6, 2, "op", {}},
                           HistogramQuery{"disk.latency", kT, kT + 6, 6, "", {}},
                           Where(R"(op == "read")", "host"), Where("latency < 2us", "host")}) {
    SCOPED_TRACE(q.group_by + " step " + std::to_string(q.step) + " " + q.where);
    Result<HistogramAnswer> plain = QueryHistograms(*store_, q);
    Result<HistogramAnswer> passed =
        QueryHistograms(*store_, q, QueryPlan::kCoarsest, nullptr, /*pass_through=*/true);
    ASSERT_TRUE(plain.ok() && passed.ok());
    ASSERT_FALSE(passed->cells.empty());
    for (const QueryCell& c : passed->cells) {
      EXPECT_FALSE(c.encoded.empty()) << "column " << c.column << " group " << c.group;
      EXPECT_TRUE(c.histogram.empty()) << "column " << c.column << " group " << c.group;
    }
    Answer a, b;
    a.kind = b.kind = Query::Kind::kHistograms;
    a.histograms = *plain;
    b.histograms = *passed;
    EXPECT_EQ(EncodeAnswer(a), EncodeAnswer(b));
    for (QueryCell& c : passed->cells) ASSERT_TRUE(c.Materialize().ok());
    EXPECT_EQ(Cells(*passed), Cells(*plain));
    ASSERT_EQ(passed->cells.size(), plain->cells.size());
    for (size_t i = 0; i < plain->cells.size(); ++i) {
      EXPECT_EQ(passed->cells[i].histogram, plain->cells[i].histogram) << i;
    }
  }
}

TEST_F(HistogramQueryTest, OneGroup) {
  const HistogramAnswer a = Query({"disk.latency", kT, kT + 6, 2, "", {}});
  EXPECT_EQ(a.kind, MetricKind::kLatency);
  EXPECT_EQ(a.unit, "ns");
  EXPECT_EQ(a.groups, std::vector<std::string>{""});
  // Column 0 = kT, kT+1: web-1 1+1+2+2, web-2 1, db-1 2 = 9.
  // Column 1 = kT+2, kT+3: web-1 4+4, web-2 3 = 11.  Column 2 = kT+4, kT+5: web-2 5, db-1 6 = 11.
  EXPECT_EQ(Cells(a), "0/=9 1/=11 2/=11");
  EXPECT_EQ(a.cells[0].histogram.min(), 1000u);
  EXPECT_EQ(a.cells[0].histogram.max(), 1001u);
}

TEST_F(HistogramQueryTest, ByHost) {
  const HistogramAnswer a = Query({"disk.latency", kT, kT + 6, 3, "host", {}});
  EXPECT_EQ(a.groups, (std::vector<std::string>{"db-1", "web-1", "web-2"}));
  EXPECT_EQ(Cells(a), "0/db-1=2 0/web-1=6 0/web-2=4 1/db-1=6 1/web-1=8 1/web-2=5");
}

TEST_F(HistogramQueryTest, ByFieldWithNoneForSeriesWithoutIt) {
  const HistogramAnswer a = Query({"disk.latency", kT, kT + 6, 1, "op", {}});
  // db-1's series has no op field and db-1 has no op label: "(none)".
  EXPECT_EQ(a.groups, (std::vector<std::string>{"(none)", "read", "write"}));
  EXPECT_EQ(Cells(a),
            "0/read=2 0/write=1 1/(none)=2 1/read=2 1/write=2 2/read=3 3/read=4 3/write=4 "
            "4/read=5 5/(none)=6");
}

TEST_F(HistogramQueryTest, ByHostLabel) {
  const HistogramAnswer a = Query({"disk.latency", kT, kT + 6, 6, "role", {}});
  EXPECT_EQ(a.groups, (std::vector<std::string>{"db", "web"}));
  EXPECT_EQ(Cells(a), "0/db=8 0/web=23");
}

TEST_F(HistogramQueryTest, HostFilterAndRangeEdges) {
  HistogramAnswer a = Query({"disk.latency", kT + 1, kT + 4, 1, "host", {"web-1", "nobody"}});
  EXPECT_EQ(a.groups, std::vector<std::string>{"web-1"});
  // kT+1 (column 0): 2+2; kT+3 (column 2): 4+4; kT+4 is excluded (to is exclusive).
  EXPECT_EQ(Cells(a), "0/web-1=4 2/web-1=8");

  a = Query({"disk.latency", kT, kT + 6, 1, "", {"nobody"}});
  EXPECT_TRUE(a.cells.empty());
  a = Query({"disk.latency", kT + 100, kT + 200, 10, "", {}});
  EXPECT_TRUE(a.cells.empty());
}

TEST_F(HistogramQueryTest, UnknownMetricIsEmptyAndBadRangeIsAnError) {
  const HistogramAnswer a = Query({"no.such.metric", kT, kT + 6, 1, "host", {}});
  EXPECT_TRUE(a.cells.empty());
  EXPECT_TRUE(a.groups.empty());
  EXPECT_EQ(QueryHistograms(*store_, {"disk.latency", kT, kT, 1, "", {}}).status().code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(QueryHistograms(*store_, {"disk.latency", kT, kT + 1, 0, "", {}}).status().code(),
            Status::Code::kInvalidArgument);
}

// Long ranges are scanned in time slices on several threads; the answer must not change.
TEST(HistogramQuerySliceTest, SlicesGiveTheSameAnswerAsOneScan) {
  TempDir dir;
  Batch b = MakeBatch("a/1", 1, "a", {Latency("m", "op=read"), Latency("m", "op=write")});
  b.labels = {{"zone", "b"}};
  for (int s = 0; s < 1000; s += 7) {
    b.seconds.push_back(
        SecondDelta{kT + s, {{static_cast<uint32_t>(s % 2), Encoded({uint64_t(s)})}}, {}});
  }
  const std::vector<HistogramQuery> queries = {
      {"m", kT, kT + 1000, 1, "", {}},       // 1000 columns, cut on column boundaries
      {"m", kT, kT + 1000, 333, "op", {}},   // 4 columns for 3 slices: equal spans of time
      {"m", kT, kT + 1000, 1000, "op", {}},  // 1 column split between every slice
      {"m", kT + 3, kT + 997, 10, "zone", {}},
  };
  std::vector<std::string> one_scan;
  for (int threads : {1, 3}) {
    StoreOptions options;
    options.sync = false;
    options.query_threads = threads;
    std::unique_ptr<Store> store = std::move(Store::Open(dir.path(), options)).value();
    if (threads == 1) {
      ASSERT_EQ(store->ApplyBatch(b)->status, Ack::Status::kApplied);
    }
    for (size_t i = 0; i < queries.size(); ++i) {
      Result<HistogramAnswer> a = QueryHistograms(*store, queries[i]);
      ASSERT_TRUE(a.ok()) << a.status().ToString();
      std::string cells = Cells(*a);
      for (const QueryCell& c : a->cells)
        cells += " " + std::to_string(static_cast<uint64_t>(c.histogram.sum()));
      if (threads == 1) {
        one_scan.push_back(cells);
      } else {
        EXPECT_EQ(cells, one_scan[i]) << "query " << i;
      }
    }
  }
  EXPECT_EQ(one_scan[2], "0/read=72 0/write=71 35784 35287");
  EXPECT_EQ(one_scan[3].substr(0, 26), "0/b=1 1/b=2 2/b=1 3/b=2 4/");
}

// One column over many hosts (columns, trails) is read host after host, and with threads its
// hosts are shared out between them: the answer must be what the same seconds give read in key
// order, column by column (a one-second step), merged per group.
TEST(HistogramQuerySliceTest, OneColumnOfManyHostsAnswersAsTheSecondsInKeyOrder) {
  TempDir dir;
  constexpr int kHosts = 2 * static_cast<int>(kMinHostsPerThread) + 3, kSeconds = 40;
  std::vector<Batch> batches;
  for (int h = 0; h < kHosts; ++h) {
    const std::string host = "h" + std::to_string(h);
    Batch b = MakeBatch(host + "/1", 1, host, {Latency("m", "op=read"), Latency("m", "op=write")});
    b.labels = {{"zone", h % 3 == 0 ? "a" : "b"}};
    for (int s = 0; s < kSeconds; ++s) {
      if ((s + h) % 4 == 0) continue;  // some host-seconds hold nothing
      const uint64_t v = 1'000 + static_cast<uint64_t>(h * 7'919 + s * 104'729) % 150'000;
      b.seconds.push_back(
          SecondDelta{kT + s, {{0, Encoded({v, v * 2})}, {1, Encoded({v + 7})}}, {}});
    }
    batches.push_back(std::move(b));
  }
  const std::vector<std::pair<std::string, std::string>> views = {
      {"host", ""}, {"op", ""}, {"", ""}, {"zone", "latency > 20us and latency < 100us"},
      {"host", "op == \"write\""}};
  for (int threads : {1, 2}) {
    StoreOptions options;
    options.sync = false;
    options.query_threads = threads;
    std::unique_ptr<Store> store = std::move(Store::Open(dir.path(), options)).value();
    if (threads == 1) {
      for (const Batch& b : batches) ASSERT_EQ(store->ApplyBatch(b)->status, Ack::Status::kApplied);
    }
    for (const auto& [group_by, where] : views) {
      SCOPED_TRACE(std::to_string(threads) + " threads, by '" + group_by + "' where '" + where +
                   "'");
      HistogramQuery one{"m", kT + 3, kT + kSeconds, kSeconds - 3, group_by, {}};
      one.where = where;
      HistogramQuery seconds = one;
      seconds.step = 1;
      Result<HistogramAnswer> column = QueryHistograms(*store, one);
      Result<HistogramAnswer> passed =
          QueryHistograms(*store, one, QueryPlan::kCoarsest, nullptr, /*pass_through=*/true);
      Result<HistogramAnswer> by_second = QueryHistograms(*store, seconds, QueryPlan::kFinestOnly);
      ASSERT_TRUE(column.ok() && passed.ok() && by_second.ok());
      // The seconds' cells merged per group, into one column.
      HistogramAnswer merged;
      merged.groups = by_second->groups;
      std::vector<int> cell_of(merged.groups.size(), -1);
      for (const QueryCell& c : by_second->cells) {
        if (cell_of[c.group] < 0) {
          cell_of[c.group] = static_cast<int>(merged.cells.size());
          merged.cells.push_back(QueryCell{0, c.group, Histogram(), {}});
        }
        merged.cells[cell_of[c.group]].histogram.Merge(c.histogram);
      }
      std::sort(merged.cells.begin(), merged.cells.end(),
                [](const QueryCell& a, const QueryCell& b) { return a.group < b.group; });
      EXPECT_EQ(testing::AnswerDifference(*column, merged), "");
      for (QueryCell& c : passed->cells) ASSERT_TRUE(c.Materialize().ok());
      EXPECT_EQ(testing::AnswerDifference(*passed, merged), "");
      uint64_t events = 0;
      for (const QueryCell& c : merged.cells) events += c.histogram.count();
      EXPECT_GT(events, where.empty() ? 8'000u : 1'000u);  // not vacuous
      if (group_by == "host" && where.empty()) {
        EXPECT_EQ(column->cells.size(), size_t{kHosts});
      }
    }
  }
}

}  // namespace
}  // namespace trailmap::aggregator
