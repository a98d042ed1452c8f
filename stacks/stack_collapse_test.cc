#include "stacks/stack_collapse.h"

#include "core/counts.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace trailmap {
namespace {

struct CollapseCase {
  const char* name;
  CollapseOptions options;
  const char* perf_script;
  const char* want;  // folded output
};

CollapseOptions Pid() { return {.include_pid = true}; }
CollapseOptions Tid() { return {.include_tid = true}; }
CollapseOptions Kernel() { return {.annotate_kernel = true}; }
CollapseOptions Jit() { return {.annotate_jit = true}; }
CollapseOptions All() { return {.annotate_kernel = true, .annotate_jit = true}; }
CollapseOptions Addrs() { return {.include_addrs = true}; }

const CollapseCase kCases[] = {
    {"basic, offsets stripped, merged, sorted",
     {},
     "# ========\n"
     "# cmdline : /usr/bin/perf record -g ./a.out\n"
     "a.out 1234 [001] 100.000001: 1 cycles:\n"
     "\t    4005d8 bar+0x1c (/tmp/a.out)\n"
     "\t    4005f0 foo+0x10 (/tmp/a.out)\n"
     "\t    400610 main+0x8 (/tmp/a.out)\n"
     "\n"
     "a.out 1234 [001] 100.000002: 1 cycles:\n"
     "\t    400610 main+0x8 (/tmp/a.out)\n"
     "\n"
     "a.out 1234 [001] 100.000003: 1 cycles:\n"
     "\t    4005d8 bar+0x1c (/tmp/a.out)\n"
     "\t    4005f0 foo+0x10 (/tmp/a.out)\n"
     "\t    400610 main+0x8 (/tmp/a.out)\n"
     "\n",
     "a.out;main 1\n"
     "a.out;main;foo;bar 2\n"},
    {"period counted instead of 1; period 0 counts 1",
     {},
     "java 12688 [002] 6544038.708352: 10309278 cpu-clock:\n"
     "\t7f00 run (/lib/x.so)\n"
     "\n"
     "java 12688 [002] 6544038.708353: 0 cpu-clock:\n"
     "\t7f00 run (/lib/x.so)\n"
     "\n",
     "java;run 10309279\n"},
    // Found by fuzz/perf_script_fuzz: "00" is not the string "0" but is still zero; it counted 0.
    {"a period of several zeros counts 1, like 0",
     {},
     "java 1 [000] 1.0: 00 cycles:\n"
     "\t7f00 run (/lib/x.so)\n"
     "\n"
     "java 1 [000] 1.1: 000 cycles:\n"
     "\t7f00 run (/lib/x.so)\n"
     "\n",
     "java;run 2\n"},
    {"no period on the line counts 1",
     {},
     "sleep 99 1.5: cpu-clock:\n"
     "\tffff schedule ([kernel.kallsyms])\n"
     "\n",
     "sleep;schedule 1\n"},
    {"default: TID only; pid and tid forms; spaces in comm", Pid(),
     "V8 WorkerThread 24636/25607 [000] 94564.109216: 1 cycles:\n"
     "\t7f00 Run (/usr/bin/node)\n"
     "\n"
     "java 25607 4794564.109216: 1 cycles:\n"
     "\t7f00 Run (/usr/bin/java)\n"
     "\n",
     "V8_WorkerThread-24636;Run 1\n"
     "java-?;Run 1\n"},
    {"tid form", Tid(),
     "V8 WorkerThread 24636/25607 [000] 94564.109216: 1 cycles:\n"
     "\t7f00 Run (/usr/bin/node)\n"
     "\n"
     "swapper 0/0 [000] 1.0: 1 cycles:\n"
     "\tffff cpu_idle ([kernel.kallsyms])\n"
     "\n",
     "V8_WorkerThread-24636/25607;Run 1\n"
     "swapper-?/0;cpu_idle 1\n"},
    {"kernel frames plain by default",
     {},
     "cat 7 [000] 2.0: 1 cycles:\n"
     "\tffffffff8105 native_write_msr+0x6 ([kernel.kallsyms])\n"
     "\tffffffff8200 do_syscall_64+0x1a (/boot/vmlinux)\n"
     "\t7f00 write (/lib/libc.so.6)\n"
     "\n",
     "cat;write;do_syscall_64;native_write_msr 1\n"},
    {"--kernel annotates [..] and vmlinux modules, not [unknown]", Kernel(),
     "cat 7 [000] 2.0: 1 cycles:\n"
     "\tffffffff8105 native_write_msr+0x6 ([kernel.kallsyms])\n"
     "\tffffffff8200 do_syscall_64+0x1a (/boot/vmlinux)\n"
     "\tffff0000 [unknown] ([unknown])\n"
     "\t7f00 write (/lib/libc.so.6)\n"
     "\n",
     "cat;write;[unknown];do_syscall_64_[k];native_write_msr_[k] 1\n"},
    {"[unknown] takes the module's basename; --addrs keeps the PC in angle brackets",
     {},
     "aa 1 [000] 1.0: 1 cycles:\n"
     "\t7f12ab [unknown] (/usr/lib/libc.so.6)\n"
     "\t0 [unknown] ([unknown])\n"
     "\n",
     "aa;[unknown];[libc.so.6] 1\n"},
    {"--addrs", Addrs(),
     "ab 1 [000] 1.0: 1 cycles:\n"
     "\t7f12ab [unknown] (/usr/lib/libc.so.6)\n"
     "\t0 [unknown] ([unknown])\n"
     "\n",
     "ab;[unknown <0>];[libc.so.6 <7f12ab>] 1\n"},
    {"Java: JVM signatures tidied when comm is java; --jit marks perf map frames", Jit(),
     "java 4242 [001] 5.0: 1 cycles:\n"
     "\t7f01 Lorg/mozilla/javascript/ContextFactory;.call(Lorg/mozilla/javascript/"
     "ContextAction;)Ljava/lang/Object; (/tmp/perf-4242.map)\n"
     "\t7f02 Interpreter (/usr/lib/jvm/libjvm.so)\n"
     "\t7f03 Ljava/lang/Thread;::run (/tmp/perf-4242.map)\n"
     "\n",
     "java;java/lang/Thread:::run_[j];Interpreter;org/mozilla/javascript/"
     "ContextFactory:.call_[j] 1\n"},
    // The Perl tidies only when its process name is exactly "java": with --pid or --tid the name
    // is "java-PID" or "java-PID/TID", so the JVM signatures keep their 'L'.
    {"Java tidy: not with --pid", Pid(),
     "java 4242/4250 [001] 5.0: 1 cycles:\n"
     "\t7f03 Ljava/lang/Thread;::run (/tmp/perf-4242.map)\n"
     "\n",
     "java-4242;Ljava/lang/Thread:::run 1\n"},
    {"Java tidy: not with --tid, nor with a TID alone", Tid(),
     "java 4242/4250 [001] 5.0: 1 cycles:\n"
     "\t7f03 Ljava/lang/Thread;::run (/tmp/perf-4242.map)\n"
     "\n"
     "java 4251 [001] 5.1: 1 cycles:\n"
     "\t7f03 Ljava/lang/Thread;::run (/tmp/perf-4242.map)\n"
     "\n",
     "java-4242/4250;Ljava/lang/Thread:::run 1\njava-?/4251;Ljava/lang/Thread:::run 1\n"},
    {"Java tidy: not for javac, Java or VM Thread; L without a '/' stays",
     {},
     "javac 1/1 [001] 5.0: 1 cycles:\n"
     "\t7f03 Ljava/lang/Thread;::run (/tmp/perf-4242.map)\n"
     "\n"
     "Java 1/1 [001] 5.0: 1 cycles:\n"
     "\t7f03 Ljava/lang/Thread;::run (/tmp/perf-4242.map)\n"
     "\n"
     "VM Thread 1/1 [001] 5.0: 1 cycles:\n"
     "\t7f03 Ljava/lang/Thread;::run (/tmp/perf-4242.map)\n"
     "\n"
     "java 1/1 [001] 5.0: 1 cycles:\n"
     "\t7f04 LParser;.parse(Ljava/lang/String;)V (/tmp/perf-4242.map)\n"
     "\t7f03 Ljava/lang/Thread;::run (/tmp/perf-4242.map)\n"
     "\n",
     "Java;Ljava/lang/Thread:::run 1\nVM_Thread;Ljava/lang/Thread:::run 1\n"
     "java;java/lang/Thread:::run;LParser:.parse 1\njavac;Ljava/lang/Thread:::run 1\n"},
    {"JS: node perf-basic-prof frames, quotes and argument lists removed; --all", All(),
     "node 311 [000] 9.0: 1 cycles:\n"
     "\t1f2e LazyCompile:*parse /srv/app/lib/parser.js:42 (/tmp/perf-311.map)\n"
     "\t1f3e RegExp:[&<>\"'] (/tmp/perf-311.map)\n"
     "\t55aa v8::internal::Invoke(v8::internal::Isolate*) (/usr/bin/node)\n"
     "\tffff entry_SYSCALL_64 ([kernel.kallsyms])\n"
     "\n",
     "node;entry_SYSCALL_64_[k];v8::internal::Invoke;RegExp:[&<>]_[j];"
     "LazyCompile:*parse /srv/app/lib/parser.js:42_[j] 1\n"},
    {"inlined chains a->b and perf's (inlined) frames",
     {},
     "a.out 5 [000] 1.0: 1 cycles:\n"
     "\t4005d8 leaf+0x4 (inlined)\n"
     "\t4005d8 mid->inner (/tmp/a.out)\n"
     "\t400600 main (/tmp/a.out)\n"
     "\n",
     "a.out;main;mid;inner_[i];leaf 1\n"},
    {"Go-style names keep their dots and parens; C++ templates keep <>; a name starting with ( is "
     "dropped",
     {},
     "go 5 [000] 1.0: 1 cycles:\n"
     "\t1 main.(*T).Run (/bin/go)\n"
     "\t2 std::vector<int>::push_back(int const&) (/bin/go)\n"
     "\t3 (anonymous namespace)::Helper(int) (/bin/go)\n"
     "\n",
     "go;std::vector<int>::push_back;main.(*T).Run 1\n"},
    {"only the first event type is kept",
     {},
     "a.out 1 [000] 1.0: 100 cycles:\n"
     "\t1 work (/a)\n"
     "\n"
     "a.out 1 [000] 1.1: 200 instructions:\n"
     "\t1 work (/a)\n"
     "\t2 other (/a)\n"
     "\n"
     "a.out 1 [000] 1.2: 100 cycles:\n"
     "\t1 work (/a)\n"
     "\n",
     "a.out;work 200\n"},
    {"records end at blank lines; frames of a line that fits neither are skipped",
     {},
     "aa 1 [000] 1.0: 1 cycles:\n"
     "\t1 one (/a)\n"
     "\n"
     "\n"
     "this line has no pid\n"
     "\t1 two (/a)\n"
     "\n"
     "   \n"
     "bb 2 [000] 1.0: 1 cycles:\n"
     "\t1 three (/a)\n",  // no blank line at the end: dropped, as the Perl does
     "aa;one 1\n"},
    {"frames starting with ( are process names and dropped; ; in names becomes :",
     {},
     "aa 1 [000] 1.0: 1 cycles:\n"
     "\t1 (/usr/bin/aa) (/usr/bin/aa)\n"
     "\t2 a;b (/a)\n"
     "\n",
     "aa;a:b 1\n"},
};

TEST(StackCollapse, Table) {
  for (const CollapseCase& c : kCases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(FormatFolded(CollapsePerfScript(c.perf_script, c.options)), c.want);
  }
}

TEST(StackCollapse, StatsCountWhatWasDropped) {
  CollapseStats stats;
  CollapsePerfScript(
      "a.out 1 [000] 1.0: 100 cycles:\n"
      "\t1 work (/a)\n"
      "\n"
      "a.out 1 [000] 1.1: 200 instructions:\n"
      "\t1 work (/a)\n"
      "\n"
      "a.out 1 [000] 1.1: 200 branch-misses:\n"
      "\n"
      "garbage\n"
      "a.out 1 [000] 1.2: 100 cycles:\n"
      "\t1 work (/a)\n",
      {}, &stats);
  EXPECT_EQ(stats.lines, 11u);
  EXPECT_EQ(stats.records, 1u);
  EXPECT_EQ(stats.event, "cycles");
  EXPECT_EQ(stats.other_event_records, 2u);
  EXPECT_EQ(stats.other_events, (std::vector<std::string>{"instructions", "branch-misses"}));
  EXPECT_EQ(stats.malformed_lines, 1u);
  ASSERT_EQ(stats.malformed_examples.size(), 1u);
  EXPECT_EQ(stats.malformed_examples[0].line_number, 9u);
  EXPECT_EQ(stats.malformed_examples[0].text, "garbage");
  EXPECT_TRUE(stats.unterminated_record);
}

TEST(StackCollapse, PiecesOfAnySizeGiveTheSameStacks) {
  const std::string text = std::string(kCases[0].perf_script) + kCases[1].perf_script;
  const FoldedStacks whole = CollapsePerfScript(text, {});
  for (size_t piece : {1, 2, 3, 7, 64}) {
    StackCollapser collapser;
    for (size_t i = 0; i < text.size(); i += piece) collapser.Add(text.substr(i, piece));
    EXPECT_EQ(collapser.Finish(), whole) << piece;
  }
}

TEST(StackCollapse, OddCommsMatchThePerlRegex) {
  // A one-character comm cannot match ^(\S.+?)\s+(\d+): the shortest match reaches the period.
  EXPECT_EQ(FormatFolded(CollapsePerfScript("a 1 [000] 1.0: 7 cycles:\n\t1 f (/a)\n\n", {})),
            "a_1_[000]_1.0:;f 7\n");
  // Comm with a colon and a slash (kworker).
  EXPECT_EQ(
      FormatFolded(CollapsePerfScript("kworker/0:1 123 [000] 1.0: 3 cycles:\n\t1 f (/a)\n\n", {})),
      "kworker/0:1;f 3\n");
}

// What the agent's perf source reads: `perf script -F comm,pid,tid,time,event,ip,sym,dso`
// (pid/tid, unix time, no period) as perf 6.1 prints it, with kernel frames, [unknown] frames
// and modules, an inlined chain, a JIT frame and a comm with a space.
constexpr const char* kPerSample =
    "trailmap-busy 4242/4242 1795374870.861943: cpu-clock: \n"
    "\t          bea23f trailmap_test_busy_loop (/usr/bin/trailmap-busy)\n"
    "\t          bea400 main (/usr/bin/trailmap-busy)\n"
    "\t               0 [unknown] ([unknown])\n"
    "\n"
    "trailmap-busy 4242/4243 1795374870.871999: cpu-clock: \n"
    "\tffffffff822016f7 _raw_spin_lock ([kernel.kallsyms])\n"
    "\tffffffff815e9f80 do_anonymous_page ([kernel.kallsyms])\n"
    "\t          3a91f5 [unknown] (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
    "\t          bea400 main (/usr/bin/trailmap-busy)\n"
    "\n"
    "Web Content 77/78 1795374871.000000001: cpu-clock: \n"
    "\t            1234 inner->outer (/usr/lib/libxul.so)\n"
    "\t    7f00deadbeef LazyCompile:*run /app/x.js:1 (/tmp/perf-77.map)\n"
    "\n"
    "swapper     0/0     1795374871.5: cpu-clock: \n"
    "\tffffffff81e4a5c0 default_idle ([kernel.kallsyms])\n"
    "\n";

TEST(StackCollapse, RecordSinkGivesEachSampleWithItsTime) {
  struct Got {
    std::string comm, pid, tid, stack;
    bool has_time;
    int64_t time_ns;
    uint64_t period;
  };
  std::vector<Got> got;
  StackCollapser collapser({.annotate_kernel = true, .annotate_jit = true});
  collapser.SetRecordSink([&](const CollapsedRecord& r) {
    std::string stack;
    for (std::string_view f : *r.frames) {
      if (!stack.empty()) stack += ';';
      stack += f;
    }
    got.push_back({std::string(r.comm), std::string(r.pid), std::string(r.tid), stack, r.has_time,
                   r.time_ns, r.period});
  });
  collapser.Add(kPerSample);
  EXPECT_TRUE(collapser.Finish().empty()) << "records went to the sink, not the counts";
  EXPECT_EQ(collapser.stats().records, 4u);
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0].comm, "trailmap-busy");
  EXPECT_EQ(got[0].pid, "4242");
  EXPECT_EQ(got[0].tid, "4242");
  EXPECT_EQ(got[0].stack, "[unknown];main;trailmap_test_busy_loop");
  EXPECT_TRUE(got[0].has_time);
  EXPECT_EQ(got[0].time_ns, 1795374870861943000);
  EXPECT_EQ(got[0].period, 1u);
  EXPECT_EQ(got[1].tid, "4243");
  EXPECT_EQ(got[1].stack, "main;[libc.so.6];do_anonymous_page_[k];_raw_spin_lock_[k]");
  EXPECT_EQ(got[1].time_ns, 1795374870871999000);
  EXPECT_EQ(got[2].comm, "Web Content");
  EXPECT_EQ(got[2].pid, "77");
  EXPECT_EQ(got[2].stack, "LazyCompile:*run /app/x.js:1_[j];inner;outer_[i]");
  EXPECT_EQ(got[2].time_ns, 1795374871000000001);  // nanoseconds kept, more digits ignored
  EXPECT_EQ(got[3].comm, "swapper");
  EXPECT_EQ(got[3].pid, "?") << "a TID of 0 counts as absent, as in the Perl";
  EXPECT_EQ(got[3].stack, "default_idle_[k]");
  EXPECT_EQ(got[3].time_ns, 1795374871500000000);
}

