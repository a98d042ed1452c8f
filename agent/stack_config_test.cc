// [perf] / [folded] config sections and their flags (agent/agent_config.h, agent/stack_flags.h).
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>

#include "agent/agent_config.h"
#include "agent/stack_flags.h"

namespace trailmap {
namespace {

TEST(StackConfig, SectionsFillTheSourceOptions) {
  AgentConfig c;
  c.host = "h";
  EXPECT_FALSE(c.perf_enabled);
  ASSERT_TRUE(ParseAgentConfig(R"(
[perf]
enabled = true
frequency = 49
window_ms = 5000
callgraph = "dwarf"
pid = false
offsets = false
perf_path = "/usr/bin/perf"

[folded]
path = "/var/run/app.folded"
follow = true
socket = "/run/trailmap-stacks.sock"
metric = "app.cpu"
fields = { service = "api" }
)",
                               "t.toml", &c)
                  .ok());
  EXPECT_TRUE(c.perf_enabled);
  EXPECT_EQ(c.perf.frequency, 49);
  EXPECT_EQ(c.perf.window_ms, 5000);
  EXPECT_EQ(c.perf.callgraph, "dwarf");
  EXPECT_FALSE(c.perf.pid_field);
  EXPECT_FALSE(c.perf.offsets);
  EXPECT_EQ(c.perf.perf_path, "/usr/bin/perf");
  EXPECT_EQ(c.perf.metric, "cpu.stacks");
  EXPECT_EQ(c.folded.path, "/var/run/app.folded");
  EXPECT_TRUE(c.folded.follow);
  EXPECT_EQ(c.folded.socket, "/run/trailmap-stacks.sock");
  EXPECT_EQ(c.folded.metric, "app.cpu");
  EXPECT_EQ(c.folded.fields, (FieldSet{{"service", "api"}}));
  EXPECT_TRUE(ValidateAgentConfig(c).ok()) << ValidateAgentConfig(c).message();
}

TEST(StackConfig, ErrorsNameTheKey) {
  const std::pair<const char*, const char*> cases[] = {
      {"[perf]\nfrequency = 0\n",
       "config t.toml: perf.frequency (--perf-frequency) must be from 1 to 10000 Hz, got 0"},
      {"[perf]\nenabled = 1\n", "config t.toml: perf.enabled must be true or false"},
      {"[perf]\nrate = 1\n",
       "config t.toml: unknown key 'perf.rate' (known: enabled, frequency, window_ms, callgraph, "
       "pid, offsets, perf_path, metric)"},
      {"[folded]\nfields = { \"bad key\" = \"x\" }\n", nullptr},
      {"perf = 1\n", "config t.toml: perf (--perf) must be a table ([perf] / [folded])"},
  };
  for (const auto& [toml, want] : cases) {
    AgentConfig c;
    const Status s = ParseAgentConfig(toml, "t.toml", &c);
    EXPECT_FALSE(s.ok()) << toml;
    if (want != nullptr) {
      EXPECT_EQ(s.message(), want);
    } else {
      EXPECT_NE(s.message().find("folded.fields"), std::string::npos) << s.message();
    }
  }
  AgentConfig c;
  c.host = "h";
  c.perf_enabled = true;
  c.perf.callgraph = "stack";
  EXPECT_EQ(ValidateAgentConfig(c).message(),
            "[perf] (--perf-*): perf callgraph must be fp, dwarf or lbr, got 'stack'");
  c.perf_enabled = false;
  EXPECT_TRUE(ValidateAgentConfig(c).ok()) << "a disabled perf source is not checked";
  c.folded.socket = std::string(200, 's');
  EXPECT_NE(ValidateAgentConfig(c).message().find("[folded] (--folded-*): folded socket path is "
                                                  "longer than 107 bytes"),
            std::string::npos);
}

TEST(StackConfig, FlagsOverrideTheFile) {
  AgentConfig c;
  c.host = "h";
  ASSERT_TRUE(
      ParseAgentConfig("[perf]\nfrequency = 49\n[folded]\nmetric = \"x.y\"\n", "t", &c).ok());
  CLI::App app;
  StackSourceFlags flags;
  AddStackSourceFlags(&app, &flags);
  const char* argv[] = {
      "agent",         "--perf",          "--perf-frequency", "199",
      "--perf-no-pid", "--folded-socket", "/tmp/s.sock",      "--folded-field",
      "team=core",     "--folded-field",  "service=a",        "--perf-no-offsets"};
  app.parse(static_cast<int>(std::size(argv)), const_cast<char**>(argv));
  ASSERT_TRUE(ApplyStackSourceFlags(app, flags, &c).ok());
  EXPECT_TRUE(c.perf_enabled);
  EXPECT_EQ(c.perf.frequency, 199);
  EXPECT_FALSE(c.perf.pid_field);
  EXPECT_FALSE(c.perf.offsets);
  EXPECT_EQ(c.perf.window_ms, 10000) << "not given: the default stays";
  EXPECT_EQ(c.folded.socket, "/tmp/s.sock");
  EXPECT_EQ(c.folded.metric, "x.y") << "not given: the file's value stays";
  EXPECT_EQ(c.folded.fields, (FieldSet{{"team", "core"}, {"service", "a"}}));
  EXPECT_TRUE(ValidateAgentConfig(c).ok());

  CLI::App bad;
  StackSourceFlags bad_flags;
  AddStackSourceFlags(&bad, &bad_flags);
  const char* bad_argv[] = {"agent", "--perf-frequency", "0"};
  bad.parse(3, const_cast<char**>(bad_argv));
  EXPECT_EQ(ApplyStackSourceFlags(bad, bad_flags, &c).message(),
            "--perf-frequency must be from 1 to 10000 Hz, got 0");
  // The help text names the flags in their own group.
  EXPECT_NE(app.help().find("Stack sources (flame graphs)"), std::string::npos);
  EXPECT_NE(app.help().find("--folded-socket"), std::string::npos);
}

}  // namespace
}  // namespace trailmap
