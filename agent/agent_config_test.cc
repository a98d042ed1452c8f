#include "agent/agent_config.h"

#include <gtest/gtest.h>

#include "core/cluster.h"

namespace trailmap {
namespace {

TEST(AgentConfig, ParsesEveryKey) {
  AgentConfig c;
  const Status s = ParseAgentConfig(R"(
host = "web-1"
aggregators = ["10.0.0.1:7400", "10.0.0.2:7400"]
statsd = "off"
otlp = "127.0.0.1:4319"
flush_ms = 500
max_series = 50
window = 8
ack_timeout_ms = 1000
[spool]
dir = "/tmp/spool"
max_bytes = 2097152
fsync = "interval"
fsync_ms = 200
[labels]
role = "web"
zone = "b"
)",
                                    "agent.toml", &c);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(c.host, "web-1");
  EXPECT_EQ(c.aggregators, (std::vector<std::string>{"10.0.0.1:7400", "10.0.0.2:7400"}));
  EXPECT_EQ(c.statsd, "off");
  EXPECT_EQ(c.otlp, "127.0.0.1:4319");
  EXPECT_EQ(c.flush_ms, 500);
  EXPECT_EQ(c.max_series, 50);
  EXPECT_EQ(c.window, 8);
  EXPECT_EQ(c.spool.dir, "/tmp/spool");
  EXPECT_EQ(c.spool.max_bytes, 2097152);
  EXPECT_EQ(c.spool.fsync, "interval");
  EXPECT_EQ(c.spool.fsync_ms, 200);
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

// Which OTLP resource attributes become fields is a config key ([otlp] resource_fields,
// the whole list; unset = the converter's default) and the [otlp] table's listen is `otlp`.
TEST(AgentConfig, OtlpTableNamesResourceFields) {
  AgentConfig c;
  ASSERT_TRUE(ParseAgentConfig("host = \"web-1\"\n[otlp]\nlisten = \"127.0.0.1:4319\"\n"
                               "resource_fields = [\"service.name\", \"k8s.pod.name\"]\n",
                               "a.toml", &c)
                  .ok());
  EXPECT_EQ(c.otlp, "127.0.0.1:4319");
  ASSERT_TRUE(c.otlp_resource_fields.has_value());
  EXPECT_EQ(*c.otlp_resource_fields, (std::vector<std::string>{"service.name", "k8s.pod.name"}));
  EXPECT_TRUE(ValidateAgentConfig(c).ok());
  AgentConfig none;
  ASSERT_TRUE(ParseAgentConfig("[otlp]\nresource_fields = []\n", "a.toml", &none).ok());
  EXPECT_EQ(none.otlp_resource_fields, std::vector<std::string>{});
  EXPECT_FALSE(AgentConfig{}.otlp_resource_fields.has_value());
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[otlp]\nresource_fields = \"k8s.pod.name\"",
       "config a.toml: otlp.resource_fields (--otlp-resource-fields) must be an array of resource "
       "attribute names, e.g. [\"service.name\", \"k8s.pod.name\"]"},
      {"[otlp]\nresource_fields = [\"a\", 2]",
       "config a.toml: otlp.resource_fields (--otlp-resource-fields) must be an array"},
      {"[otlp]\nlisten = 4318", "config a.toml: otlp.listen (--otlp) must be a string"},
      {"[otlp]\nresource = []",
       "config a.toml: otlp.resource: unknown key (known: listen, resource_fields)"},
  };
  for (const auto& [text, want] : cases) {
    AgentConfig bad;
    const Status s = ParseAgentConfig(text, "a.toml", &bad);
    ASSERT_FALSE(s.ok()) << text;
    EXPECT_EQ(s.message().substr(0, want.size()), want) << s.message();
  }
  c.otlp_resource_fields = {"k8s pod"};
  EXPECT_EQ(ValidateAgentConfig(c).message(),
            "otlp.resource_fields (--otlp-resource-fields): field key 'k8s pod' has a character "
            "outside [A-Za-z0-9_.-] (name resource attributes to keep)");
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
  EXPECT_EQ(check([](AgentConfig* c) { c->otlp = "4318"; }),
            "otlp (--otlp): '4318' is not HOST:PORT (or \"off\")");
  EXPECT_EQ(check([](AgentConfig* c) { c->aggregators = {"a:99999"}; }),
            "aggregators (--aggregators): 'a:99999': port must be 1..65535");
  EXPECT_EQ(check([](AgentConfig* c) { c->aggregators.clear(); }),
            "aggregators (--aggregators) must name at least one HOST:PORT");
  EXPECT_EQ(check([](AgentConfig* c) { c->host = "web 1"; }),
            "host (--host) 'web 1' must be 1..200 printable bytes without spaces or ','");
  EXPECT_EQ(check([](AgentConfig* c) { c->spool.fsync = "sometimes"; }),
            "spool.fsync (--spool-fsync): spool fsync must be always, interval or never, got "
            "'sometimes'");
  EXPECT_EQ(check([](AgentConfig* c) { c->spool.max_bytes = 1000; }),
            "spool.max_bytes (--spool-bytes) must be from 1 MiB to 1 TiB, got 1000");
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
  EXPECT_EQ(
      IngestEndpoint(c),
      "tcp://" + c.aggregators[RendezvousIndex("web-1", {"tcp://a:1", "tcp://b:2", "tcp://c:3"})]);
  c.aggregators = {"[::1]:7400"};
  EXPECT_EQ(IngestEndpoint(c), "tcp://[::1]:7400");
}

