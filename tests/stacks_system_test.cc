// Stacks through the cluster: `trailmap import --stacks` of a folded file (host a) and of perf
// script text (host b) into two real aggregators (the hosts land on their shards), then
// `trailmap flame --format folded` must give the exact merged counts, filtered by --where, and
// the two-column differential against a baseline range or predicate. The aggregators are then
// killed and restarted: the counts (and the global stack ids they refer to) are still there, and
// a new import for the same stacks adds to them.
//
// The helpers (StackCluster, ImportStacks, FleetFolded) are what a real-perf test needs too: run
// an agent with a perf source instead of ImportStacks, and look for the busy function in
// FleetFolded's answer.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>

#include "tests/cluster.h"

namespace trailmap::test {
namespace {

// Seed 004's tree times 10: main 90 (self 20), foo1 40 (self 15), foo2 30 (self 5), bar 25 + 25.
constexpr const char* kSeedFolded =
    "main;foo1;bar 25\n"
    "main;foo2;bar 25\n"
    "main;foo1 15\n"
    "main;foo2 5\n"
    "main 20\n";

// Three cpu-clock samples over two seconds of perf time, as `perf script` prints them.
constexpr const char* kPerfScript =
    "app 100 [000] 4000.100000: 1 cpu-clock:\n"
    "\tffffffff81000001 work+0x10 (/usr/bin/app)\n"
    "\tffffffff81000002 main+0x20 (/usr/bin/app)\n"
    "\n"
    "app 100 [000] 4000.600000: 1 cpu-clock:\n"
    "\tffffffff81000001 work+0x14 (/usr/bin/app)\n"
    "\tffffffff81000002 main+0x20 (/usr/bin/app)\n"
    "\n"
    "app 100 [001] 4001.200000: 1 cpu-clock:\n"
    "\tffffffff81000003 idle (/usr/bin/app)\n"
    "\tffffffff81000002 main+0x20 (/usr/bin/app)\n"
    "\n";

class StackCluster {
 public:
  explicit StackCluster(int aggregators) {
    for (int i = 0; i < aggregators; ++i) {
      aggs_.push_back(std::make_unique<Aggregator>(dir_, "agg-" + std::to_string(i + 1)));
      aggs_.back()->Start();
    }
  }
  const TempDir& dir() const { return dir_; }
  std::vector<std::unique_ptr<Aggregator>>& aggregators() { return aggs_; }
  std::string Logs() const {
    std::string out;
    for (const auto& a : aggs_) out += a->Log();
    return out;
  }

  // `trailmap import --stacks` of `text` for `host`, landing at `time`.
  CommandResult ImportStacks(const std::string& host, const std::string& text, int64_t time) {
    const std::string file = dir_ / (host + "-" + std::to_string(imports_++) + ".stacks");
    WriteFile(file, text);
    return RunProgram({Binary("trailmap"), "import", "--stacks", "--host", host, "--time",
                       std::to_string(time), "--ingest", IngestList(aggs_), file});
  }

  // `trailmap flame --format folded` over the fleet, with `extra` flags.
  CommandResult FleetFolded(int64_t from, int64_t to, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {
        "flame", "--format", "folded", "--from", std::to_string(from), "--to", std::to_string(to)};
    args.insert(args.end(), extra.begin(), extra.end());
    return Cli(args, QueryList(aggs_));
  }

