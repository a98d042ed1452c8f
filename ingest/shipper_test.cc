#include "ingest/shipper.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "core/histogram.h"

namespace trailmap {
namespace {

using std::chrono::milliseconds;

// What the fake aggregator does besides applying the watermark rule.
struct FakeBehaviour {
  int drop_one_in = 0;         // > 0: silently ignore one batch in n, at (seeded) random
  int restart_after = 0;       // > 0: close and rebind the ROUTER on this batch, before its ack
  milliseconds downtime{300};  // between close and rebind
  bool lose_state = false;     // on restart, forget every watermark (a new data directory)
  uint64_t reject = 0;         // > 0: reject this sequence (the watermark moves past it)
  int forget_dictionary_after = 0;  // > 0: forget every agent's stack definitions (an eviction)
                                    // after this many batches; a restart always forgets them
  uint64_t retry_later_every = 0;   // > 0: answer retryLater to each sequence divisible by it, the
                                    // first time it would apply (a per-agent limit)
  uint32_t retry_after_ms = 0;      // the wait such an answer asks for
};

// A tiny aggregator: a ROUTER on its own thread that applies only sequence == watermark + 1 and
// records the second (time) of every batch it applies, like the real one writes to RocksDB.
class FakeAggregator {
 public:
  explicit FakeAggregator(FakeBehaviour behaviour) : behaviour_(behaviour) {
    router_ = std::make_unique<zmq::socket_t>(context_, zmq::socket_type::router);
    router_->set(zmq::sockopt::linger, 0);
    router_->bind("tcp://127.0.0.1:*");
    endpoint_ = router_->get(zmq::sockopt::last_endpoint);
    thread_ = std::thread([this] { Serve(); });  // joined in the destructor
  }
  ~FakeAggregator() {
    stop_ = true;
    thread_.join();
  }

  const std::string& endpoint() const { return endpoint_; }
  // How many times each second was applied.
  std::map<int64_t, int> applied() const {
    std::lock_guard<std::mutex> lock(mu_);
    return applied_;
  }
  std::vector<std::string> agents() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> out;
    for (const auto& [agent, mark] : watermark_) out.push_back(agent);
    return out;
  }
  // Restarts the ROUTER now (from the test thread), forgetting watermarks if lose_state.
  void RestartNow() { restart_requested_ = true; }
  // Definitions sent to the fake over all connections, and stack counts it applied.
  uint64_t stack_defs_received() const {
    std::lock_guard<std::mutex> lock(mu_);
    return stack_defs_received_;
  }
  uint64_t need_dictionary_sent() const {
    std::lock_guard<std::mutex> lock(mu_);
    return need_dictionary_sent_;
  }
  // retryLater answers sent, and the shortest time from one to its sequence coming again.
  uint64_t retry_later_sent() const {
    std::lock_guard<std::mutex> lock(mu_);
    return retried_at_.size();
  }
  milliseconds shortest_retry_wait() const {
    std::lock_guard<std::mutex> lock(mu_);
    return shortest_retry_wait_;
  }
  // While set, every batch is answered `unauthorized` (its key removed from the clients file).
  void SetUnauthorized(bool refuse) { unauthorized_ = refuse; }
  // When each `unauthorized` answer to sequence 1 went out.
  std::vector<std::chrono::steady_clock::time_point> refusals_of_first() const {
    std::lock_guard<std::mutex> lock(mu_);
    return refusals_of_first_;
  }