TEST(AgentConfig, AClusterFileOrTheShortFormNotBoth) {
  AgentConfig c;
  ASSERT_TRUE(
      ParseAgentConfig("cluster = \"/etc/trailmap/cluster.toml\"\n", "agent.toml", &c).ok());
  EXPECT_EQ(c.cluster, "/etc/trailmap/cluster.toml");
  EXPECT_EQ(ParseAgentConfig("cluster = \"c.toml\"\naggregators = [\"a:1\"]\n", "agent.toml", &c)
                .message(),
            "config agent.toml: give cluster = \"FILE\" or aggregators = [...], not both "
            "(aggregators is the short form of a one-zone cluster)");
  EXPECT_EQ(ParseAgentConfig("cluster = 3\n", "agent.toml", &c).message(),
            "config agent.toml: cluster (--cluster) must be a string (the cluster file's path)");
  c.cluster = "/nonexistent/cluster.toml";
  EXPECT_FALSE(AgentCluster(c).ok());

  // The short form: one owner, the same one IngestEndpoint names.
  AgentConfig s;
  s.host = "web-1";
  s.aggregators = {"a:1", "b:2", "c:3", "[::1]:7400"};
  Result<Cluster> cluster = AgentCluster(s);
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  EXPECT_EQ(cluster->replication, 1u);
  const std::vector<size_t> owners = cluster->Owners("web-1", 0);
  ASSERT_EQ(owners.size(), 1u);
  EXPECT_EQ(cluster->members[owners[0]].ingest, IngestEndpoint(s));
}

TEST(AgentConfig, ProcAndExecSections) {
  AgentConfig c;
  c.host = "h";
  const Status s = ParseAgentConfig(R"(
[proc]
enabled = false
interval_ms = 5000
root = "/tmp/fixture/proc"
per_process = false
max_process_names = 20

[[exec]]
metric = "syscall.latency"
command = ["bpftrace", "-e", "tracepoint:raw_syscalls:sys_exit { }"]
fields = { source = "bpf" }

[[exec]]
metric = "queue.depth"
kind = "scalar"
unit = "items"
description = "jobs waiting"
command = "while sleep 1; do wc -l < /var/spool/q; done"
restart_min_ms = 500
restart_max_ms = 5000
)",
                                    "agent.toml", &c);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_FALSE(c.proc.enabled);
  EXPECT_EQ(c.proc.interval_ms, 5000);
  EXPECT_EQ(c.proc.root, "/tmp/fixture/proc");
  EXPECT_FALSE(c.proc.per_process);
  EXPECT_EQ(c.proc.max_process_names, 20);
  ASSERT_EQ(c.exec.size(), 2u);
  EXPECT_EQ(c.exec[0].metric, "syscall.latency");
  EXPECT_EQ(c.exec[0].kind, MetricKind::kLatency);
  EXPECT_EQ(c.exec[0].unit, "ns");
  EXPECT_EQ(c.exec[0].argv.size(), 3u);
  EXPECT_EQ(c.exec[0].shell, "");
  EXPECT_EQ(c.exec[0].fields, (FieldSet{{"source", "bpf"}}));
  EXPECT_EQ(c.exec[1].kind, MetricKind::kScalar);
  EXPECT_EQ(c.exec[1].unit, "items");
  EXPECT_EQ(c.exec[1].description, "jobs waiting");
  EXPECT_EQ(c.exec[1].restart_min, std::chrono::milliseconds(500));
  EXPECT_EQ(c.exec[1].shell, "while sleep 1; do wc -l < /var/spool/q; done");
  EXPECT_TRUE(ValidateAgentConfig(c).ok()) << ValidateAgentConfig(c).ToString();
}

