// What the system tests need to run trailmap as a user does: real processes, real ports, real
// directories. Nothing here fakes a component.
//
// Not thread-safe; one test drives its processes from one thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace trailmap::test {

// Path of a built program: "trailmap", "trailmap-agent", "trailmap-aggregator", "trailmap-loadgen".
std::string Binary(const std::string& name);

// A fresh directory under $TMPDIR, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A port nothing listens on right now (TCP and UDP), from the kernel's ephemeral range.
int FreePort();

// A child process whose stdout and stderr go to files (so a chatty child never blocks).
// Destruction kills it (SIGKILL) if it still runs.
class Process {
 public:
  Process(std::vector<std::string> argv, const std::string& log_dir, const std::string& name);
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  bool Running();
  void Kill(int signal);
  // Waits for exit (up to `timeout`), returns the exit code, or -signal if killed, or -1000 on timeout.
  int Wait(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  std::string Stdout() const;
  std::string Stderr() const;

 private:
  pid_t pid_ = -1;
  int status_ = 0;
  bool exited_ = false;
  std::string out_path_, err_path_;
};

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};
// Runs a program to completion (killed after `timeout`) and returns what it said.
CommandResult RunProgram(const std::vector<std::string>& argv, std::chrono::milliseconds timeout = std::chrono::seconds(60));

// Sends one UDP datagram to 127.0.0.1:port.
void SendUdp(int port, const std::string& payload);

// Polls `done` every 50 ms until it returns true or `timeout` passes; returns the last result.
bool WaitFor(const std::function<bool()>& done, std::chrono::milliseconds timeout);

std::string ReadFile(const std::string& path);
void WriteFile(const std::string& path, const std::string& text);

}  // namespace trailmap::test
