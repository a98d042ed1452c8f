// The ReDoS predicate `host =~ "(a+)+$"` over a host named "aaaa...a!", matched by
// std::regex (what core/predicate.cc used before: backtracking, exponential in the name's length)
// and by RE2 (what it uses now: linear), and through Predicate::Matches. Figures in
// docs/BENCHMARKS.md ("Bounded queries and admission").
//   build-rel/bin/regex_bench --benchmark_filter='Redos'
#include <benchmark/benchmark.h>

#include <map>
#include <regex>
#include <string>

#include <re2/re2.h>

#include "core/predicate.h"

namespace {

std::string RedosHost(int letters) { return std::string(letters, 'a') + "!"; }

void BM_StdRegexRedos(benchmark::State& state) {
  const std::regex re("(a+)+$", std::regex::ECMAScript | std::regex::optimize);
  const std::string host = RedosHost(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(std::regex_match(host, re));
}
// 26 letters is the issue's case (7.5 s then); every 2 more letters takes about 4 times longer.
BENCHMARK(BM_StdRegexRedos)->DenseRange(16, 26, 2)->Unit(benchmark::kMillisecond)->Iterations(1);

void BM_Re2Redos(benchmark::State& state) {
  const re2::RE2 re("(a+)+$");
  const std::string host = RedosHost(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(re2::RE2::FullMatch(host, re));
}
BENCHMARK(BM_Re2Redos)->Arg(26)->Arg(1000)->Arg(100000)->Unit(benchmark::kMicrosecond);

class OneField : public trailmap::FieldLookup {
 public:
  explicit OneField(std::string host) : host_(std::move(host)) {}
  const std::string* Find(std::string_view name) const override {
    return name == "host" ? &host_ : nullptr;
  }

 private:
  std::string host_;
};

// What an aggregator pays per (host, series) it decides on.
void BM_PredicateRedos(benchmark::State& state) {
  const trailmap::Predicate p = trailmap::Predicate::Parse(R"(host =~ "(a+)+$")").value();
  const OneField fields(RedosHost(static_cast<int>(state.range(0))));
  for (auto _ : state) benchmark::DoNotOptimize(p.Matches(fields));
}
BENCHMARK(BM_PredicateRedos)->Arg(26)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