TEST(AgentConfig, ProcAndExecErrors) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[proc]\ncolour = 1", "config a.toml: unknown key 'proc.colour' (known: enabled, "},
      {"[proc]\nenabled = 1", "config a.toml: proc.enabled must be true or false"},
      {"[[exec]]\nmetric = \"m\"\nkind = \"histogram\"\ncommand = \"x\"",
       "config a.toml: exec[0].kind: kind 'histogram' is not latency, size or scalar"},
      {"[[exec]]\nmetric = \"m\"\ncommand = 5",
       "config a.toml: exec[0].command must be a string (run by /bin/sh -c) or a non-empty "},
      {"[[exec]]\nmetric = \"m\"\ncmd = \"x\"", "config a.toml: exec[0].unknown key 'cmd'"},
  };
  for (const auto& [text, want] : cases) {
    AgentConfig c;
    const Status s = ParseAgentConfig(text, "a.toml", &c);
    EXPECT_EQ(s.message().substr(0, want.size()), want) << text;
  }
  AgentConfig c;
  c.host = "h";
  c.proc.interval_ms = 10;
  EXPECT_EQ(ValidateAgentConfig(c).message(),
            "proc.interval_ms must be from 1000 to 3600000, got 10");
  c.proc.interval_ms = 1000;
  ASSERT_TRUE(
      ParseAgentConfig("[[exec]]\nmetric = \"q\"\nkind = \"scalar\"\ncommand = \"x\"", "a.toml", &c)
          .ok());
  EXPECT_EQ(
      ValidateAgentConfig(c).message(),
      "exec[0] (q): a scalar metric needs a unit (unit = \"%\" in [[exec]], unit=% in --exec)");
}

TEST(AgentConfig, ExecFlag) {
  Result<ExecSpec> spec =
      ParseExecFlag("metric=disk.io,kind=latency,field.dev=sda,command=printf '1ms,2ms\\n'");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->metric, "disk.io");
  EXPECT_EQ(spec->unit, "ns");
  EXPECT_EQ(spec->fields, (FieldSet{{"dev", "sda"}}));
  EXPECT_EQ(spec->shell, "printf '1ms,2ms\\n'");  // the rest, commas included
  EXPECT_EQ(ParseExecFlag("metric=x").status().message(),
            "--exec: 'metric=x' has no command=... (last)");
  EXPECT_EQ(ParseExecFlag("metric=x,colour=red,command=y").status().message().substr(0, 29),
            "--exec: unknown key 'colour' ");
  Result<ExecSpec> size = ParseExecFlag("metric=req.size,kind=size,command=x");
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(size->unit, "B");
}

TEST(AgentConfig, StatsdUnitTables) {
  AgentConfig c;
  Status s = ParseAgentConfig(R"(
[[statsd_unit]]
match = "http.*.bytes"
unit = "B"

[[statsd_unit]]
match = "job.*"
unit = "s"
)",
                              "agent.toml", &c);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(c.statsd_units, (std::vector<StatsdUnitRule>{{"http.*.bytes", StatsdUnit::kBytes},
                                                         {"job.*", StatsdUnit::kSeconds}}));
  AgentConfig bad;
  EXPECT_EQ(ParseAgentConfig("[[statsd_unit]]\nmatch = \"x\"\nunit = \"bytes\"\n", "a.toml", &bad)
                .message(),
            "config a.toml: statsd_unit[0].unit (line 3): unit 'bytes' is not ms, s, us, ns, B or "
            "none");
  EXPECT_EQ(ParseAgentConfig("[[statsd_unit]]\nmatch = \"x\"\n", "a.toml", &bad).message(),
            "config a.toml: statsd_unit[0] (line 1) needs both match = \"PATTERN\" and unit = "
            "\"UNIT\"");
  EXPECT_EQ(
      ParseAgentConfig("[[statsd_unit]]\nmatch = 3\nunit = \"B\"\n", "a.toml", &bad).message(),
      "config a.toml: statsd_unit[0].match (line 2) must be a metric name pattern (* and ? "
      "globs)");
  EXPECT_EQ(ParseAgentConfig("[[statsd_unit]]\nmatch = \"x\"\nunit = \"B\"\nkind = \"size\"\n",
                             "a.toml", &bad)
                .message(),
            "config a.toml: statsd_unit[0].kind (line 4): unknown key (known: match, unit)");
}

}  // namespace
}  // namespace trailmap
