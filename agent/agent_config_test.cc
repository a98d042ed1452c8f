#include "agent/agent_config.h"

#include <gtest/gtest.h>

#include "core/shard.h"

namespace trailmap {
namespace {

TEST(AgentConfig, ParsesEveryKey) {
  AgentConfig c;
  const Status s = ParseAgentConfig(R"(
host = "web-1"
aggregators = ["10.0.0.1:7400", "10.0.0.2:7400"]
statsd = "off"
flush_ms = 500
max_series = 50
max_queued = 100
window = 8
ack_timeout_ms = 1000
[labels]
role = "web"
zone = "b"
)",
                                    "agent.toml", &c);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(c.host, "web-1");
  EXPECT_EQ(c.aggregators, (std::vector<std::string>{"10.0.0.1:7400", "10.0.0.2:7400"}));
  EXPECT_EQ(c.statsd, "off");
  EXPECT_EQ(c.flush_ms, 500);
  EXPECT_EQ(c.max_series, 50);
  EXPECT_EQ(c.window, 8);
  EXPECT_EQ(c.labels, (FieldSet{{"role", "web"}, {"zone", "b"}}));
  EXPECT_TRUE(ValidateAgentConfig(c).ok());
}

TEST(AgentConfig, ErrorsNameTheKeyAndWhatToFix) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"flush_ms = \"fast\"", "config a.toml: flush_ms (--flush-ms) must be an integer"},
      {"colour = 1", "config a.toml: unknown key 'colour' (known: host, labels, aggregators, "},
      {"aggregators = [1]", "config a.toml: aggregators (--aggregators) must be an array"},
      {"[labels]\nrole = 3", "config a.toml: labels.role must be a string"},
      {"[labels]\n\"r o\" = \"x\"", "config a.toml: label 'r o=x': field key 'r o' has"},
      {"host = ", "config a.toml: line 1: "},
  };
  for (const auto& [text, want] : cases) {
    AgentConfig c;
    const Status s = ParseAgentConfig(text, "a.toml", &c);
    ASSERT_FALSE(s.ok()) << text;
    EXPECT_EQ(s.message().substr(0, want.size()), want) << s.message();
  }
}

TEST(AgentConfig, ValidationSaysWhichKeyIsWrong) {
  auto check = [](void (*spoil)(AgentConfig*)) {
    AgentConfig c;
    c.host = "web-1";
    spoil(&c);
    return ValidateAgentConfig(c).message();
  };
  EXPECT_EQ(check([](AgentConfig* c) { c->flush_ms = 5; }),
            "flush_ms (--flush-ms) must be from 10 to 60000, got 5");
  EXPECT_EQ(check([](AgentConfig* c) { c->max_series = 0; }),
            "max_series (--max-series) must be from 1 to 1000000, got 0");
  EXPECT_EQ(check([](AgentConfig* c) { c->statsd = "8125"; }),
            "statsd (--statsd): '8125' is not HOST:PORT (or \"off\")");
  EXPECT_EQ(check([](AgentConfig* c) { c->aggregators = {"a:99999"}; }),
            "aggregators (--aggregators): 'a:99999': port must be 1..65535");
  EXPECT_EQ(check([](AgentConfig* c) { c->aggregators.clear(); }),
            "aggregators (--aggregators) must name at least one HOST:PORT");
  EXPECT_EQ(check([](AgentConfig* c) { c->host = "web 1"; }),
            "host (--host) 'web 1' must be 1..200 printable bytes without spaces or ','");
  EXPECT_EQ(check([](AgentConfig* c) {}), "");
}

TEST(AgentConfig, HostPortLabelsAndTheChosenShard) {
  EXPECT_EQ(ParseHostPort("[::1]:7400")->host, "::1");
  EXPECT_EQ(ParseHostPort("db-1:7400")->port, 7400);
  EXPECT_FALSE(ParseHostPort(":7400").ok());
  EXPECT_FALSE(ParseHostPort("::1:7400").ok());

  FieldSet labels;
  ASSERT_TRUE(AddLabel("role=web", &labels).ok());
  ASSERT_TRUE(AddLabel("role=db", &labels).ok());  // a flag overrides the file
  EXPECT_EQ(labels, (FieldSet{{"role", "db"}}));
  EXPECT_EQ(AddLabel("role", &labels).message(), "label 'role' is not KEY=VALUE");

  AgentConfig c;
  c.host = "web-1";
  c.aggregators = {"a:1", "b:2", "c:3"};
  EXPECT_EQ(IngestEndpoint(c), "tcp://" + c.aggregators[ShardIndex("web-1", 3)]);
  c.aggregators = {"[::1]:7400"};
  EXPECT_EQ(IngestEndpoint(c), "tcp://[::1]:7400");
}

}  // namespace
}  // namespace trailmap
