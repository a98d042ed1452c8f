#include "aggregator/server/agent_limits.h"

#include <algorithm>
#include <cmath>

namespace trailmap::aggregator {
namespace {

// Agents whose refusals are kept by name (the rest are only in the total).
constexpr size_t kKeptRefused = 64;

std::string FormatRate(double rate) {
  if (rate >= 10) return std::to_string(static_cast<uint64_t>(std::llround(rate)));
  std::string text = std::to_string(rate);
  text.erase(text.find_last_not_of('0') + 1);
  if (!text.empty() && text.back() == '.') text.pop_back();
  return text;
}

}  // namespace

const char* AgentLimitName(AgentLimit limit) {
  switch (limit) {
    case AgentLimit::kBatches:
      return "batches";
    case AgentLimit::kBytes:
      return "bytes";
    case AgentLimit::kValues:
      return "values";
    case AgentLimit::kDefinitions:
      return "definitions";
    case AgentLimit::kNewSeries:
      return "new_series";
  }
  return "unknown";
}

uint64_t AgentRefusals::total() const {
  uint64_t sum = 0;
  for (uint64_t n : by_limit) sum += n;
  return sum;
}

AgentLimiter::AgentLimiter(AgentLimits limits) : limits_(limits) {}

double AgentLimiter::Rate(size_t limit) const {
  switch (static_cast<AgentLimit>(limit)) {
    case AgentLimit::kBatches:
      return limits_.batches_per_second;
    case AgentLimit::kBytes:
      return limits_.bytes_per_second;
    case AgentLimit::kValues:
      return limits_.values_per_second;
    case AgentLimit::kDefinitions:
      return limits_.definitions_per_second;
    case AgentLimit::kNewSeries:
      return limits_.new_series_per_minute / 60;
  }
  return 0;
}

std::optional<LimitRefusal> AgentLimiter::Admit(const std::string& agent, const BatchCost& cost,
                                                Clock::time_point now) {
  const std::array<double, kAgentLimitCount> costs = {cost.batches, cost.bytes, cost.values,
                                                      cost.definitions, cost.new_series};
  auto it = agents_.find(agent);
  if (it == agents_.end()) {
    if (agents_.size() >= limits_.max_agents) Forget(now);
    Agent fresh;
    for (size_t i = 0; i < kAgentLimitCount; ++i) fresh.tokens[i] = Rate(i) * limits_.burst_seconds;
    fresh.last = now;
    it = agents_.emplace(agent, fresh).first;
  }
  Agent& a = it->second;
  const double elapsed = std::max(0.0, std::chrono::duration<double>(now - a.last).count());
  a.last = std::max(a.last, now);
  // The bucket that is furthest from admitting, if any.
  std::optional<size_t> short_of;
  double wait_s = 0;
  for (size_t i = 0; i < kAgentLimitCount; ++i) {
    const double rate = Rate(i);
    if (rate <= 0) continue;
    a.tokens[i] = std::min(rate * limits_.burst_seconds, a.tokens[i] + elapsed * rate);
    if (costs[i] > 0 && a.tokens[i] <= 0) {
      // Back above zero after -tokens/rate; a little more, so the resend finds it so.
      const double wait = (-a.tokens[i] + std::min(costs[i], rate * 0.01)) / rate;
      if (!short_of || wait > wait_s) {
        short_of = i;
        wait_s = wait;
      }
    }
  }
  if (!short_of) {
    for (size_t i = 0; i < kAgentLimitCount; ++i) {
      if (Rate(i) > 0) a.tokens[i] -= costs[i];
    }
    return std::nullopt;
  }
  LimitRefusal refusal;
  refusal.limit = static_cast<AgentLimit>(*short_of);
  refusal.retry_after_ms =
      static_cast<uint32_t>(std::clamp(std::ceil(wait_s * 1000), 1.0, 60'000.0));
  const bool per_minute = refusal.limit == AgentLimit::kNewSeries;
  refusal.reason = "rate-limited: agent " + agent + " is over its " +
                   FormatRate(per_minute ? limits_.new_series_per_minute : Rate(*short_of)) + " " +
                   AgentLimitName(refusal.limit) + (per_minute ? "/min" : "/s") +
                   " (aggregator [limits]); resend after " +
                   std::to_string(refusal.retry_after_ms) + " ms";
  ++total_.by_limit[*short_of];
  auto r = refused_.find(agent);
  if (r == refused_.end()) {
    if (refused_.size() >= kKeptRefused) {
      auto least = std::min_element(
          refused_.begin(), refused_.end(),
          [](const auto& x, const auto& y) { return x.second.total() < y.second.total(); });
      refused_.erase(least);
    }
    r = refused_.emplace(agent, AgentRefusals{}).first;
  }
  ++r->second.by_limit[*short_of];
  return refusal;
}

std::vector<std::pair<std::string, AgentRefusals>> AgentLimiter::TopRefused(size_t n) const {
  std::vector<std::pair<std::string, AgentRefusals>> top(refused_.begin(), refused_.end());
  std::sort(top.begin(), top.end(), [](const auto& x, const auto& y) {
    return x.second.total() != y.second.total() ? x.second.total() > y.second.total()
                                                : x.first < y.first;
  });
  if (top.size() > n) top.resize(n);
  return top;
}

void AgentLimiter::Forget(Clock::time_point now) {
  // Idle past a burst: its buckets are full again, so forgetting it changes nothing.
  const auto idle = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(std::max(limits_.burst_seconds, 60.0)));
  std::erase_if(agents_,
                [&now, &idle](const auto& entry) { return now - entry.second.last > idle; });
  if (agents_.size() < limits_.max_agents) return;
  // Every one is busy: forget the longest idle half (they start full, as a new agent would).
  std::vector<Clock::time_point> lasts;
  lasts.reserve(agents_.size());
  for (const auto& [name, a] : agents_) lasts.push_back(a.last);
  auto middle = lasts.begin() + static_cast<std::ptrdiff_t>(lasts.size() / 2);
  std::nth_element(lasts.begin(), middle, lasts.end());
  const Clock::time_point cut = *middle;
  std::erase_if(agents_, [cut](const auto& entry) { return entry.second.last <= cut; });
}

}  // namespace trailmap::aggregator
