#include "aggregator/server/aggregator_config.h"

#include <gtest/gtest.h>

namespace trailmap::aggregator {
namespace {

TEST(AggregatorConfigTest, Endpoints) {
  EXPECT_EQ(*NormalizeEndpoint("127.0.0.1:7400"), "tcp://127.0.0.1:7400");
  EXPECT_EQ(*NormalizeEndpoint("tcp://0.0.0.0:7401"), "tcp://0.0.0.0:7401");
  EXPECT_EQ(*NormalizeEndpoint("*:7400"), "tcp://*:7400");
  EXPECT_EQ(*NormalizeEndpoint("localhost:*"), "tcp://localhost:*");
  EXPECT_FALSE(NormalizeEndpoint("7400").ok());
  EXPECT_FALSE(NormalizeEndpoint("host:99999").ok());
  EXPECT_FALSE(NormalizeEndpoint("host:").ok());
  EXPECT_FALSE(NormalizeEndpoint("ipc:///tmp/x:1").ok());
  EXPECT_EQ(DefaultName("db-7", "tcp://0.0.0.0:7500"), "db-7:7500");
}

TEST(AggregatorConfigTest, ParsesEveryKey) {
  AggregatorConfig c;
  Status s = ParseAggregatorConfig(R"(
data = "/var/lib/trailmap"
ingest = "0.0.0.0:7500"
query = "tcp://0.0.0.0:7501"
name = "agg-1"
[store]
sync = false
max_successive_merges = 8
block_cache_mb = 128
write_buffer_mb = 16
warm_cache_seconds = 0
[retention]
hist = "36h"
hist_10s = "forever"
hist_60s = "365d"
scalar = "7d"
stacks = "1d"
stacks_60s = "forever"
agents = "3d"
[limits]
max_batch_bytes = 1048576
batches_per_second = 50
bytes_per_second = 1000000
values_per_second = 0
definitions_per_second = 7000
new_series_per_minute = 600
burst_seconds = 3
max_agents = 99
max_pending_bytes = 16777216
max_connections = 50
handshake_timeout = "2.5s"
[queries]
workers = 8
deadline = "2.5s"
max_keys = 1000000
max_groups = 50
max_cells = 2000
max_answer_bytes = 65536
)",
                                   "test.toml", &c);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(c.data_dir, "/var/lib/trailmap");
  EXPECT_EQ(c.ingest_endpoint, "tcp://0.0.0.0:7500");
  EXPECT_EQ(c.query_endpoint, "tcp://0.0.0.0:7501");
  EXPECT_EQ(c.name, "agg-1");
  EXPECT_FALSE(c.store.sync);
  EXPECT_EQ(c.store.max_successive_merges, 8u);
  EXPECT_EQ(c.store.block_cache_mb, 128u);
  EXPECT_EQ(c.store.write_buffer_mb, 16u);
  EXPECT_EQ(c.store.warm_cache_seconds, 0u);
  EXPECT_EQ(c.limits.max_bytes, 1048576u);
  EXPECT_EQ(c.agent_limits, (AgentLimits{50, 1e6, 0, 7000, 600, 3, 99}));
  EXPECT_EQ(c.max_pending_bytes, 16u << 20);
  EXPECT_EQ(c.max_connections, 50u);
  EXPECT_EQ(c.handshake_timeout, std::chrono::milliseconds(2500));
  EXPECT_EQ(c.query_workers, 8u);
  EXPECT_EQ(c.query_limits, (QueryLimits{2500, 1'000'000, 50, 2000, 65536}));
  EXPECT_EQ(c.store.retention_seconds[0], 36 * 3600);
  EXPECT_EQ(c.store.retention_seconds[1], 0);  // forever
  EXPECT_EQ(c.store.retention_seconds[2], 365 * 86400);
  EXPECT_EQ(c.store.scalar_retention_seconds, 7 * 86400);
  EXPECT_EQ(c.store.stacks_retention_seconds, 86400);
  EXPECT_EQ(c.store.stacks_60s_retention_seconds, 0);
  EXPECT_EQ(c.store.agent_idle_seconds, 3 * 86400);
  EXPECT_EQ(FormatRetention(0), "forever");
  EXPECT_EQ(FormatRetention(2 * 86400), "2d");
  EXPECT_EQ(FormatRetention(5400), "90m");
  EXPECT_EQ(FormatRetention(90), "90s");
  EXPECT_TRUE(ValidateAggregatorConfig(c).ok());
}

// Found by fuzz/aggregator_config_fuzz: "3363636.365h" read as 12109090914 s (384 years), which
// formats as "12109090914s", which read back as 12109090913 s (the nanoseconds pass 2^53 and the
// double rounds them down). A retention is now at most 100 years, where every one formats back.
TEST(AggregatorConfigTest, RetentionIsAtMostAHundredYearsAndFormatsBack) {
  Result<int64_t> r = ParseRetention("3363636.365h");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "\"3363636.365h\": at most 36500d (100 years), or forever to keep everything");
  EXPECT_FALSE(ParseRetention("12109090914s").ok());
  EXPECT_FALSE(ParseRetention("36500.001d").ok());
  r = ParseRetention("36500d");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, kMaxRetentionSeconds);
  for (const char* text : {"36500d", "3153599999s", "876000h", "52559999m", "1s", "1.5s"}) {
    Result<int64_t> seconds = ParseRetention(text);
    ASSERT_TRUE(seconds.ok()) << text << ": " << seconds.status().ToString();
    Result<int64_t> back = ParseRetention(FormatRetention(*seconds));
    ASSERT_TRUE(back.ok()) << text;
    EXPECT_EQ(*back, *seconds) << text << " -> " << FormatRetention(*seconds);
  }
}

