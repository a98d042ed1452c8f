#include "tests/fault_load.h"

#include <chrono>
#include <thread>

#include "tests/stats_json.h"

namespace trailmap::test {

void SendEvents(int port, const std::string& metric, size_t n) {
  std::string packet;
  for (size_t i = 0; i < n; ++i) {
    packet += metric + ":" + std::to_string(1 + i % 50) + "|ms\n";
    if ((i + 1) % 20 == 0 || i + 1 == n) {
      SendUdp(port, packet);
      packet.clear();
    }
  }
}

void SleepUntilMsOfSecond(int ms) {
  using namespace std::chrono;
  const auto now = system_clock::now();
  const auto into = duration_cast<milliseconds>(now.time_since_epoch()) % 1000;
  auto wait = milliseconds(ms) - into;
  if (wait <= milliseconds(0)) wait += seconds(1);
  std::this_thread::sleep_for(wait);
}

std::optional<uint64_t> StoredCount(const std::vector<std::unique_ptr<Aggregator>>& aggregators,
                                    const std::string& metric) {
  CommandResult r = Cli({"stats", "--metric", metric, "--from", "-1h", "--format", "json"},
                        QueryList(aggregators));
  if (r.exit_code != 0) return std::nullopt;
  uint64_t total = 0;
  for (const auto& [group, stats] : ParseStats(r.out)) total += stats.count;
  return total;
}

uint64_t WaitForCount(const std::vector<std::unique_ptr<Aggregator>>& aggregators,
                      const std::string& metric, uint64_t want, std::chrono::milliseconds timeout) {
  uint64_t last = 0;
  WaitFor(
      [&] {
        const std::optional<uint64_t> n = StoredCount(aggregators, metric);
        if (n) last = *n;
        return n && *n == want;
      },
      timeout);
  return last;
}

int64_t LoggedCounter(const std::string& log, const std::string& name) {
  const std::string key = " " + name + "=";
  const size_t at = log.rfind(key);
  if (at == std::string::npos) return -1;
  return std::stoll(log.substr(at + key.size()));
}

}  // namespace trailmap::test