 private:
  void Restart() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      known_frames_.clear();
      known_stacks_.clear();
    }
    router_.reset();
    std::this_thread::sleep_for(behaviour_.downtime);
    if (behaviour_.lose_state) {
      std::lock_guard<std::mutex> lock(mu_);
      watermark_.clear();
    }
    router_ = std::make_unique<zmq::socket_t>(context_, zmq::socket_type::router);
    router_->set(zmq::sockopt::linger, 0);
    router_->bind(endpoint_);
  }

  void Serve() {
    int received = 0;
    while (!stop_) {
      if (restart_requested_.exchange(false)) Restart();
      zmq::pollitem_t item{router_->handle(), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, milliseconds(10));
      if ((item.revents & ZMQ_POLLIN) == 0) continue;
      zmq::message_t identity, payload;
      (void)router_->recv(identity);
      (void)router_->recv(payload);
      ++received;
      // The restart comes after that batch is applied and before its answer, as a crash between
      // the write and the ack would: the shipper must resend it, every time (had the ack gone
      // out first, a shipper with nothing else in flight had nothing to resend).
      const bool crash = behaviour_.restart_after > 0 && received == behaviour_.restart_after;
      // Random, not every n-th: a fixed period can resonate with the resend count and drop the
      // same batch forever, which no real network does.
      if (!crash && behaviour_.drop_one_in > 0 && random_() % behaviour_.drop_one_in == 0) continue;
      const std::string ack = Apply(payload.to_string_view());
      if (crash) {
        Restart();
        continue;
      }
      router_->send(identity, zmq::send_flags::sndmore);
      router_->send(zmq::buffer(ack), zmq::send_flags::none);
      if (behaviour_.forget_dictionary_after > 0 && received == behaviour_.forget_dictionary_after) {
        std::lock_guard<std::mutex> lock(mu_);
        known_frames_.clear();
        known_stacks_.clear();
      }
    }
  }

  std::string Apply(std::string_view bytes) {
    std::string agent;
    Ack ack;
    Result<Batch> batch = DecodeBatch(bytes, {}, &agent, &ack.sequence);
    std::lock_guard<std::mutex> lock(mu_);
    uint64_t& mark = watermark_[agent];
    bool unknown = false;  // the batch uses a stack or frame the fake has no definition of
    if (batch.ok()) {
      stack_defs_received_ += batch->stacks.size();
      for (const FrameDef& f : batch->frames) known_frames_[agent].insert(f.id);
      for (const StackDef& d : batch->stacks) {
        for (uint32_t f : d.frames) unknown |= known_frames_[agent].count(f) == 0;
        known_stacks_[agent].insert(d.id);
      }
      for (const SecondDelta& s : batch->seconds) {
        for (const StackCount& c : s.stacks) unknown |= known_stacks_[agent].count(c.stack) == 0;
      }
    }
    if (auto it = retried_at_.find(ack.sequence); it != retried_at_.end() && !it->second.second) {
      it->second.second = true;  // its first arrival after the retryLater
      shortest_retry_wait_ =
          std::min(shortest_retry_wait_, std::chrono::duration_cast<milliseconds>(
                                             std::chrono::steady_clock::now() - it->second.first));
    }
    if (unauthorized_) {
      ack.status = Ack::Status::kUnauthorized;
      ack.reason = "key web may not ingest: told to";
      if (ack.sequence == 1) refusals_of_first_.push_back(std::chrono::steady_clock::now());
    } else if (behaviour_.retry_later_every > 0 && ack.sequence == mark + 1 &&
               ack.sequence % behaviour_.retry_later_every == 0 &&
               !retried_at_.count(ack.sequence)) {
      retried_at_[ack.sequence] = {std::chrono::steady_clock::now(), false};
      ack.status = Ack::Status::kRetryLater;
      ack.reason = "rate-limited: told to";
      ack.retry_after_ms = behaviour_.retry_after_ms;
    } else if (ack.sequence <= mark) {
      ack.status = Ack::Status::kDuplicate;
    } else if (ack.sequence > mark + 1) {
      ack.status = Ack::Status::kOutOfOrder;
      ack.expected = mark + 1;
    } else if (!batch.ok() || ack.sequence == behaviour_.reject) {
      ack.status = Ack::Status::kRejected;
      ack.reason = batch.ok() ? "told to reject it" : batch.status().message();
      mark = ack.sequence;
    } else if (unknown) {
      ack.status = Ack::Status::kNeedDictionary;
      ack.expected = ack.sequence;
      ++need_dictionary_sent_;
    } else {
      for (const SecondDelta& s : batch->seconds) ++applied_[s.time];
      mark = ack.sequence;
    }
    return EncodeAck(ack);
  }

  const FakeBehaviour behaviour_;
  zmq::context_t context_;
  std::unique_ptr<zmq::socket_t> router_;  // used only by the serving thread once it runs
  std::string endpoint_;
  std::minstd_rand random_{42};  // used by the serving thread only
  std::atomic<bool> stop_{false};
  std::atomic<bool> restart_requested_{false};
  mutable std::mutex mu_;
  std::map<std::string, uint64_t> watermark_;  // guarded by mu_
  std::map<int64_t, int> applied_;             // guarded by mu_
  std::map<std::string, std::set<uint32_t>> known_frames_, known_stacks_;  // guarded by mu_
  uint64_t stack_defs_received_ = 0;           // guarded by mu_
  uint64_t need_dictionary_sent_ = 0;          // guarded by mu_
  // Sequence -> when it was answered retryLater, and whether it came again since; mu_.
  std::map<uint64_t, std::pair<std::chrono::steady_clock::time_point, bool>> retried_at_;
  milliseconds shortest_retry_wait_{milliseconds::max()};  // guarded by mu_
  std::atomic<bool> unauthorized_{false};
  std::vector<std::chrono::steady_clock::time_point> refusals_of_first_;  // guarded by mu_
  std::thread thread_;
};