TEST(StackCollapse, RecordSinkAgreesWithTheFoldedCounts) {
  // Per-sample records, prefixed with the comm and counted, are exactly the stream's output.
  const std::string text = std::string(kPerSample) + kPerSample + kCases[0].perf_script;
  std::map<std::string, uint64_t> counted;
  StackCollapser collapser;
  collapser.SetRecordSink([&](const CollapsedRecord& r) {
    std::string stack(r.comm);
    std::replace(stack.begin(), stack.end(), ' ', '_');
    for (std::string_view f : *r.frames) {
      stack += ';';
      stack += f;
    }
    counted[stack] += r.period;
  });
  collapser.Add(text);
  collapser.Finish();
  FoldedStacks from_sink;
  for (const auto& [stack, count] : counted) from_sink.push_back({stack, count});
  EXPECT_EQ(from_sink, CollapsePerfScript(text, {}));
}

TEST(StackCollapse, RecordSinkWithoutTimeColumn) {
  std::vector<bool> has_time;
  StackCollapser collapser;
  collapser.SetRecordSink([&](const CollapsedRecord& r) { has_time.push_back(r.has_time); });
  collapser.Add("java 12 cycles:\n\t1 f (/a)\n\njava 12 [001] 99: 3 cycles:\n\t1 f (/a)\n\n");
  collapser.Finish();
  EXPECT_EQ(has_time, (std::vector<bool>{false, false}));  // "99:" has no fraction: not a time
}

