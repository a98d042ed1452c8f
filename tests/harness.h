// What the system tests need to run trailmap as a user does: real processes, real ports, real
// directories. Nothing here fakes a component.
//
// Not thread-safe; one test drives its processes from one thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "net/curve_keys.h"

namespace zmq {
class socket_t;
}  // namespace zmq

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
  // Waits for exit (up to `timeout`), returns the exit code, or -signal if killed, or -1000 on
  // timeout.
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
CommandResult RunProgram(const std::vector<std::string>& argv,
                         std::chrono::milliseconds timeout = std::chrono::seconds(60));

// A TCP connection to 127.0.0.1:port whose reads time out after `read_timeout` (0 = never); the
// descriptor, or -1 when it cannot connect. The caller closes it.
int ConnectTcp(int port, std::chrono::milliseconds read_timeout = std::chrono::milliseconds(0));

// Sends one UDP datagram to 127.0.0.1:port.
void SendUdp(int port, const std::string& payload);

// Polls `done` every 50 ms until it returns true or `timeout` passes; returns the last result.
bool WaitFor(const std::function<bool()>& done, std::chrono::milliseconds timeout);

// The system clock in unix seconds.
int64_t UnixNow();

// A key pair made by `trailmap keygen NAME` in `dir`: the files and the public key (Z85).
struct TestKey {
  std::string name;
  std::string key;         // DIR/NAME.key (the secret, mode 0600)
  std::string pub;         // DIR/NAME.pub
  std::string public_key;  // Z85
};
TestKey MakeKey(const std::string& dir, const std::string& name);

// The CURVE keys every system test runs with by default, made once per test binary before its
// first test: one pair "test" that the aggregators hold and every client connects with, listed
// in a clients file with ingest,query for every host. They are exported as TRAILMAP_KEY,
// TRAILMAP_SERVER_KEY and TRAILMAP_CLIENTS, so every process a test starts uses them; a test
// that wants other keys passes --key/--server-key/--clients (flags win over the environment).
struct DefaultKeys {
  TestKey pair;
  std::string clients;  // the clients file
};
const DefaultKeys& TestKeys();

// The default keys as a client connects with them (ShipperOptions::curve of a test's Shipper).
CurveClient TestCurveClient();
// Makes a raw socket of a test a CURVE client with the default keys (before it connects).
void UseTestKeys(zmq::socket_t& socket);

std::string ReadFile(const std::string& path);
void WriteFile(const std::string& path, const std::string& text);

}  // namespace trailmap::test
