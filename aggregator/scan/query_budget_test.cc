#include "aggregator/scan/query_budget.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <zmq.hpp>

#include "aggregator/scan/store_query.h"
#include "aggregator/server/query_server.h"
#include "aggregator/store/store.h"
#include "aggregator/store/testing.h"

namespace trailmap::aggregator {
namespace {

using testing::Encoded;
using testing::Latency;
using testing::MakeBatch;
using testing::TempDir;
using Clock = std::chrono::steady_clock;

constexpr int64_t kT = 1'700'000'000;

TEST(QueryBudget, AFlameGraphsAdviceNamesWhatItHasNotAStep) {
  QueryBudget budget(QueryLimits{0, 1000, 3, 10, 4096}, Clock::now());
  budget.set_stack_query();
  EXPECT_EQ(budget.ChargeKeys(1001).message(),
            "query over budget: it read more than 1000 stored keys (max_keys); narrow it: a "
            "shorter range or fewer hosts (--hosts, --where), or ask for more (--max-keys, "
            "--max-cells, up to the aggregator's [queries] limits)");
  EXPECT_NE(budget.ChargeCells(11).message().find("(max_cells); narrow it: a shorter range"),
            std::string::npos);
}

TEST(QueryBudget, EachLimitSaysWhatWasHitAndHowToNarrowTheQuery) {
  QueryBudget budget(QueryLimits{0, 1000, 3, 10, 4096}, Clock::now());
  EXPECT_TRUE(budget.ChargeKeys(1000).ok());
  EXPECT_EQ(budget.ChargeKeys(1).message(),
            "query over budget: it read more than 1000 stored keys (max_keys); narrow it: a "
            "larger --step (coarser rollups) or a shorter range");
  EXPECT_EQ(budget.keys(), 1001u);
  EXPECT_TRUE(budget.ChargeCells(10).ok());
  EXPECT_EQ(budget.ChargeCells(1).message(),
            "query over budget: its answer holds more than 10 cells (columns x groups, or "
            "distinct stacks) (max_cells); narrow it: a larger --step, fewer groups (--by, "
            "--where) or a shorter range");
  EXPECT_TRUE(budget.CheckGroups(3).ok());
  EXPECT_EQ(budget.CheckGroups(4).message(),
            "query over budget: its answer holds 4 groups, more than 3 (max_groups); narrow it: "
            "group by a field with fewer values (--by) or keep fewer (--where, --hosts)");
  EXPECT_EQ(budget.CheckAnswerBytes(5000).code(), Status::Code::kResourceExhausted);
  EXPECT_EQ(budget.CheckAnswerBytes(5000).message(),
            "query over budget: its answer takes 5000 bytes, more than 4096 (max_answer_bytes); "
            "narrow it: a larger --step, fewer groups (--by, --where) or a shorter range");
  // 0 is no limit.
  QueryBudget unlimited(QueryLimits{}, Clock::now());
  EXPECT_TRUE(unlimited.ChargeKeys(UINT64_MAX / 2).ok());
  EXPECT_TRUE(unlimited.CheckGroups(UINT64_MAX).ok());
}

TEST(QueryBudget, DeadlineAndStopFlag) {
  std::atomic<bool> stopping{false};
  QueryBudget late(QueryLimits{.deadline_ms = 250}, Clock::now() - std::chrono::seconds(1),
                   &stopping);
  EXPECT_EQ(late.ChargeKeys(1).message(),
            "query over budget: not answered within its deadline of 250 ms (deadline); narrow "
            "it: a larger --step, fewer hosts (--where, --hosts) or a shorter range");
  QueryBudget in_time(QueryLimits{.deadline_ms = 60'000}, Clock::now(), &stopping);
  EXPECT_TRUE(in_time.Check().ok());
  stopping = true;
  EXPECT_EQ(in_time.Check().code(), Status::Code::kUnavailable);
  EXPECT_EQ(in_time.ChargeKeys(1).message(),
            "the aggregator is stopping; ask again (or another replica)");
}

// The scans charge every key they visit: a query stops at its limit with the budget's error.
class BudgetedStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = testing::OpenTestStore(dir_.path());
    ASSERT_NE(store_, nullptr);
    // 3 hosts x 600 seconds = 1,800 keys of `hist`.
    for (int host = 0; host < 3; ++host) {
      const std::string name = "web-" + std::to_string(host);
      Batch b = MakeBatch(name + "/1", 1, name, {Latency("disk.latency", "op=read")});
      for (int64_t t = 0; t < 600; ++t) b.seconds.push_back(SecondDelta{kT + t, {{0, Encoded({5})}}, {}});
      ASSERT_TRUE(store_->ApplyBatch(b).ok());
    }
  }

  TempDir dir_;
  std::unique_ptr<Store> store_;
};

TEST_F(BudgetedStoreTest, HistogramScanStopsAtMaxKeys) {
  const HistogramQuery by_host{"disk.latency", kT, kT + 600, 1, "host", {}};
  QueryBudget enough(QueryLimits{.max_keys = 1800}, Clock::now());
  Result<HistogramAnswer> a = QueryHistograms(*store_, by_host, QueryPlan::kFinestOnly, &enough);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->cells.size(), 1800u);
  EXPECT_EQ(enough.keys(), 1800u);

