#include "agent/prom_write_config.h"

#include <gtest/gtest.h>

#include "agent/agent_config.h"

namespace trailmap {
namespace {

TEST(PromWriteConfig, TheTableSetsTheReceiverAndIsValidated) {
  AgentConfig c;
  ASSERT_TRUE(
      ParseAgentConfig("[prometheus]\nlisten = \"0.0.0.0:9201\"\nhost_label = \"node\"\n"
                       "writers = \"/etc/w.txt\"\nmax_hosts = 50\nmax_backlog_batches = 7\n",
                       "a.toml", &c)
          .ok());
  EXPECT_EQ(c.prom_write.listen, "0.0.0.0:9201");
  EXPECT_EQ(c.prom_write.host_label, "node");
  EXPECT_EQ(c.prom_write.writers, "/etc/w.txt");
  EXPECT_EQ(c.prom_write.max_hosts, 50);
  EXPECT_EQ(c.prom_write.max_backlog_batches, 7);
  EXPECT_TRUE(ValidatePromWriteConfig(c.prom_write).ok());

  AgentConfig bad;
  EXPECT_EQ(ParseAgentConfig("[prometheus]\nlisten = 9201\n", "a.toml", &bad).message(),
            "config a.toml: prometheus.listen must be a string");
  EXPECT_EQ(ParseAgentConfig("[prometheus]\nport = 1\n", "a.toml", &bad).message(),
            "config a.toml: prometheus.port: unknown key (known: listen, host_label, writers, "
            "max_hosts, max_series, max_backlog_batches, max_body_bytes, max_uncompressed_bytes)");
  PromWriteConfig open;
  open.listen = "0.0.0.0:9201";
  EXPECT_EQ(ValidatePromWriteConfig(open).message(),
            "prometheus.listen 0.0.0.0:9201 is beyond loopback: give prometheus.writers, a file of "
            "bearer tokens and the hosts each may write, or anyone who reaches the port writes "
            "any host");
  open.listen = "127.0.0.1:9201";
  EXPECT_TRUE(ValidatePromWriteConfig(open).ok());
  open.max_hosts = 0;
  EXPECT_EQ(ValidatePromWriteConfig(open).message(),
            "prometheus.max_hosts 0 is outside 1..1000000");
  EXPECT_TRUE(ValidatePromWriteConfig(PromWriteConfig{}).ok());  // off
}

}  // namespace
}  // namespace trailmap