TEST(AggregatorConfigTest, ShippedExampleParses) {
  AggregatorConfig c;
  Status s =
      LoadAggregatorConfig(std::string(TRAILMAP_SOURCE_DIR) + "/configs/aggregator.toml", &c);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(c.data_dir, "/var/lib/trailmap/aggregator");
  EXPECT_EQ(c.ingest_endpoint, "tcp://127.0.0.1:7400");
  EXPECT_EQ(c.query_endpoint, "tcp://127.0.0.1:7401");
  EXPECT_EQ(c.name, "");
  EXPECT_TRUE(c.store.sync);
  EXPECT_EQ(c.limits.max_bytes, 32u << 20);
  EXPECT_EQ(c.agent_limits, AgentLimits{});  // the file says the defaults
  EXPECT_EQ(c.max_pending_bytes, AggregatorConfig{}.max_pending_bytes);
  EXPECT_EQ(c.max_connections, 10'000u);
  EXPECT_EQ(c.handshake_timeout, std::chrono::seconds(10));
  EXPECT_EQ(c.store.retention_seconds, kDefaultRetention);  // the file says the defaults
  EXPECT_EQ(c.store.scalar_retention_seconds, kDefaultScalarRetention);
  EXPECT_EQ(c.store.stacks_retention_seconds, kDefaultStacksRetention);
  EXPECT_EQ(c.store.stacks_60s_retention_seconds, kDefaultStacks60sRetention);
  EXPECT_EQ(c.store.agent_idle_seconds, kDefaultAgentIdle);
}

TEST(AggregatorConfigTest, SelfMetricsHostAndSwitch) {
  AggregatorConfig c;
  EXPECT_TRUE(c.self_metrics);
  ASSERT_TRUE(ParseAggregatorConfig("host = \"db-7\"\nself_metrics = false\n", "a.toml", &c).ok());
  EXPECT_EQ(c.host, "db-7");
  EXPECT_FALSE(c.self_metrics);
  EXPECT_EQ(ParseAggregatorConfig("self_metrics = 1\n", "a.toml", &c).message(),
            "a.toml: self_metrics: expected true or false");
}

// The pre-aggregates' two switches, as --no-aggregates and --no-backfill (aggregates.h).
TEST(AggregatorConfigTest, AggregatesAndBackfillSwitches) {
  AggregatorConfig c;
  EXPECT_TRUE(c.store.aggregates.enabled);
  EXPECT_TRUE(c.store.aggregates.backfill);
  ASSERT_TRUE(ParseAggregatorConfig("backfill = false\n", "a.toml", &c).ok());
  EXPECT_TRUE(c.store.aggregates.enabled);
  EXPECT_FALSE(c.store.aggregates.backfill);
  ASSERT_TRUE(ParseAggregatorConfig("aggregates = false\n", "a.toml", &c).ok());
  EXPECT_FALSE(c.store.aggregates.enabled);
  EXPECT_EQ(ParseAggregatorConfig("backfill = \"no\"\n", "a.toml", &c).message(),
            "a.toml: backfill: expected true or false");
  EXPECT_EQ(ParseAggregatorConfig("aggregates = 0\n", "a.toml", &c).message(),
            "a.toml: aggregates: expected true or false");
}

TEST(AggregatorConfigTest, PrometheusMetricsAddress) {
  AggregatorConfig c;
  c.data_dir = "/x";
  EXPECT_EQ(c.metrics, "off");
  ASSERT_TRUE(ParseAggregatorConfig("metrics = \"127.0.0.1:9126\"\n", "a.toml", &c).ok());
  EXPECT_EQ(c.metrics, "127.0.0.1:9126");
  EXPECT_TRUE(ValidateAggregatorConfig(c).ok());
  c.metrics = "9126";
  EXPECT_EQ(ValidateAggregatorConfig(c).message(),
            "metrics (--metrics): '9126' is not HOST:PORT (or \"off\")");
}

TEST(AggregatorConfigTest, ErrorsNameTheKey) {
  AggregatorConfig c;
  Status s = ParseAggregatorConfig("dta = \"/x\"\n", "a.toml", &c);
  EXPECT_EQ(s.message(), "a.toml: dta: unknown key");
  s = ParseAggregatorConfig("[store]\nsync = 1\n", "a.toml", &c);
  EXPECT_EQ(s.message(), "a.toml: store.sync: expected true or false");
  s = ParseAggregatorConfig("ingest = \"nowhere\"\n", "a.toml", &c);
  EXPECT_NE(s.message().find("a.toml: ingest: "), std::string::npos) << s.message();
  s = ParseAggregatorConfig("[store]\nmax_successive_merges = 0\n", "a.toml", &c);
  EXPECT_EQ(s.message(), "a.toml: max_successive_merges: must be between 1 and 1000");
  s = ParseAggregatorConfig("data = \n", "a.toml", &c);
  EXPECT_NE(s.message().find("a.toml:1"), std::string::npos) << s.message();
  EXPECT_FALSE(ValidateAggregatorConfig(AggregatorConfig{}).ok());  // no data directory
  s = ParseAggregatorConfig("[retention]\nhist_30s = \"1d\"\n", "a.toml", &c);
  EXPECT_EQ(s.message(), "a.toml: retention.hist_30s: unknown key");
  s = ParseAggregatorConfig("[retention]\nhist = \"2 days\"\n", "a.toml", &c);
  EXPECT_EQ(s.message(),
            "a.toml: retention.hist: \"2 days\": expected a duration such as 36h, 14d or 90d, or "
            "forever");
  s = ParseAggregatorConfig("[retention]\nhist_60s = 90\n", "a.toml", &c);
  EXPECT_EQ(s.message(), "a.toml: retention.hist_60s: expected a string such as \"14d\"");
  s = ParseAggregatorConfig("[retention]\nhist = \"10ms\"\n", "a.toml", &c);
  EXPECT_EQ(s.message(),
            "a.toml: retention.hist: \"10ms\": at least 1s (or forever to keep everything)");
  s = ParseAggregatorConfig("[queries]\nworkers = 0\n", "a.toml", &c);
  EXPECT_EQ(s.message(), "a.toml: workers: must be between 1 and 256");
  s = ParseAggregatorConfig("[queries]\ndeadline = 30\n", "a.toml", &c);
  EXPECT_EQ(s.message(),
            "a.toml: queries.deadline: expected a duration of at least 1ms such as \"30s\"");
  for (const char* bad : {"\"50ms\"", "\"11m\"", "10", "\"soon\""}) {
    s = ParseAggregatorConfig(std::string("[limits]\nhandshake_timeout = ") + bad + "\n", "a.toml",
                              &c);
    EXPECT_EQ(s.message(),
              "a.toml: limits.handshake_timeout: expected a duration from 100ms to 10m such as "
              "\"10s\"")
        << bad;
  }
  s = ParseAggregatorConfig("[queries]\nmax_rows = 3\n", "a.toml", &c);
  EXPECT_EQ(s.message(), "a.toml: queries.max_rows: unknown key");
}

}  // namespace
}  // namespace trailmap::aggregator
