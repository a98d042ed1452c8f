// Writes the binary seeds of the fuzz corpora (fuzz/README.md): small valid messages and edge
// cases, in the input layout each target reads. Usage: make_seeds fuzz/corpus
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "aggregator/store/stack_merge_operator.h"
#include "core/batch.h"
#include "core/histogram.h"
#include "core/query_wire.h"

namespace {

using namespace trailmap;

std::filesystem::path root;

void Write(const std::string& target, const std::string& name, const std::string& bytes) {
  const std::filesystem::path dir = root / target;
  std::filesystem::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary) << bytes;
}

Histogram Hist(std::vector<std::pair<uint64_t, uint64_t>> values) {
  Histogram h;
  for (auto [v, c] : values) h.Record(v, c);
  return h;
}

Batch SampleBatch() {
  Batch b;
  b.agent = "web-1/abc";
  b.sequence = 7;
  b.host = "web-1";
  b.labels = {{"role", "web"}};
  b.series = {{"disk.latency", MetricKind::kLatency, "ns", "op=read"},
              {"cpu.util", MetricKind::kScalar, "%", ""},
              {"cpu.stacks", MetricKind::kStacks, "samples", "execname=nginx,pid=12"}};
  b.seconds.push_back({1'700'000'000, {{0, Hist({{1500, 1}, {20'000, 3}}).Encode()}},
                       {{1, 12.5}}, {{2, 1, 4}}});
  b.seconds.push_back({1'700'000'001, {{0, Hist({{7, 2}}).Encode()}}, {}, {}});
  b.frames = {{1, "main"}, {2, "work"}, {3, "[truncated]"}};
  b.stacks = {{1, {1, 2}}, {2, {1, 3}}};
  b.sent_at_ms = 1'700'000'002'000;
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_seeds CORPUS_DIR\n");
    return 2;
  }
  root = argv[1];

  // batch: a full batch, an empty one, one of only scalars, and one item refused.
  Batch full = SampleBatch();
  Write("batch", "full", EncodeBatch(full));
  Batch empty;
  empty.agent = "h/1";
  empty.sequence = 1;
  empty.host = "h";
  Write("batch", "empty", EncodeBatch(empty));
  Batch scalars = full;
  scalars.seconds = {{1'700'000'000, {}, {{1, 0.0}, {1, -1e300}}, {}}};
  Write("batch", "scalars", EncodeBatch(scalars));
  Batch bad = full;
  bad.seconds[0].histograms[0].encoded[1] = 9;
  Write("batch", "bad_histogram", EncodeBatch(bad));
  Batch big_count = full;
  big_count.seconds[0].stacks[0].count = UINT64_MAX;
  big_count.seconds[0].histograms[0].encoded = Hist({{5, uint64_t{1} << 62}}).Encode();
  Write("batch", "big_counts", EncodeBatch(big_count));

  // ack
  Write("ack", "applied", EncodeAck({7, Ack::Status::kApplied, "", 8}));
  Write("ack", "rejected", EncodeAck({9, Ack::Status::kRejected, "second 0: bad", 10}));
  Write("ack", "need_dictionary", EncodeAck({3, Ack::Status::kNeedDictionary, "", 2}));

  // histogram: [cut byte] A B
  const std::string h1 = Hist({{3, 2}, {200, 1}, {1000, 1}}).Encode();
  const std::string h2 = Hist({{0, 1}, {UINT64_MAX, 1}}).Encode();
  const std::string h3 = Hist({{1'000'000, uint64_t{1} << 61}}).Encode();
  const std::string h0 = Histogram().Encode();
  auto cut = [](const std::string& a, const std::string& b) {
    return std::string(1, static_cast<char>(a.size())) + a + b;
  };
  Write("histogram", "example", cut(h1, h2));
  Write("histogram", "empty", cut(h0, h1));
  Write("histogram", "near_bound", cut(h3, h3));
  Write("histogram", "one", cut(h1, ""));
  // Runs of neighbouring buckets with one-byte gaps and counts (read four at a time), broken by
  // a two-byte count and a two-byte gap: one part of each kind.
  std::vector<std::pair<uint64_t, uint64_t>> runs;
  for (uint64_t v = 1'000; v < 1'200; v += 9) runs.push_back({v, 1 + v % 5});
  runs.push_back({1'300, 200});
  for (uint64_t v = 2'000'000; v < 2'300'000; v += 15'000) runs.push_back({v, 1 + v % 7});
  const std::string h4 = Hist(runs).Encode();
  Write("histogram", "runs", cut(h4, h1));

  // stacks: [cut1 cut2] EXISTING OPERAND1 OPERAND2
  using aggregator::EncodeStackCounts;
  const std::string s1 = EncodeStackCounts({{3, 5}, {10, 1}});
  const std::string s2 = EncodeStackCounts({{1, 1}, {3, 2}, {UINT32_MAX, 7}});
  const std::string s3 = EncodeStackCounts({{10, UINT64_MAX - 1}});
  auto cut2 = [](const std::string& a, const std::string& b, const std::string& c) {
    return std::string(1, static_cast<char>(a.size())) +
           std::string(1, static_cast<char>(b.size())) + a + b + c;
  };
  Write("stacks", "three", cut2(s1, s2, s1));
  Write("stacks", "no_existing", cut2("", s1, s2));
  Write("stacks", "overflow", cut2(s1, s3, ""));

  // query: [0 = query, 1 = answer] MESSAGE
  Query hq;
  hq.id = 4;
  hq.histograms = {"disk.latency", 1'700'000'000, 1'700'000'060, 10, "host", {"web-1"},
                   "op == \"read\" and latency > 1ms", false};
  Write("query", "histograms", std::string(1, '\0') + EncodeQuery(hq));
  Query sq;
  sq.kind = Query::Kind::kStacks;
  sq.stacks = {"cpu.stacks", 1'700'000'000, 1'700'000'060, {}, "execname =~ \"ng.*\"", "host"};
  Write("query", "stacks", std::string(1, '\0') + EncodeQuery(sq));
  Query mq;
  mq.kind = Query::Kind::kMetrics;
  Write("query", "metrics", std::string(1, '\0') + EncodeQuery(mq));
  Answer a;
  a.id = 4;
  a.shard = "agg-1";
  a.histograms.unit = "ns";
  a.histograms.groups = {"web-1", ""};
  a.histograms.cells = {{0, 0, Hist({{1500, 2}})}, {3, 1, Hist({{9, 1}})}};
  Write("query", "answer", std::string(1, '\1') + EncodeAnswer(a));
  Answer sa;
  sa.kind = Query::Kind::kStacks;
  sa.stacks.stacks = {{"main;work", 5}, {"main;[truncated]", 1}};
  Write("query", "answer_stacks", std::string(1, '\1') + EncodeAnswer(sa));
  Answer ma;
  ma.kind = Query::Kind::kMetrics;
  ma.metrics = {{"disk.latency", MetricKind::kLatency, "ns", {"op"}, "read latency"}};
  ma.error = "";
  Write("query", "answer_metrics", std::string(1, '\1') + EncodeAnswer(ma));
  return 0;
}
