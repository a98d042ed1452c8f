// Child processes of the agent's perf and exec sources: spawned the same way, stopped the same
// way, and their ends described the same way.
//
// SpawnChild runs argv[0] (searched in PATH when it has no '/') with stdin from /dev/null,
// stdout and stderr each to a pipe, to a file (stderr only) or to /dev/null, every signal at its
// default action and none blocked (the agent blocks some for its sigtimedwait, and a child must
// see SIGINT and SIGTERM), and no descriptor of the agent's past 2 (not even one opened without
// O_CLOEXEC, like a socket). With `own_group` it leads a new process group, so StopChild reaches
// a shell's children too.
//
// Not thread-safe per Child; different children may be handled on different threads.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "core/status.h"

namespace trailmap {

struct SpawnSpec {
  std::vector<std::string> argv;  // argv[0] is the program
  bool pipe_stdout = false;       // else /dev/null
  bool pipe_stderr = false;       // else to stderr_file, or /dev/null when that is ""
  // Opened O_APPEND, truncated at the spawn: the parent may truncate it while the child writes.
  std::string stderr_file;
  bool own_group = false;
};

struct Child {
  pid_t pid = -1;
  int out_fd = -1;  // read ends of the pipes asked for, else -1; StopChild closes them
  int err_fd = -1;
  bool group = false;  // leads its own process group
  bool running() const { return pid > 0; }
};

// NotFound "cannot run 'PROGRAM': REASON" when it cannot be started; IOError when no pipe could
// be made.
Result<Child> SpawnChild(const SpawnSpec& spec);

// waitpid, retrying on EINTR; the raw wait status.
int ReapChild(pid_t pid);

// Sends `sig` (to the whole group for a group leader), waits up to `grace` for the exit, then
// sends SIGKILL. Closes the pipes. Returns the wait status; 0 for a child not running.
int StopChild(Child* child, int sig, std::chrono::milliseconds grace);

// "exited with status 1", "was killed by Killed"; *code (if not null) gets the exit status, or
// -signal, or -1000 for anything else.
std::string DescribeWaitStatus(int status, int* code = nullptr);

}  // namespace trailmap
