#include "aggregator/scan/query_budget.h"

#include <string>

namespace trailmap::aggregator {
namespace {

// The advice every over-budget error ends with, by what the limit measures. A scan visits every
// key of its range and family (kept or not), so fewer hosts read fewer keys only as less work.
constexpr const char* kNarrowKeys = "; narrow it: a larger --step (coarser rollups) or a shorter range";
constexpr const char* kNarrowScan =
    "; narrow it: a larger --step, fewer hosts (--where, --hosts) or a shorter range";
constexpr const char* kNarrowCells =
    "; narrow it: a larger --step, fewer groups (--by, --where) or a shorter range";
constexpr const char* kNarrowStacks =
    "; narrow it: a shorter range or fewer hosts (--hosts, --where), or ask for more "
    "(--max-keys, --max-cells, up to the aggregator's [queries] limits)";
constexpr const char* kNarrowGroups =
    "; narrow it: group by a field with fewer values (--by) or keep fewer (--where, --hosts)";

Status Over(const std::string& what, const char* limit, const char* advice) {
  return Status::ResourceExhausted(kOverBudget + what + " (" + limit + ")" + advice);
}

}  // namespace

QueryBudget::QueryBudget(const QueryLimits& limits, Clock::time_point start,
                         const std::atomic<bool>* stopping)
    : limits_(limits),
      deadline_(limits.deadline_ms == 0 ? Clock::time_point::max()
                                        : start + std::chrono::milliseconds(limits.deadline_ms)),
      stopping_(stopping) {}

Status QueryBudget::Check() const {
  if (stopping_ != nullptr && stopping_->load(std::memory_order_relaxed)) {
    return Status::Unavailable("the aggregator is stopping; ask again (or another replica)");
  }
  if (deadline_ != Clock::time_point::max() && Clock::now() >= deadline_) {
    return Over("not answered within its deadline of " + std::to_string(limits_.deadline_ms) +
                    " ms",
                "deadline", stacks_ ? kNarrowStacks : kNarrowScan);
  }
  return Status::Ok();
}

Status QueryBudget::ChargeKeys(uint64_t keys) {
  const uint64_t total = keys_.fetch_add(keys, std::memory_order_relaxed) + keys;
  if (limits_.max_keys != 0 && total > limits_.max_keys) {
    return Over("it read more than " + std::to_string(limits_.max_keys) + " stored keys",
                "max_keys", stacks_ ? kNarrowStacks : kNarrowKeys);
  }
  return Check();
}

Status QueryBudget::ChargeCells(uint64_t cells) {
  const uint64_t total = cells_.fetch_add(cells, std::memory_order_relaxed) + cells;
  if (limits_.max_cells != 0 && total > limits_.max_cells) {
    return Over("its answer holds more than " + std::to_string(limits_.max_cells) +
                    " cells (columns x groups, or distinct stacks)",
                "max_cells", stacks_ ? kNarrowStacks : kNarrowCells);
  }
  return Status::Ok();
}

Status QueryBudget::CheckGroups(uint64_t groups) const {
  if (limits_.max_groups != 0 && groups > limits_.max_groups) {
    return Over("its answer holds " + std::to_string(groups) + " groups, more than " +
                    std::to_string(limits_.max_groups),
                "max_groups", kNarrowGroups);
  }
  return Status::Ok();
}

Status QueryBudget::CheckAnswerBytes(uint64_t bytes) const {
  if (limits_.max_answer_bytes != 0 && bytes > limits_.max_answer_bytes) {
    return Over("its answer takes " + std::to_string(bytes) + " bytes, more than " +
                    std::to_string(limits_.max_answer_bytes),
                "max_answer_bytes", kNarrowCells);
  }
  return Status::Ok();
}

}  // namespace trailmap::aggregator
