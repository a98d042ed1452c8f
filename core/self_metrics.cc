#include "core/self_metrics.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <sstream>

namespace trailmap {
namespace {

void Add(SelfReadings* readings, bool counter, std::string metric, std::string unit,
         std::string description, double value, std::string fields) {
  SelfReading r;
  r.series.metric = std::move(metric);
  r.series.kind = MetricKind::kScalar;
  r.series.unit = std::move(unit);
  r.series.fields = std::move(fields);
  r.series.description = std::move(description);
  r.counter = counter;
  r.value = value;
  readings->push_back(std::move(r));
}

uint64_t Nanos(const timeval& t) {
  return static_cast<uint64_t>(t.tv_sec) * 1'000'000'000 + static_cast<uint64_t>(t.tv_usec) * 1000;
}

}  // namespace

void AddGauge(SelfReadings* readings, std::string metric, std::string unit, std::string description,
              double value, std::string fields) {
  Add(readings, false, std::move(metric), std::move(unit), std::move(description), value,
      std::move(fields));
}

void AddCounter(SelfReadings* readings, std::string metric, std::string unit,
                std::string description, uint64_t total, std::string fields) {
  Add(readings, true, std::move(metric), std::move(unit), std::move(description),
      static_cast<double>(total), std::move(fields));
}

std::vector<double> CounterDeltas::Take(const SelfReadings& readings) {
  std::vector<double> values;
  values.reserve(readings.size());
  std::string key;
  for (const SelfReading& r : readings) {
    if (!r.counter) {
      values.push_back(r.value);
      continue;
    }
    key.assign(r.series.metric).push_back('\0');
    key.append(r.series.fields);
    auto [it, first] = last_.try_emplace(key, 0.0);
    values.push_back(r.value >= it->second ? r.value - it->second : r.value);
    it->second = r.value;
  }
  return values;
}

Result<uint64_t> ParseStatmResidentPages(std::string_view text) {
  const size_t space = text.find(' ');
  if (space == std::string_view::npos) {
    return Status::InvalidArgument("statm: no resident field in '" +
                                   std::string(text.substr(0, 64)) + "'");
  }
  std::string_view rest = text.substr(space + 1);
  rest = rest.substr(0, rest.find_first_of(" \n"));
  uint64_t pages = 0;
  const auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), pages);
  if (error != std::errc() || end != rest.data() + rest.size() || rest.empty()) {
    return Status::InvalidArgument("statm: resident field '" + std::string(rest) +
                                   "' is not a number");
  }
  return pages;
}

Result<ProcessStats> ReadProcessStats(const std::string& proc_self) {
  ProcessStats stats;
  const std::string statm_path = proc_self + "/statm";
  std::ifstream statm(statm_path);
  std::stringstream text;
  text << statm.rdbuf();
  if (!statm) return Status::IOError("cannot read " + statm_path);
  Result<uint64_t> pages = ParseStatmResidentPages(text.str());
  if (!pages.ok()) return Status::IOError(statm_path + ": " + pages.status().message());
  stats.rss_bytes = *pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));

  const std::string fd_path = proc_self + "/fd";
  DIR* dir = opendir(fd_path.c_str());
  if (dir == nullptr) return Status::IOError("cannot list " + fd_path);
  uint64_t entries = 0;
  while (const dirent* e = readdir(dir)) {
    if (e->d_name[0] != '.') ++entries;
  }
  closedir(dir);
  // The listing holds the descriptor it was read through; /proc/self of another process does not.
  stats.open_fds = entries > 0 && proc_self == "/proc/self" ? entries - 1 : entries;

  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) == 0) {
    stats.user_cpu_ns = Nanos(usage.ru_utime);
    stats.system_cpu_ns = Nanos(usage.ru_stime);
  }
  return stats;
}

void AddProcessReadings(std::string_view prefix, const ProcessStats& stats,
                        SelfReadings* readings) {
  const std::string p = std::string(prefix) + ".process.";
  AddGauge(readings, p + "rss", "B", "resident memory of the process",
           static_cast<double>(stats.rss_bytes));
  AddGauge(readings, p + "fds", "fds", "open file descriptors of the process",
           static_cast<double>(stats.open_fds));
  const std::string cpu = "CPU time of the process in each mode; per second, 1s = one core busy";
  AddCounter(readings, p + "cpu", "ns", cpu, stats.user_cpu_ns, "mode=user");
  AddCounter(readings, p + "cpu", "ns", cpu, stats.system_cpu_ns, "mode=system");
}

}  // namespace trailmap
