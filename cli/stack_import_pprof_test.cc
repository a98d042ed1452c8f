#include "cli/stack_import_pprof.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "cli/pprof_profile.pb.h"

namespace trailmap {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string Join(const std::vector<std::string>& frames) {
  std::string s;
  for (const std::string& f : frames) s += (s.empty() ? "" : ";") + f;
  return s;
}

// "labels|stack count" per stack, in the decoder's order.
std::string Describe(const PprofStacks& p) {
  std::string out;
  for (const PprofStack& s : p.stacks) {
    std::string labels;
    for (const auto& [k, v] : s.labels) labels += (labels.empty() ? "" : ",") + k + "=" + v;
    out += labels + "|" + Join(s.frames) + " " + std::to_string(s.count) + "\n";
  }
  return out;
}

// cli/testdata/pprof/go_cpu.pb.gz: made here by Go 1.19's runtime/pprof running
// cli/testdata/pprof/burn.go (hotLoop under phase=hot for 800 ms, then coldLoop under
// phase=cold for 400 ms; mix inlined into both). The file is a fact: these are its samples, as
// `go tool pprof -raw` lists them too.
TEST(PprofImport, GoCpuProfileFromRuntimePprof) {
  const std::string bytes = ReadFile(TRAILMAP_CLI_TESTDATA "/pprof/go_cpu.pb.gz");
  ASSERT_TRUE(LooksGzipped(bytes));
  Result<PprofStacks> p = DecodePprof(bytes);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->sample_types, (std::vector<std::string>{"samples/count", "cpu/nanoseconds"}));
  EXPECT_EQ(p->sample_type, "samples/count");
  EXPECT_EQ(p->samples, 11u);
  EXPECT_EQ(p->negative_values, 0u);
  EXPECT_EQ(p->labels_dropped, 0u);
  EXPECT_GT(p->time_nanos, int64_t{1'795'000'000} * 1'000'000'000);
  const std::string go = "runtime.main;main.main;runtime/pprof.Do;";
  EXPECT_EQ(
      Describe(*p),
      "phase=cold,sample_type=samples|" + go + "main.main.func2;main.coldLoop 20\n" +
          "phase=cold,sample_type=samples|" + go +
          "main.main.func2;main.coldLoop;main.mix_[i] 9\n" + "phase=cold,sample_type=samples|" +
          go + "main.main.func2;main.coldLoop;runtime.asyncPreempt 1\n" +
          "phase=hot,sample_type=samples|" + go + "main.main.func1;main.hotLoop 39\n" +
          "phase=hot,sample_type=samples|" + go + "main.main.func1;main.hotLoop;main.mix_[i] 13\n" +
          "phase=hot,sample_type=samples|" + go +
          "main.main.func1;main.hotLoop;main.mix_[i];runtime.asyncPreempt 4\n" +
          "phase=hot,sample_type=samples|" + go + "main.main.func1;main.hotLoop;time.Now 1\n");
  // Plausible: the hot phase ran twice as long as the cold one; 10 ms a sample.
  uint64_t hot = 0, cold = 0;
  for (const PprofStack& s : p->stacks) (s.labels[0].second == "hot" ? hot : cold) += s.count;
  EXPECT_EQ(hot + cold, 87u);
  EXPECT_GT(hot, cold * 3 / 2);

  Result<PprofStacks> cpu = DecodePprof(bytes, {.sample_type = "cpu"});
  ASSERT_TRUE(cpu.ok());
  EXPECT_EQ(cpu->sample_type, "cpu/nanoseconds");
  uint64_t ns = 0;
  for (const PprofStack& s : cpu->stacks) {
    ns += s.count;
    EXPECT_EQ(s.labels.back(), (Field{"sample_type", "cpu"}));
  }
  EXPECT_EQ(ns, 870'000'000u);

  Result<PprofStacks> none = DecodePprof(bytes, {.sample_type = "alloc_space"});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().message(),
            "--sample-type alloc_space: the profile has samples/count, cpu/nanoseconds");
}

// A profile built here: plain (not gzipped), no count type (so the last type is kept), a
// location without lines, numeric and invalid labels, a negative value, equal samples added.
TEST(PprofImport, RulesOnAHandMadeProfile) {
  pprof::Profile p;
  for (const char* s : {"", "alloc_space", "bytes", "inuse_space", "main", "leaf", "libc.so.6",
                        "/usr/lib/libc.so.6", "thread", "worker-1", "bad,value", "size", "req"}) {
    p.add_string_table(s);
  }
  auto* t = p.add_sample_type();
  t->set_type(1);
  t->set_unit(2);
  t = p.add_sample_type();
  t->set_type(3);
  t->set_unit(2);
  auto* m = p.add_mapping();
  m->set_id(1);
  m->set_filename(7);
  auto* f = p.add_function();
  f->set_id(1);
  f->set_name(4);
  f = p.add_function();
  f->set_id(2);
  f->set_system_name(5);  // no name: the system name
  auto* loc = p.add_location();
  loc->set_id(10);
  loc->add_line()->set_function_id(1);
  loc = p.add_location();
  loc->set_id(11);
  loc->set_mapping_id(1);  // no lines: the mapping's basename
  loc = p.add_location();
  loc->set_id(12);
  loc->add_line()->set_function_id(2);
  const auto add = [&p](std::vector<uint64_t> locations, int64_t a, int64_t b) {
    auto* s = p.add_sample();
    for (uint64_t l : locations) s->add_location_id(l);
    s->add_value(a);
    s->add_value(b);
    return s;
  };
  auto* s = add({12, 11, 10}, 100, 7);
  auto* l = s->add_label();
  l->set_key(8);
  l->set_str(9);  // thread=worker-1
  l = s->add_label();
  l->set_key(11);
  l->set_num(4096);
  l->set_num_unit(2);  // size=4096 (unit dropped)
  l = s->add_label();
  l->set_key(12);
  l->set_str(10);  // req=bad,value: not a field value
  s = add({12, 11, 10}, 1, 3);
  l = s->add_label();
  l->set_key(8);
  l->set_str(9);
  l = s->add_label();
  l->set_key(11);
  l->set_num(4096);
  add({10}, 5, -2);  // negative in the kept type
  add({10}, 5, 0);   // zero: dropped
  const std::string bytes = p.SerializeAsString();
  Result<PprofStacks> got = DecodePprof(bytes);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->sample_type, "inuse_space/bytes");
  EXPECT_EQ(got->samples, 4u);
  EXPECT_EQ(got->negative_values, 1u);
  EXPECT_EQ(got->labels_dropped, 1u);
  EXPECT_EQ(Describe(*got),
            "sample_type=inuse_space,size=4096,thread=worker-1|main;[libc.so.6];leaf 10\n");

  // Hostile: an index past the string table, a missing location, garbage.
  pprof::Profile bad = p;
  bad.mutable_sample_type(0)->set_type(99);
  Result<PprofStacks> r = DecodePprof(bad.SerializeAsString());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "a sample_type names string 99 of a table of 13");
  bad = p;
  bad.mutable_sample(0)->set_location_id(0, 77);
  r = DecodePprof(bad.SerializeAsString());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "sample 1 names location 77, which the profile does not have");
  r = DecodePprof(std::string("\x1f\x8b garbage", 10));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().rfind("not a valid gzip stream", 0), 0u) << r.status().message();
  r = DecodePprof("\xff\xff\xff");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().rfind("not a pprof profile", 0), 0u);
}

}  // namespace
}  // namespace trailmap