// A batch holding one second, `time`, so the fake can tell which batch it applied.
Batch OneSecond(int64_t time) {
  Histogram h;
  h.Record(1000 + time % 100);
  Batch b;
  b.host = "web-1";
  b.series = {{"disk.latency", MetricKind::kLatency, "ns", ""}};
  b.seconds = {{time, {{0, h.Encode()}}, {}}};
  return b;
}

// A batch holding one second of stack counts: stack (time % 10) + 1 = main;f<time % 10>, with
// every definition it uses, as the Bucketizer makes them.
Batch OneStackSecond(int64_t time) {
  const uint32_t k = static_cast<uint32_t>(time % 10);
  Batch b;
  b.host = "web-1";
  b.series = {{"cpu.stacks", MetricKind::kStacks, "samples", ""}};
  b.frames = {{1, "main"}, {k + 2, "f" + std::to_string(k)}};
  b.stacks = {{k + 1, {1, k + 2}}};
  b.seconds = {{time, {}, {}, {{0, k + 1, 3}}}};
  return b;
}

ShipperOptions Fast(const std::string& endpoint) {
  ShipperOptions o;
  o.endpoint = endpoint;
  o.agent_id = NewAgentId("web-1");
  o.window = 16;
  o.ack_timeout = milliseconds(300);
  o.poll_interval = milliseconds(10);
  return o;
}

// Sends seconds [first, first + n) with a short pause now and then, so batches interleave with
// acks, drops and restarts.
void SendSeconds(Shipper* shipper, int64_t first, int n) {
  for (int i = 0; i < n; ++i) {
    ASSERT_TRUE(shipper->Send(OneSecond(first + i)));
    if (i % 25 == 0) std::this_thread::sleep_for(milliseconds(5));
  }
}

// Every second in [first, first + n) applied exactly once, and nothing else.
void ExpectAppliedOnce(const FakeAggregator& fake, int64_t first, int n) {
  const std::map<int64_t, int> applied = fake.applied();
  EXPECT_EQ(applied.size(), static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    auto it = applied.find(first + i);
    ASSERT_NE(it, applied.end()) << "second " << first + i << " never applied";
    EXPECT_EQ(it->second, 1) << "second " << first + i;
  }
}

constexpr int kBatches = 300;

// Polls `done` every 5 ms for up to `timeout_ms`; its last result.
template <typename F>
bool WaitUntil(F done, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + milliseconds(timeout_ms);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(milliseconds(5));
  }
  return true;
}

