#include "core/failpoint.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/log.h"

namespace trailmap {
namespace {

struct Failpoint {
  enum class Action { kKill, kError, kSleep } action = Action::kError;
  int sleep_ms = 0;
  uint64_t at = 0;  // fire at this hit only; 0 = every hit
  std::atomic<uint64_t> hits{0};
};

using FailpointTable = std::map<std::string, std::unique_ptr<Failpoint>, std::less<>>;

// Parses TRAILMAP_FAILPOINTS (grammar in the header). A spec that does not parse is logged and
// ignored: a fault test then fails on its own assertions, and the log says why.
FailpointTable Parse(std::string_view text) {
  FailpointTable table;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    std::string_view spec = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    const size_t eq = spec.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      Log("TRAILMAP_FAILPOINTS: '" + std::string(spec) + "' is not name=action");
      continue;
    }
    auto point = std::make_unique<Failpoint>();
    std::string_view action = spec.substr(eq + 1);
    if (const size_t at = action.find('@'); at != std::string_view::npos) {
      point->at = std::strtoull(std::string(action.substr(at + 1)).c_str(), nullptr, 10);
      action = action.substr(0, at);
    }
    if (action == "kill") {
      point->action = Failpoint::Action::kKill;
    } else if (action == "error") {
      point->action = Failpoint::Action::kError;
    } else if (action.starts_with("sleep:")) {
      point->action = Failpoint::Action::kSleep;
      point->sleep_ms = std::atoi(std::string(action.substr(6)).c_str());
    } else {
      Log("TRAILMAP_FAILPOINTS: unknown action '" + std::string(action) +
          "' (kill, error, sleep:MS)");
      continue;
    }
    table.emplace(std::string(spec.substr(0, eq)), std::move(point));
  }
  return table;
}

// The table for the current value of TRAILMAP_FAILPOINTS: parsed again (hit counts from 0)
// whenever the variable changes, so a test may set it after an earlier failpoint was reached.
// Tables are kept for the process's life, so a reference handed out stays valid.
const FailpointTable& Table() {
  static std::mutex mu;
  static std::string text;
  static std::vector<std::unique_ptr<FailpointTable>> tables;
  const char* env = std::getenv("TRAILMAP_FAILPOINTS");
  const std::string now = env ? env : "";
  std::lock_guard lock(mu);
  if (tables.empty() || now != text) {
    text = now;
    tables.push_back(std::make_unique<FailpointTable>(Parse(now)));
  }
  return *tables.back();
}

}  // namespace

bool FailpointFires(std::string_view name) {
  const FailpointTable& table = Table();
  auto it = table.find(name);
  if (it == table.end()) return false;
  Failpoint& point = *it->second;
  const uint64_t hit = point.hits.fetch_add(1) + 1;
  if (point.at != 0 && hit != point.at) return false;
  switch (point.action) {
    case Failpoint::Action::kKill:
      Log("failpoint " + std::string(name) + " fires: kill (hit " + std::to_string(hit) + ")");
      raise(SIGKILL);
      return true;
    case Failpoint::Action::kSleep:
      std::this_thread::sleep_for(std::chrono::milliseconds(point.sleep_ms));
      return false;
    case Failpoint::Action::kError:
      return true;
  }
  return false;
}

}  // namespace trailmap
