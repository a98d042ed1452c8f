#include "agent/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace trailmap {

Result<Child> SpawnChild(const SpawnSpec& spec) {
  if (spec.argv.empty()) return Status::InvalidArgument("cannot run '': no program named");
  std::vector<char*> args;
  for (const std::string& a : spec.argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int out[2] = {-1, -1}, err[2] = {-1, -1};
  const auto close_all = [&] {
    for (int fd : {out[0], out[1], err[0], err[1]}) {
      if (fd >= 0) close(fd);
    }
  };
  if ((spec.pipe_stdout && pipe2(out, O_CLOEXEC) != 0) ||
      (spec.pipe_stderr && pipe2(err, O_CLOEXEC) != 0)) {
    const int e = errno;
    close_all();
    return Status::IOError(std::string("pipe: ") + std::strerror(e));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  if (spec.pipe_stdout) {
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  } else {
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  }
  if (spec.pipe_stderr) {
    posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  } else if (!spec.stderr_file.empty()) {
    posix_spawn_file_actions_addopen(&actions, 2, spec.stderr_file.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
  } else {
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  }
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 34)
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
#endif
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  if (spec.own_group) {
    flags |= POSIX_SPAWN_SETPGROUP;
    posix_spawnattr_setpgroup(&attr, 0);
  }
  posix_spawnattr_setflags(&attr, flags);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, args[0], &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  for (int* fd : {&out[1], &err[1]}) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
  }
  if (rc != 0) {
    close_all();
    return Status::NotFound("cannot run '" + spec.argv[0] + "': " + std::strerror(rc));
  }
  return Child{pid, out[0], err[0], spec.own_group};
}

int ReapChild(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

int StopChild(Child* child, int sig, std::chrono::milliseconds grace) {
  if (!child->running()) return 0;
  const pid_t target = child->group ? -child->pid : child->pid;
  kill(target, sig);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  int status = 0;
  while (true) {
    const pid_t r = waitpid(child->pid, &status, WNOHANG);
    if (r == child->pid || (r < 0 && errno != EINTR)) break;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(target, SIGKILL);
      status = ReapChild(child->pid);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (int* fd : {&child->out_fd, &child->err_fd}) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
  }
  child->pid = -1;
  return status;
}

std::string DescribeWaitStatus(int status, int* code) {
  int c = -1000;
  std::string text = "ended";
  if (WIFEXITED(status)) {
    c = WEXITSTATUS(status);
    text = "exited with status " + std::to_string(c);
  } else if (WIFSIGNALED(status)) {
    c = -WTERMSIG(status);
    text = std::string("was killed by ") + strsignal(WTERMSIG(status));
  }
  if (code != nullptr) *code = c;
  return text;
}

}  // namespace trailmap