// fuzz/corpus/perf_script/time_past_2262: a ten-digit TIME of 9456101429 s overflowed int64
// nanoseconds (UBSan: signed integer overflow). Such a time is now no time; the largest that fits
// still reads.
TEST(StackCollapse, TimeThatOverflowsNanosecondsIsNoTime) {
  std::vector<std::pair<bool, int64_t>> times;
  StackCollapser collapser;
  collapser.SetRecordSink(
      [&](const CollapsedRecord& r) { times.emplace_back(r.has_time, r.time_ns); });
  collapser.Add(
      "V8 24636/25607 [000] 9456101429.6: 1 cycles:\n\t7f0 f (/a)\n\n"
      "V8 24636/25607 [000] 9223372035.999999999: 1 cycles:\n\t7f0 f (/a)\n\n");
  collapser.Finish();
  ASSERT_EQ(times.size(), 2u);
  EXPECT_FALSE(times[0].first);
  EXPECT_TRUE(times[1].first);
  EXPECT_EQ(times[1].second, int64_t{9'223'372'035'999'999'999});
}

// Two records with a period near 2^64 on one stack: the count saturates at kMaxTotalCount (2^62)
// instead of wrapping to a small number.
TEST(StackCollapse, HugePeriodsSaturate) {
  const FoldedStacks got = CollapsePerfScript(
      "java 1 [000] 1.5: 18446744073709551615 cycles:\n\t1 f (/x)\n\n"
      "java 1 [000] 1.6: 99999999999999999999999 cycles:\n\t1 f (/x)\n\n",
      {});
  EXPECT_EQ(got, (FoldedStacks{{"java;f", kMaxTotalCount}}));  // core/counts.h
}

}  // namespace
}  // namespace trailmap
