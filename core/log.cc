#include "core/log.h"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <string>

namespace trailmap {
namespace {

// Set once by main() before any thread starts; read-only afterwards.
std::string& Program() {
  static std::string program = "trailmap";
  return program;
}

}  // namespace

void SetLogProgram(std::string_view name) { Program() = std::string(name); }

void Log(std::string_view line) {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[40];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
  std::string out =
      std::string(stamp) + "." + std::to_string(1000 + ms).substr(1) + "Z " + Program() + ": ";
  out.append(line);
  out.push_back('\n');
  (void)!write(STDERR_FILENO, out.data(), out.size());
}

}  // namespace trailmap
