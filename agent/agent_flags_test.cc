#include "agent/agent_flags.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <vector>

namespace trailmap {
namespace {

// trailmap-agent's command line over `config`, as its main() reads it.
Status Apply(std::vector<std::string> args, AgentConfig* config) {
  CLI::App app;
  AgentFlags flags;
  AddAgentFlags(&app, &flags);
  std::vector<const char*> argv{"trailmap-agent"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  app.parse(static_cast<int>(argv.size()), const_cast<char**>(argv.data()));
  return ApplyAgentFlags(app, flags, config);
}

class AgentFlagsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("TRAILMAP_KEY");
    unsetenv("TRAILMAP_SERVER_KEY");
    file_ = ::testing::TempDir() + "/agent_flags_test.toml";
    std::ofstream(file_) << "host = \"from-file\"\nstatsd = \"127.0.0.1:9125\"\n"
                            "aggregators = [\"10.0.0.1:7400\"]\nflush_ms = 500\n";
  }
  void TearDown() override {
    unsetenv("TRAILMAP_KEY");
    unsetenv("TRAILMAP_SERVER_KEY");
  }
  std::string file_;
};

TEST_F(AgentFlagsTest, AFlagGivenWinsOverTheFileAndOneNotGivenLeavesIt) {
  AgentConfig config;
  const Status applied =
      Apply({"--config", file_, "--host", "web-1", "--label", "role=web", "--aggregators",
             "a:7400,,b:7401", "--window", "8", "--no-proc", "--insecure-plaintext"},
            &config);
  ASSERT_TRUE(applied.ok()) << applied.ToString();
  EXPECT_EQ(config.host, "web-1");
  EXPECT_EQ(config.statsd, "127.0.0.1:9125");  // the file's
  EXPECT_EQ(config.flush_ms, 500);             // the file's
  EXPECT_EQ(config.window, 8);
  EXPECT_EQ(config.aggregators, (std::vector<std::string>{"a:7400", "b:7401"}));
  EXPECT_FALSE(config.proc.enabled);
  EXPECT_TRUE(config.insecure_plaintext);
  ASSERT_EQ(config.labels.size(), 1u);
  // No --host and none in a file: this machine's name.
  AgentConfig plain;
  ASSERT_TRUE(Apply({"--insecure-plaintext"}, &plain).ok());
  EXPECT_EQ(plain.host, DefaultHostName());
}

TEST_F(AgentFlagsTest, KeysComeFromFlagsThenTheFileThenTheEnvironment) {
  setenv("TRAILMAP_KEY", "env.key", 1);
  setenv("TRAILMAP_SERVER_KEY", "env.pub", 1);
  AgentConfig config;
  Apply({"--key", "flag.key"}, &config);  // the files are not read here: Run does
  EXPECT_EQ(config.key, "flag.key");
  EXPECT_EQ(config.server_key, "env.pub");
  AgentConfig plaintext;
  Apply({"--insecure-plaintext"}, &plaintext);
  EXPECT_EQ(plaintext.key, "");
  EXPECT_EQ(plaintext.server_key, "");
}

TEST_F(AgentFlagsTest, RefusalsNameTheFlag) {
  AgentConfig config;
  EXPECT_EQ(Apply({"--aggregators", "a", "--cluster", "c.toml"}, &config).message(),
            "give --cluster FILE or --aggregators LIST, not both (--aggregators is the short form "
            "of a one-zone cluster with R=1)");
  AgentConfig label;
  EXPECT_EQ(Apply({"--label", "novalue"}, &label).message().rfind("--label: ", 0), 0u);
  AgentConfig missing;
  EXPECT_FALSE(Apply({"--config", file_ + ".none"}, &missing).ok());
  AgentConfig exec;
  EXPECT_FALSE(Apply({"--exec", "command=true"}, &exec).ok());  // no metric=
  CLI::App app;
  AgentFlags flags;
  AddAgentFlags(&app, &flags);
  const char* unknown[] = {"trailmap-agent", "--no-such-flag"};
  EXPECT_THROW(app.parse(2, const_cast<char**>(unknown)), CLI::ParseError);
}

}  // namespace
}  // namespace trailmap