  QueryBudget short_of_one(QueryLimits{.max_keys = 1799}, Clock::now());
  a = QueryHistograms(*store_, by_host, QueryPlan::kFinestOnly, &short_of_one);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().message(),
            "query over budget: it read more than 1799 stored keys (max_keys); narrow it: a "
            "larger --step (coarser rollups) or a shorter range");

  QueryBudget few_cells(QueryLimits{.max_cells = 100}, Clock::now());
  a = QueryHistograms(*store_, by_host, QueryPlan::kFinestOnly, &few_cells);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().message().rfind("query over budget: its answer holds more than 100 cells", 0),
            0u)
      << a.status().message();

  QueryBudget two_groups(QueryLimits{.max_groups = 2}, Clock::now());
  a = QueryHistograms(*store_, by_host, QueryPlan::kFinestOnly, &two_groups);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().message().rfind("query over budget: its answer holds 3 groups", 0), 0u)
      << a.status().message();

  // Past its deadline before it starts: the scan gives up at its first check.
  QueryBudget late(QueryLimits{.deadline_ms = 1}, Clock::now() - std::chrono::seconds(1));
  a = QueryHistograms(*store_, by_host, QueryPlan::kFinestOnly, &late);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().message().rfind("query over budget: not answered within its deadline of 1 ms", 0),
            0u);
}

// Through the socket: the client's ask is kept within the server's limits, and the answer says
// it is over budget.
TEST_F(BudgetedStoreTest, QueryServerAnswersOverBudgetWithTheSmallerLimit) {
  zmq::context_t context;
  QueryServerOptions options{"tcp://127.0.0.1:*", "agg-b"};
  options.workers = 2;
  options.limits = QueryLimits{30'000, 1000, 100, 100'000, 1 << 20};
  QueryServer server(&context, store_.get(), options);
  ASSERT_TRUE(server.Start().ok());
  zmq::socket_t dealer(context, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.set(zmq::sockopt::rcvtimeo, 10'000);
  dealer.connect(server.endpoint());
  auto ask = [&dealer](const Query& q) {
    dealer.send(zmq::buffer(EncodeQuery(q)));
    zmq::message_t reply;
    EXPECT_TRUE(dealer.recv(reply));
    return DecodeAnswer(reply.to_string_view()).value();
  };
  Query q;
  q.id = 5;
  q.histograms = {"disk.latency", kT, kT + 600, 1, "host", {}};  // by host: every host's keys
  q.limits.max_keys = 1'000'000;  // asks for more than the server allows
  Answer a = ask(q);
  EXPECT_EQ(a.id, 5u);
  EXPECT_TRUE(a.over_budget);
  EXPECT_EQ(a.error,
            "query over budget: it read more than 1000 stored keys (max_keys); narrow it: a "
            "larger --step (coarser rollups) or a shorter range");
  // Narrowed to 300 seconds it fits (900 keys: every host's are visited).
  q.id = 6;
  q.histograms.hosts = {"web-1"};
  q.histograms.to = kT + 300;
  a = ask(q);
  EXPECT_EQ(a.error, "");
  EXPECT_FALSE(a.over_budget);
  EXPECT_EQ(a.histograms.cells.size(), 300u);
  // The answer's bytes are checked once it is encoded.
  q.id = 7;
  q.limits = QueryLimits{.max_answer_bytes = 100};
  a = ask(q);
  EXPECT_TRUE(a.over_budget);
  EXPECT_EQ(a.error.rfind("query over budget: its answer takes ", 0), 0u) << a.error;
  EXPECT_EQ(server.over_budget(), 2u);
  EXPECT_EQ(server.answered(), 1u);
  EXPECT_EQ(server.errors(), 2u);
}

}  // namespace
}  // namespace trailmap::aggregator
