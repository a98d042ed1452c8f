#include "agent/child_process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include <gtest/gtest.h>

namespace trailmap {
namespace {

// Everything a descriptor gives until its end.
std::string ReadAll(int fd) {
  std::string out;
  char buf[256];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  return out;
}

TEST(ChildProcessTest, PipesBothOutputsAndTellsHowItEnded) {
  SpawnSpec spec;
  spec.argv = {"sh", "-c", "echo out; echo err >&2; read x; echo \"stdin:$x\"; exit 3"};
  spec.pipe_stdout = spec.pipe_stderr = true;
  Result<Child> child = SpawnChild(spec);
  ASSERT_TRUE(child.ok()) << child.status().message();
  EXPECT_EQ(ReadAll(child->out_fd), "out\nstdin:\n");  // stdin is /dev/null
  EXPECT_EQ(ReadAll(child->err_fd), "err\n");
  int code = 0;
  EXPECT_EQ(DescribeWaitStatus(ReapChild(child->pid), &code), "exited with status 3");
  EXPECT_EQ(code, 3);
  close(child->out_fd);
  close(child->err_fd);
}

TEST(ChildProcessTest, AProgramThatCannotRunIsNamed) {
  SpawnSpec spec;
  spec.argv = {"trailmap-no-such-program"};
  Result<Child> child = SpawnChild(spec);
  ASSERT_FALSE(child.ok());
  EXPECT_EQ(child.status().message(),
            "cannot run 'trailmap-no-such-program': No such file or directory");
}

TEST(ChildProcessTest, StoppingAGroupLeaderEndsItsChildrenToo) {
  SpawnSpec spec;
  // The shell ignores nothing; its child `sleep` holds the pipe open until it dies too.
  spec.argv = {"sh", "-c", "sleep 30 & echo started; wait"};
  spec.pipe_stdout = true;
  spec.own_group = true;
  Result<Child> child = SpawnChild(spec);
  ASSERT_TRUE(child.ok()) << child.status().message();
  char buf[16];
  ASSERT_EQ(read(child->out_fd, buf, 8), 8);  // "started\n": sleep runs
  const int out = dup(child->out_fd);
  Child c = *child;
  int code = 0;
  EXPECT_EQ(DescribeWaitStatus(StopChild(&c, SIGTERM, std::chrono::seconds(5)), &code),
            "was killed by Terminated");
  EXPECT_EQ(code, -SIGTERM);
  EXPECT_FALSE(c.running());
  EXPECT_EQ(c.out_fd, -1);
  // The pipe reaches its end: the group's `sleep` is gone as well (else read blocks 30 s).
  EXPECT_EQ(ReadAll(out), "");
  close(out);
}

TEST(ChildProcessTest, AChildThatIgnoresTheSignalIsKilledAfterTheGrace) {
  SpawnSpec spec;
  spec.argv = {"sh", "-c", "trap '' TERM; echo ready; while :; do sleep 0.05; done"};
  spec.pipe_stdout = true;
  Result<Child> child = SpawnChild(spec);
  ASSERT_TRUE(child.ok());
  char buf[8];
  ASSERT_EQ(read(child->out_fd, buf, 6), 6);  // the trap is set
  Child c = *child;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(DescribeWaitStatus(StopChild(&c, SIGTERM, std::chrono::milliseconds(200))),
            "was killed by Killed");
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(200));
}

}  // namespace
}  // namespace trailmap