 private:
  TempDir dir_;
  std::vector<std::unique_ptr<Aggregator>> aggs_;
  int imports_ = 0;
};

int64_t Now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

TEST(StacksSystem, ImportedStacksMergeAcrossHostsAndShardsExactly) {
  StackCluster cluster(2);
  const int64_t t0 = (Now() - 3600) / 60 * 60 + 5;  // an hour ago, 5 s into a minute
  CommandResult a = cluster.ImportStacks("a", kSeedFolded, t0);
  ASSERT_EQ(a.exit_code, 0) << a.err << cluster.Logs();
  EXPECT_NE(a.err.find("90 folded stack samples over 1 second ("), std::string::npos) << a.err;
  CommandResult b = cluster.ImportStacks("b", kPerfScript, t0 + 1);
  ASSERT_EQ(b.exit_code, 0) << b.err << cluster.Logs();
  EXPECT_NE(b.err.find("3 perf stack samples over 2 seconds"), std::string::npos) << b.err;

  // Both hosts over a range whose middle minute comes from the stacks_60s rollup.
  const std::string both =
      "app;main;idle 1\n"
      "app;main;work 2\n"
      "main 20\n"
      "main;foo1 15\n"
      "main;foo1;bar 25\n"
      "main;foo2 5\n"
      "main;foo2;bar 25\n";
  CommandResult all = cluster.FleetFolded(t0 - 65, t0 + 65);
  ASSERT_EQ(all.exit_code, 0) << all.err << cluster.Logs();
  EXPECT_EQ(all.out, both);
  EXPECT_EQ(cluster.FleetFolded(t0, t0 + 3).out, both);
  // Decomposed by host (in the aggregators): each host's stacks under its own first frame; by a
  // field the stacks without it go under "(none)".
  EXPECT_EQ(cluster.FleetFolded(t0 - 65, t0 + 65, {"--by", "host"}).out,
            "a;main 20\n"
            "a;main;foo1 15\n"
            "a;main;foo1;bar 25\n"
            "a;main;foo2 5\n"
            "a;main;foo2;bar 25\n"
            "b;app;main;idle 1\n"
            "b;app;main;work 2\n");
  EXPECT_EQ(cluster.FleetFolded(t0 - 65, t0 + 65, {"--by", "execname", "--hosts", "b"}).out,
            "app;app;main;idle 1\n"
            "app;app;main;work 2\n");
  // `fields` counts a stacks metric's samples per value.
  const CommandResult fields =
      Cli({"fields", "--metric", "cpu.stacks", "--from", std::to_string(t0 - 65), "--to",
           std::to_string(t0 + 65), "--format", "json"},
          QueryList(cluster.aggregators()));
  ASSERT_EQ(fields.exit_code, 0) << fields.err;
  const nlohmann::json fj = nlohmann::json::parse(fields.out);
  std::map<std::string, uint64_t> hosts;
  for (const auto& f : fj["fields"]) {
    if (f["key"] != "host") continue;
    for (const auto& v : f["values"]) hosts[v["value"]] = v["count"];
  }
  EXPECT_EQ(hosts, (std::map<std::string, uint64_t>{{"a", 90}, {"b", 3}})) << fields.out;
  EXPECT_EQ(fj["counts"], "samples");

  // Filtered in the aggregators by host, and by time (b's second perf second only).
  const std::string seed_only =
      "main 20\nmain;foo1 15\nmain;foo1;bar 25\nmain;foo2 5\nmain;foo2;bar 25\n";
  EXPECT_EQ(cluster.FleetFolded(t0 - 65, t0 + 65, {"--where", "host == \"a\""}).out, seed_only);
  EXPECT_EQ(cluster.FleetFolded(t0 - 65, t0 + 65, {"--hosts", "b"}).out,
            "app;main;idle 1\napp;main;work 2\n");
  EXPECT_EQ(cluster.FleetFolded(t0 + 2, t0 + 3).out, "app;main;idle 1\n");
  // perf script stacks carry their process name as the execname field.
  EXPECT_EQ(cluster.FleetFolded(t0 - 65, t0 + 65, {"--where", "execname == \"app\""}).out,
            "app;main;idle 1\napp;main;work 2\n");

  // Differential against a baseline range: baseline [t0, t0 + 1) is host a, target is host b.
  // Raw counts (--no-normalize) first; by default the baseline is scaled to the target's total
  // (3 / 90 here), as difffolded.pl -n does.
  CommandResult diff = cluster.FleetFolded(t0 + 1, t0 + 3,
                                           {"--baseline-from", std::to_string(t0), "--baseline-to",
                                            std::to_string(t0 + 1), "--no-normalize"});
  ASSERT_EQ(diff.exit_code, 0) << diff.err;
  EXPECT_EQ(diff.out,
            "app;main;idle 0 1\n"
            "app;main;work 0 2\n"
            "main 20 0\n"
            "main;foo1 15 0\n"
            "main;foo1;bar 25 0\n"
            "main;foo2 5 0\n"
            "main;foo2;bar 25 0\n");
  CommandResult scaled = cluster.FleetFolded(
      t0 + 1, t0 + 3,
      {"--baseline-from", std::to_string(t0), "--baseline-to", std::to_string(t0 + 1)});
  EXPECT_EQ(scaled.out,
            "app;main;idle 0 1\n"
            "app;main;work 0 2\n"
            "main 0.667 0\n"
            "main;foo1 0.5 0\n"
            "main;foo1;bar 0.833 0\n"
            "main;foo2 0.167 0\n"
            "main;foo2;bar 0.833 0\n");
  // ... and against a baseline predicate over the same range.
  CommandResult by_host = cluster.FleetFolded(
      t0 - 65, t0 + 65,
      {"--where", "host == \"b\"", "--baseline-where", "host == \"a\"", "--no-normalize"});
  EXPECT_EQ(by_host.out, diff.out);

  // A value comparison is a usage error that names the flag.
  CommandResult bad = cluster.FleetFolded(t0, t0 + 3, {"--baseline-where", "latency > 1ms"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--baseline-where: stacks have no value"), std::string::npos) << bad.err;

  // The aggregators restart: the stacks are still there, and a second import adds to them.
  for (auto& agg : cluster.aggregators()) {
    agg->KillHard();
    agg->Start();
  }
  EXPECT_EQ(cluster.FleetFolded(t0 - 65, t0 + 65).out, both);
  ASSERT_EQ(cluster.ImportStacks("a", "main;foo1;bar 5\nmain;baz 1\n", t0).exit_code, 0);
  EXPECT_EQ(cluster.FleetFolded(t0 - 65, t0 + 65, {"--where", "host == \"a\""}).out,
            "main 20\nmain;baz 1\nmain;foo1 15\nmain;foo1;bar 30\nmain;foo2 5\nmain;foo2;bar 25\n");
}

// async-profiler's `-o collapsed` with `-t` (threads) and `--cstack`: frame types as suffixes
// (_[j] JIT-compiled, _[i] inlined, _[0] interpreted, _[1] C1, _[k] kernel, none native) and
// thread frames that hold spaces; counts are samples.
constexpr const char* kAsyncProfilerCollapsed =
    "[main tid=4242];java/lang/Thread.run_[j];com/example/Server.handle_[j];"
    "com/example/Json.parse_[i] 40\n"
    "[main tid=4242];java/lang/Thread.run_[j];com/example/Server.handle_[j];"
    "java/util/HashMap.get_[0] 3\n"
    "[main tid=4242];java/lang/Thread.run_[j];com/example/Server.handle_[1];"
    "java/io/FileOutputStream.writeBytes_[j];Java_java_io_FileOutputStream_writeBytes;__write;"
    "entry_SYSCALL_64_[k];ksys_write_[k] 7\n"
    "[GC Thread#0 tid=4250];start_thread;thread_native_entry;G1ParTask::work 5\n";

// py-spy `record -f raw --threads --subprocesses`: "name (file:line)" frames, a process frame
// and a thread frame at the root, samples as counts, lines in no particular order.
constexpr const char* kPySpyRaw =
    "process 4242:\"python3 app.py --port 8080\";thread (0x7F3A2C8A1740);<module> (app.py:30);"
    "main (app.py:25);work (app.py:12) 120\n"
    "process 4242:\"python3 app.py --port 8080\";thread (0x7F3A2C8A1740);<module> (app.py:30);"
    "main (app.py:25);idle (app.py:18) 30\n"
    "process 4301:\"python3 -m worker\";thread (0x7F00AA000740);<module> (<frozen runpy>:88);"
    "loop (worker.py:7) 9\n";

TEST(StacksSystem, OtherProfilersOutputImportsExactly) {
  StackCluster cluster(1);
  const int64_t t0 = Now() - 600;
  CommandResult j = cluster.ImportStacks("java-1", kAsyncProfilerCollapsed, t0);
  ASSERT_EQ(j.exit_code, 0) << j.err << cluster.Logs();
  EXPECT_NE(j.err.find("55 folded stack samples"), std::string::npos) << j.err;
  CommandResult p = cluster.ImportStacks("py-1", kPySpyRaw, t0);
  ASSERT_EQ(p.exit_code, 0) << p.err << cluster.Logs();
  EXPECT_NE(p.err.find("159 folded stack samples"), std::string::npos) << p.err;
  // A pprof profile made here by Go's runtime/pprof (cli/testdata/pprof: burn.go made it):
  // recognized by its gzip magic, samples/count kept, its labels (phase) and the sample type
  // are fields.
  const std::string profile = std::string(TRAILMAP_SOURCE_DIR) + "/cli/testdata/pprof/go_cpu.pb.gz";
  CommandResult g =
      RunProgram({Binary("trailmap"), "import", "--stacks", "--host", "go-1", "--time",
                  std::to_string(t0), "--ingest", IngestList(cluster.aggregators()), profile});
  ASSERT_EQ(g.exit_code, 0) << g.err << cluster.Logs();
  EXPECT_NE(g.err.find("87 pprof (samples/count) stack samples over 1 second"), std::string::npos)
      << g.err;

  // Sorted bytewise, as every folded answer is.
  EXPECT_EQ(cluster.FleetFolded(t0 - 5, t0 + 5, {"--hosts", "java-1"}).out,
            "[GC Thread#0 tid=4250];start_thread;thread_native_entry;G1ParTask::work 5\n"
            "[main tid=4242];java/lang/Thread.run_[j];com/example/Server.handle_[1];"
            "java/io/FileOutputStream.writeBytes_[j];Java_java_io_FileOutputStream_writeBytes;"
            "__write;entry_SYSCALL_64_[k];ksys_write_[k] 7\n"
            "[main tid=4242];java/lang/Thread.run_[j];com/example/Server.handle_[j];"
            "com/example/Json.parse_[i] 40\n"
            "[main tid=4242];java/lang/Thread.run_[j];com/example/Server.handle_[j];"
            "java/util/HashMap.get_[0] 3\n");
  EXPECT_EQ(cluster.FleetFolded(t0 - 5, t0 + 5, {"--hosts", "py-1"}).out,
            "process 4242:\"python3 app.py --port 8080\";thread (0x7F3A2C8A1740);"
            "<module> (app.py:30);main (app.py:25);idle (app.py:18) 30\n"
            "process 4242:\"python3 app.py --port 8080\";thread (0x7F3A2C8A1740);"
            "<module> (app.py:30);main (app.py:25);work (app.py:12) 120\n"
            "process 4301:\"python3 -m worker\";thread (0x7F00AA000740);"
            "<module> (<frozen runpy>:88);loop (worker.py:7) 9\n");
  const std::string go = "runtime.main;main.main;runtime/pprof.Do;main.main.func2;main.coldLoop";
  EXPECT_EQ(cluster
                .FleetFolded(t0 - 5, t0 + 5,
                             {"--where", "phase == \"cold\" and sample_type == \"samples\""})
                .out,
            go + " 20\n" + go + ";main.mix_[i] 9\n" + go + ";runtime.asyncPreempt 1\n");
  CommandResult hot = cluster.FleetFolded(t0 - 5, t0 + 5, {"--where", "phase == \"hot\""});
  EXPECT_NE(hot.out.find(";main.main.func1;main.hotLoop 39\n"), std::string::npos) << hot.out;

  // --sample-type picks another value, and one the profile lacks is a usage error naming those
  // it has.
  CommandResult none =
      RunProgram({Binary("trailmap"), "import", "--stacks", "--host", "go-1", "--sample-type",
                  "alloc_space", "--ingest", IngestList(cluster.aggregators()), profile});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("--sample-type alloc_space: the profile has samples/count, "
                          "cpu/nanoseconds"),
            std::string::npos)
      << none.err;
}

TEST(StacksSystem, ABadFoldedLineStopsTheImportNamingTheLine) {
  StackCluster cluster(1);
  CommandResult r = cluster.ImportStacks("a", "main;foo 3\nmain;bar three\n", Now() - 60);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("line 2: expected \"frame;frame;... COUNT\""), std::string::npos) << r.err;
  EXPECT_EQ(cluster.FleetFolded(Now() - 120, Now()).out, "");  // nothing half-imported
}

TEST(StacksSystem, SvgOfFleetStacksHasTheSeedWidths) {
  StackCluster cluster(1);
  const int64_t t0 = Now() - 600;
  ASSERT_EQ(cluster.ImportStacks("a", kSeedFolded, t0).exit_code, 0);
  CommandResult svg = Cli({"flame", "--from", std::to_string(t0), "--to", std::to_string(t0 + 1)},
                          QueryList(cluster.aggregators()));
  ASSERT_EQ(svg.exit_code, 0) << svg.err;
  EXPECT_NE(svg.out.find("<svg"), std::string::npos);
  EXPECT_NE(svg.out.find("foo1"), std::string::npos);
  EXPECT_NE(svg.out.find("90 samples"), std::string::npos) << svg.out.substr(0, 2000);
}

}  // namespace
}  // namespace trailmap::test