TEST(Shipper, DeliversInOrderWithAcks) {
  FakeAggregator fake({});
  Shipper shipper(Fast(fake.endpoint()));
  SendSeconds(&shipper, 1000, kBatches);
  ASSERT_TRUE(shipper.Flush(milliseconds(10'000)).ok());
  ExpectAppliedOnce(fake, 1000, kBatches);
  const ShipperCounters c = shipper.counters();
  EXPECT_EQ(c.sent, uint64_t{kBatches});
  EXPECT_EQ(c.acked, uint64_t{kBatches});
  EXPECT_EQ(c.resent + c.reconnects + c.duplicates + c.rejected + c.dropped, 0u);
}

TEST(Shipper, ResendsWhatTheAggregatorDropped) {
  FakeAggregator fake({.drop_one_in = 7});
  Shipper shipper(Fast(fake.endpoint()));
  SendSeconds(&shipper, 1000, kBatches);
  ASSERT_TRUE(shipper.Flush(milliseconds(20'000)).ok());
  ExpectAppliedOnce(fake, 1000, kBatches);
  const ShipperCounters c = shipper.counters();
  EXPECT_EQ(c.sent, uint64_t{kBatches});
  EXPECT_EQ(c.acked + c.duplicates, uint64_t{kBatches});
  EXPECT_GT(c.out_of_order, 0u);
  EXPECT_GT(c.resent, 0u);
}

TEST(Shipper, SurvivesTheAggregatorRestartingMidStream) {
  FakeAggregator fake({.restart_after = 100, .downtime = milliseconds(500)});
  Shipper shipper(Fast(fake.endpoint()));
  SendSeconds(&shipper, 1000, kBatches);
  ASSERT_TRUE(shipper.Flush(milliseconds(20'000)).ok());
  ExpectAppliedOnce(fake, 1000, kBatches);
  const ShipperCounters c = shipper.counters();
  EXPECT_EQ(c.acked + c.duplicates, uint64_t{kBatches});
  EXPECT_GE(c.reconnects, 1u);
  EXPECT_GT(c.resent, 0u);
  EXPECT_GE(c.duplicates, 1u);  // batch 100: applied before the restart, its ack never sent
}

TEST(Shipper, DropsSomeRestartsAndStillAppliesEachOnce) {
  FakeAggregator fake({.drop_one_in = 11, .restart_after = 150, .downtime = milliseconds(200)});
  Shipper shipper(Fast(fake.endpoint()));
  SendSeconds(&shipper, 1000, kBatches);
  ASSERT_TRUE(shipper.Flush(milliseconds(20'000)).ok());
  ExpectAppliedOnce(fake, 1000, kBatches);
  const ShipperCounters c = shipper.counters();
  EXPECT_EQ(c.acked + c.duplicates, uint64_t{kBatches});
}

TEST(Shipper, CountsARejectionAndCarriesOn) {
  FakeAggregator fake({.reject = 5});
  Shipper shipper(Fast(fake.endpoint()));
  SendSeconds(&shipper, 1000, 20);
  ASSERT_TRUE(shipper.Flush(milliseconds(10'000)).ok());
  const ShipperCounters c = shipper.counters();
  EXPECT_EQ(c.rejected, 1u);
  EXPECT_EQ(c.acked, 19u);
  EXPECT_EQ(fake.applied().count(1004), 0u);  // sequence 5 held second 1004
  EXPECT_EQ(fake.applied().size(), 19u);
}

// A limit answers retryLater: the shipper waits as told, resends from that batch, and every
// batch is applied exactly once; none counts as dropped or rejected.
TEST(Shipper, WaitsAsToldByRetryLaterAndLosesNothing) {
  FakeAggregator fake({.drop_one_in = 13, .retry_later_every = 10, .retry_after_ms = 80});
  Shipper shipper(Fast(fake.endpoint()));
  SendSeconds(&shipper, 1000, 100);
  ASSERT_TRUE(shipper.Flush(milliseconds(20'000)).ok());
  ExpectAppliedOnce(fake, 1000, 100);
  const ShipperCounters c = shipper.counters();
  EXPECT_EQ(fake.retry_later_sent(), 10u);  // sequences 10, 20, ..., 100
  EXPECT_GE(c.retry_later, 10u);            // each acted on (a drop may add a resent answer)
  EXPECT_EQ(c.acked + c.duplicates, 100u);
  EXPECT_EQ(c.rejected + c.dropped, 0u);
  EXPECT_GE(fake.shortest_retry_wait(), milliseconds(80));
}

// The agent's key is refused for a while (removed from the clients file, then listed again):
// every batch is held and resent after a backoff that doubles up to its bound, and once the key
// is back each is applied exactly once; none counts as rejected or dropped.
TEST(Shipper, HoldsBatchesRefusedForItsKeyAndRetriesWithBackoff) {
  FakeAggregator fake({});
  fake.SetUnauthorized(true);
  ShipperOptions options = Fast(fake.endpoint());
  options.unauthorized_backoff = milliseconds(40);
  options.max_unauthorized_backoff = milliseconds(160);
  Shipper shipper(options);
  SendSeconds(&shipper, 1000, 20);
  ASSERT_TRUE(WaitUntil([&] { return fake.refusals_of_first().size() >= 6; }, 10'000));
  EXPECT_TRUE(fake.applied().empty());
  const std::vector<std::chrono::steady_clock::time_point> at = fake.refusals_of_first();
  // Waits of 40, 80, 160, 160, 160 ms between the refusals of batch 1.
  const milliseconds least[] = {milliseconds(40), milliseconds(80), milliseconds(160),
                                milliseconds(160), milliseconds(160)};
  for (size_t i = 0; i < 5; ++i) {
    const auto gap = std::chrono::duration_cast<milliseconds>(at[i + 1] - at[i]);
    EXPECT_GE(gap, least[i]) << i;
    if (i >= 3) {
      EXPECT_LT(gap, milliseconds(320)) << i;  // capped: never doubled past 160
    }
  }
  EXPECT_EQ(shipper.Flush(milliseconds(0)).message(),
            "20 batches still unacknowledged by " + fake.endpoint() + " after 0 ms");
  fake.SetUnauthorized(false);
  ASSERT_TRUE(shipper.Flush(milliseconds(10'000)).ok());
  ExpectAppliedOnce(fake, 1000, 20);
  const ShipperCounters c = shipper.counters();
  EXPECT_GE(c.unauthorized, 6u);
  EXPECT_EQ(c.acked, 20u);
  EXPECT_EQ(c.rejected + c.dropped, 0u);
}

TEST(Shipper, TakesANewIncarnationWhenTheAggregatorLostItsState) {
  FakeAggregator fake({.downtime = milliseconds(100), .lose_state = true});
  Shipper shipper(Fast(fake.endpoint()));
  const std::string first_id = shipper.agent_id();
  SendSeconds(&shipper, 1000, 20);
  ASSERT_TRUE(shipper.Flush(milliseconds(10'000)).ok());
  fake.RestartNow();
  std::this_thread::sleep_for(milliseconds(50));
  SendSeconds(&shipper, 1020, 20);  // sequences 21..40, which the new watermark 0 cannot take
  ASSERT_TRUE(shipper.Flush(milliseconds(10'000)).ok());
  ExpectAppliedOnce(fake, 1000, 40);
  EXPECT_EQ(shipper.counters().incarnations, 1u);
  EXPECT_NE(shipper.agent_id(), first_id);
  EXPECT_EQ(shipper.agent_id().substr(0, 6), "web-1/");
}

TEST(Shipper, DropsTheOldestBeyondMaxBytesAndFlushSaysHowManyAreLeft) {
  ShipperOptions o = Fast("tcp://127.0.0.1:1");  // nobody listens there
  Batch spooled = OneSecond(1);                  // as the spool holds it
  spooled.agent = o.agent_id;
  spooled.sequence = 1;
  o.max_bytes = 3 * EncodeBatch(spooled).size() + EncodeBatch(spooled).size() / 2;
  Shipper shipper(o);
  EXPECT_TRUE(shipper.Send(OneSecond(1)));
  EXPECT_TRUE(shipper.Send(OneSecond(2)));
  EXPECT_TRUE(shipper.Send(OneSecond(3)));
  EXPECT_TRUE(shipper.Send(OneSecond(4)));  // drops second 1, whose sequence is still owed
  EXPECT_EQ(shipper.counters().dropped, 1u);
  EXPECT_EQ(shipper.spool_counters().dropped_batches, 1u);
  EXPECT_EQ(shipper.spool_counters().batches, 3u);
  EXPECT_EQ(shipper.counters().sent, 0u);  // ZMQ_IMMEDIATE: nothing queued toward nobody
  const Status s = shipper.Flush(milliseconds(100));
  EXPECT_EQ(s.code(), Status::Code::kUnavailable);
  EXPECT_EQ(s.message(), "4 batches still unacknowledged by tcp://127.0.0.1:1 after 100 ms");
}

// A restart on the same spool directory keeps the agent id and sends what the last run left, in
// order; batches the full spool dropped go out empty under their sequences, so the aggregator's
// watermark passes them and every later batch applies exactly once.
TEST(Shipper, ARestartSendsWhatTheSpoolHeldAndDroppedBatchesGoOutEmpty) {
  const std::string dir = ::testing::TempDir() + "/shipper-spool-" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  SpoolOptions spool_options;
  spool_options.dir = dir;
  spool_options.max_bytes = 64 << 10;  // 4 KiB segments: drops take whole segments
  std::string first_id;
  uint64_t dropped = 0;
  {
    auto spool = Spool::Open(spool_options, "web-1");
    ASSERT_TRUE(spool.ok()) << spool.status().ToString();
    first_id = (*spool)->agent_id();
    Shipper offline(Fast("tcp://127.0.0.1:1"), std::move(*spool));  // nobody listens there
    for (int i = 0; i < 400; ++i) ASSERT_TRUE(offline.Send(OneSecond(1000 + i)));
    dropped = offline.spool_counters().dropped_batches;
    EXPECT_EQ(offline.counters().dropped, dropped);
  }
  ASSERT_GT(dropped, 0u);
  ASSERT_LT(dropped, 400u);
  FakeAggregator fake({});
  auto spool = Spool::Open(spool_options, "web-1");
  ASSERT_TRUE(spool.ok()) << spool.status().ToString();
  EXPECT_EQ((*spool)->counters().replayed, 400 - dropped);
  Shipper shipper(Fast(fake.endpoint()), std::move(*spool));
  EXPECT_EQ(shipper.agent_id(), first_id);
  ASSERT_TRUE(shipper.Send(OneSecond(1400)));  // sequence 401, after the replay
  ASSERT_TRUE(shipper.Flush(milliseconds(10'000)).ok());
  ExpectAppliedOnce(fake, static_cast<int64_t>(1000 + dropped), static_cast<int>(401 - dropped));
  EXPECT_EQ(shipper.spool_counters().batches, 0u);
  std::filesystem::remove_all(dir);
}

// The spool cannot be read for a while (failpoint spool.read, as when the agent is out of
// descriptors): nothing is sent empty or dropped; every batch goes once it can be read.
TEST(Shipper, ASpoolThatCannotBeReadForNowLosesNothing) {
#ifndef TRAILMAP_FAILPOINTS
  GTEST_SKIP() << "needs a build with -DTRAILMAP_FAILPOINTS=ON (scripts/test)";
#endif
  const std::string dir = ::testing::TempDir() + "/shipper-unreadable-" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  SpoolOptions spool_options;
  spool_options.dir = dir;
  auto spool = Spool::Open(spool_options, "web-1");
  ASSERT_TRUE(spool.ok()) << spool.status().ToString();
  FakeAggregator fake({});
  ASSERT_EQ(setenv("TRAILMAP_FAILPOINTS", "spool.read=error", 1), 0);
  Shipper shipper(Fast(fake.endpoint()), std::move(*spool));
  SendSeconds(&shipper, 1000, 50);
  std::this_thread::sleep_for(milliseconds(300));  // many send passes that cannot read
  EXPECT_EQ(shipper.counters().sent, 0u);
  ASSERT_EQ(unsetenv("TRAILMAP_FAILPOINTS"), 0);
  ASSERT_TRUE(shipper.Flush(milliseconds(10'000)).ok());
  ExpectAppliedOnce(fake, 1000, 50);
  EXPECT_EQ(shipper.counters().dropped, 0u);
  EXPECT_EQ(shipper.counters().acked, 50u);
  std::filesystem::remove_all(dir);
}

TEST(Shipper, NewAgentIdIsHostSlashSixteenHexDigits) {
  const std::string id = NewAgentId("db-7");
  ASSERT_EQ(id.size(), 5u + 16u);
  EXPECT_EQ(id.substr(0, 5), "db-7/");
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef", 5), std::string::npos);
  EXPECT_NE(NewAgentId("db-7"), id);
}

}  // namespace
}  // namespace trailmap

namespace trailmap {
namespace {

void SendStackSeconds(Shipper* shipper, int64_t first, int n) {
  for (int i = 0; i < n; ++i) {
    ASSERT_TRUE(shipper->Send(OneStackSecond(first + i)));
    if (i % 25 == 0) std::this_thread::sleep_for(milliseconds(5));
  }
}

TEST(ShipperStacks, SendsEachDefinitionOncePerConnection) {
  FakeAggregator fake({});
  Shipper shipper(Fast(fake.endpoint()));
  SendStackSeconds(&shipper, 1000, 100);
  ASSERT_TRUE(shipper.Flush(milliseconds(10'000)).ok());
  ExpectAppliedOnce(fake, 1000, 100);
  const ShipperCounters c = shipper.counters();
  EXPECT_EQ(c.stack_defs_sent, 10u);  // 10 distinct stacks
  EXPECT_EQ(c.frame_defs_sent, 11u);  // main and f0..f9
  EXPECT_EQ(fake.stack_defs_received(), 10u);
  EXPECT_EQ(c.need_dictionary, 0u);
}

TEST(ShipperStacks, ResendsDefinitionsWhenTheAggregatorForgetsThem) {
  FakeAggregator fake({.forget_dictionary_after = 40});
  Shipper shipper(Fast(fake.endpoint()));
  SendStackSeconds(&shipper, 1000, 100);
  ASSERT_TRUE(shipper.Flush(milliseconds(10'000)).ok());
  ExpectAppliedOnce(fake, 1000, 100);
  const ShipperCounters c = shipper.counters();
  EXPECT_GE(fake.need_dictionary_sent(), 1u);
  EXPECT_GE(c.need_dictionary, 1u);
  EXPECT_GE(c.stack_defs_sent, 20u);  // every stack defined again after the eviction
  EXPECT_EQ(c.acked + c.duplicates, 100u);
}

TEST(ShipperStacks, ResendsDefinitionsAfterTheAggregatorRestarts) {
  FakeAggregator fake({.drop_one_in = 13, .restart_after = 50, .downtime = milliseconds(200)});
  Shipper shipper(Fast(fake.endpoint()));
  SendStackSeconds(&shipper, 1000, 150);
  ASSERT_TRUE(shipper.Flush(milliseconds(20'000)).ok());
  ExpectAppliedOnce(fake, 1000, 150);
  EXPECT_GE(shipper.counters().reconnects, 1u);
  EXPECT_GE(shipper.counters().stack_defs_sent, 20u);
}

}  // namespace
}  // namespace trailmap

namespace trailmap {
namespace {

TEST(ShipperStacks, ANewIncarnationSendsEveryDefinitionAgain) {
  FakeAggregator fake({.downtime = milliseconds(100), .lose_state = true});
  Shipper shipper(Fast(fake.endpoint()));
  SendStackSeconds(&shipper, 1000, 20);
  ASSERT_TRUE(shipper.Flush(milliseconds(10'000)).ok());
  fake.RestartNow();
  std::this_thread::sleep_for(milliseconds(50));
  SendStackSeconds(&shipper, 1020, 20);  // renumbered under a new agent id: defined again
  ASSERT_TRUE(shipper.Flush(milliseconds(10'000)).ok());
  ExpectAppliedOnce(fake, 1000, 40);
  EXPECT_EQ(shipper.counters().incarnations, 1u);
  EXPECT_GE(shipper.counters().stack_defs_sent, 20u);
}

}  // namespace
}  // namespace trailmap
