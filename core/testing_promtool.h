// For tests: Prometheus' own linter on exposition text (Debian's prometheus package installs
// promtool; scripts/install-deps). Test-only, header-only: no library links it.
#pragma once

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

namespace trailmap::testing {

// "" when `promtool check metrics` accepts `text` silently; else what it said (or why it could
// not run), with its exit status.
inline std::string PromtoolCheck(const std::string& text) {
  char path[] = "/tmp/trailmap-promtool-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return "cannot make a temporary file";
  const bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  if (!written) {
    unlink(path);
    return "cannot write " + std::string(path);
  }
  const std::string command = "promtool check metrics < " + std::string(path) + " 2>&1";
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) {
    unlink(path);
    return "cannot run promtool";
  }
  std::string said;
  char buffer[512];
  while (fgets(buffer, sizeof buffer, p) != nullptr) said += buffer;
  const int status = pclose(p);
  unlink(path);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
    return "promtool is missing: run scripts/install-deps";
  }
  if (said.empty() && WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  return said + "(promtool exit status " + std::to_string(WEXITSTATUS(status)) + ")";
}

}  // namespace trailmap::testing
