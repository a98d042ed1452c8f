#include "agent/folded_source.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/counts.h"

namespace trailmap {
namespace {

struct Collected {
  std::mutex mu;
  std::vector<StackSample> samples;
  StackSink Sink() {
    return [this](StackSample&& s) {
      std::lock_guard<std::mutex> lock(mu);
      samples.push_back(std::move(s));
    };
  }
  size_t size() {
    std::lock_guard<std::mutex> lock(mu);
    return samples.size();
  }
  // fields|frames joined by ';' → summed count
  std::map<std::string, uint64_t> ByKey() {
    std::lock_guard<std::mutex> lock(mu);
    std::map<std::string, uint64_t> out;
    for (const StackSample& s : samples) {
      std::string k = s.fields + "|";
      for (size_t i = 0; i < s.frames.size(); ++i) k += (i ? ";" : "") + s.frames[i];
      out[k] += s.count;
    }
    return out;
  }
};

bool WaitFor(const std::function<bool()>& done, int ms = 5000) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

std::string FreshDir() {
  std::string t = ::testing::TempDir() + "/folded-XXXXXX";
  EXPECT_NE(mkdtemp(t.data()), nullptr);
  return t;
}

int ConnectUnix(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

void WriteAll(int fd, std::string_view s) {
  while (!s.empty()) {
    const ssize_t n = write(fd, s.data(), s.size());
    ASSERT_GT(n, 0) << strerror(errno);
    s.remove_prefix(static_cast<size_t>(n));
  }
}

TEST(FoldedLineParser, GoodLinesTimesFieldsAndComments) {
  FoldedSourceOptions o;
  o.fields = {{"service", "api"}};
  FoldedLineParser p(o, o.fields);
  auto r = p.Parse("main;foo;bar 5", 1700000000);
  ASSERT_TRUE(r.ok && r.has_sample);
  EXPECT_EQ(r.sample.second, 1700000000);
  EXPECT_EQ(r.sample.metric, "app.stacks");
  EXPECT_EQ(r.sample.fields, "service=api");
  EXPECT_EQ(r.sample.frames, (std::vector<std::string>{"main", "foo", "bar"}));
  EXPECT_EQ(r.sample.count, 5u);

  r = p.Parse("@1690000000\tmain;do work  7\r", 1700000000);  // frames may hold spaces
  ASSERT_TRUE(r.ok && r.has_sample);
  EXPECT_EQ(r.sample.second, 1690000000);
  EXPECT_EQ(r.sample.frames, (std::vector<std::string>{"main", "do work"}));
  EXPECT_EQ(r.sample.count, 7u);

  for (const char* nothing : {"", "   ", "# a comment", "#fieldsx=1"}) {
    r = p.Parse(nothing, 1);
    EXPECT_TRUE(r.ok && !r.has_sample) << nothing;
  }
  r = p.Parse("#fields service=web,pod=p-1", 1);
  EXPECT_TRUE(r.ok && !r.has_sample);
  r = p.Parse("a 1", 1);
  EXPECT_EQ(r.sample.fields, "pod=p-1,service=web");  // the line's value wins; canonical order
  r = p.Parse("#fields bad field=1", 1);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("#fields: "), std::string::npos) << r.error;
  r = p.Parse("a 1", 1);
  EXPECT_EQ(r.sample.fields, "pod=p-1,service=web") << "a bad #fields keeps the previous ones";
}

TEST(FoldedLineParser, BadLinesSayWhy) {
  FoldedSourceOptions o;
  FoldedLineParser p(o, {});
  const std::pair<const char*, const char*> cases[] = {
      {"main;foo", "no count after the stack (want \"frame;frame COUNT\")"},
      {"main;foo x", "count 'x' is not a whole number from 1 to 2^40"},
      {"main;foo 2.5", "count '2.5' is not a whole number from 1 to 2^40"},
      {"main;foo 0", "count '0' is not a whole number from 1 to 2^40"},
      {"main;foo -3", "count '-3' is not a whole number from 1 to 2^40"},
      {"main;foo 99999999999999999999",
       "count '99999999999999999999' is not a whole number from 1 to 2^40"},
      {"main;;foo 1", "empty frame (frame 2) in the stack"},
      {";foo 1", "empty frame (frame 1) in the stack"},
      {"main; 1", "empty frame (frame 2) in the stack"},
      {"@17x a 1", "time '@17x' is not @UNIX_SECONDS"},
      {"@ a 1", "time '@' is not @UNIX_SECONDS"},
      {"#fields host", "#fields: 'host' is not KEY=VALUE"},
  };
  for (const auto& [line, why] : cases) {
    const auto r = p.Parse(line, 1);
    EXPECT_FALSE(r.ok) << line;
    EXPECT_EQ(r.error, why) << line;
  }
}

TEST(FoldedLineParser, ALineCarriesAtMostTheItemBound) {
  FoldedSourceOptions o;
  FoldedLineParser p(o, {});
  auto r = p.Parse("main;foo 1099511627776", 1);  // 2^40
  ASSERT_TRUE(r.ok && r.has_sample) << r.error;
  EXPECT_EQ(r.sample.count, kMaxItemCount);
  for (const char* line : {"main;foo 1099511627777", "main;foo 9223372036854775807"}) {
    r = p.Parse(line, 1);
    EXPECT_FALSE(r.ok) << line;
    EXPECT_TRUE(r.over_count) << line;
    EXPECT_NE(r.error.find("is more than one line may carry (2^40 = 1099511627776)"),
              std::string::npos)
        << r.error;
  }
  r = p.Parse("main;foo 1099511627777", 1);
  EXPECT_EQ(r.error, "count 1099511627777 is more than one line may carry (2^40 = 1099511627776)");
  r = p.Parse("main;foo x", 1);
  EXPECT_FALSE(r.over_count);
}

TEST(FoldedLineParser, DepthAndFrameLengthAreBounded) {
  FoldedSourceOptions o;
  o.max_depth = 3;
  o.max_frame_bytes = 4;
  FoldedLineParser p(o, {});
  const auto r = p.Parse("a;bbbbbbb;c;d;e 2", 1);
  ASSERT_TRUE(r.ok && r.has_sample);
  EXPECT_EQ(r.sample.frames, (std::vector<std::string>{"a", "bbbb", "c"}));
  EXPECT_TRUE(r.truncated_stack);
  EXPECT_EQ(r.truncated_frames, 1u);
}

// Three clients at once on a real unix socket, each its own stream with its own #fields and
// line numbers, good and bad lines interleaved; a last line without '\n' counts on close.
TEST(FoldedSource, UnixSocketManyClients) {
  const std::string dir = FreshDir();
  Collected got;
  FoldedSourceOptions o;
  o.socket = dir + "/stacks.sock";
  o.fields = {{"team", "core"}};
  o.metric = "app.cpu";
  {
    std::ofstream stale(o.socket);  // a regular file there is refused, not replaced
  }
  {
    FoldedSource refused(o, got.Sink());
    const Status s = refused.Start();
    EXPECT_NE(s.message().find("exists and is not a socket"), std::string::npos) << s.message();
  }
  unlink(o.socket.c_str());
  FoldedSource source(o, got.Sink());
  ASSERT_TRUE(source.Start().ok());

  int fds[3];
  for (int& fd : fds) {
    fd = ConnectUnix(o.socket);
    ASSERT_GE(fd, 0);
  }
  WriteAll(fds[0], "#fields service=a\nmain;x 3\nmain;x 2\n");
  WriteAll(fds[1], "#fields service=b\nmain;y 1\nbroken line\n");
  WriteAll(fds[2], "main;z 4\nmain;;z 1\nmain;x ");  // a line split across writes
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  WriteAll(fds[2], "6\n@1700000000 main;late 9");
  for (int fd : fds) close(fd);

  ASSERT_TRUE(WaitFor([&] { return got.size() == 6; })) << got.size();
  const auto by_key = got.ByKey();
  const std::map<std::string, uint64_t> want{
      {"service=a,team=core|main;x", 5}, {"service=b,team=core|main;y", 1}, {"team=core|main;z", 4},
      {"team=core|main;x", 6},           {"team=core|main;late", 9},
  };
  EXPECT_EQ(by_key, want);
  {
    std::lock_guard<std::mutex> lock(got.mu);
    for (const StackSample& s : got.samples) {
      EXPECT_EQ(s.metric, "app.cpu");
      if (s.frames.back() == "late") {
        EXPECT_EQ(s.second, 1700000000);
      }
    }
  }
  ASSERT_TRUE(WaitFor([&] { return source.stats().malformed == 2; }));
  const FoldedSourceStats st = source.stats();
  EXPECT_EQ(st.clients, 3u);
  EXPECT_EQ(st.lines, 10u);
  EXPECT_EQ(st.samples, 6u);
  ASSERT_EQ(st.recent_errors.size(), 2u);
  std::vector<std::string> errors = st.recent_errors;
  std::sort(errors.begin(), errors.end());
  EXPECT_EQ(errors[0],
            "socket client 2 line 3: count 'line' is not a whole number from 1 to 2^40: "
            "'broken line'");
  EXPECT_EQ(errors[1], "socket client 3 line 2: empty frame (frame 2) in the stack: 'main;;z 1'");

  // Still accepting after bad lines and closed clients.
  const int again = ConnectUnix(o.socket);
  ASSERT_GE(again, 0);
  WriteAll(again, "main;again 1\n");
  close(again);
  ASSERT_TRUE(WaitFor([&] { return got.size() == 7; }));
  source.Stop();
  struct stat sb {};
  EXPECT_NE(stat(o.socket.c_str(), &sb), 0) << "the socket file is removed on Stop";
}

// A FIFO: writers come and go, the source keeps reading; a line too long is rejected alone.
TEST(FoldedSource, FifoWithComingAndGoingWriters) {
  const std::string dir = FreshDir();
  const std::string fifo = dir + "/stacks.fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  Collected got;
  FoldedSourceOptions o;
  o.path = fifo;
  o.max_line_bytes = 64;
  FoldedSource source(o, got.Sink());
  ASSERT_TRUE(source.Start().ok());
  for (int round = 0; round < 3; ++round) {
    const int fd = open(fifo.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    WriteAll(fd, "main;round" + std::to_string(round) + " " + std::to_string(round + 1) + "\n");
    if (round == 1) WriteAll(fd, std::string(100, 'z') + " 1\nmain;after 1\nmain 1 x\n");
    close(fd);
    ASSERT_TRUE(
        WaitFor([&] { return got.size() >= static_cast<size_t>(round + 1 + (round > 0)); }));
  }
  const auto by_key = got.ByKey();
  const std::map<std::string, uint64_t> want{
      {"|main;round0", 1}, {"|main;round1", 2}, {"|main;after", 1}, {"|main;round2", 3}};
  EXPECT_EQ(by_key, want);
  const FoldedSourceStats st = source.stats();
  EXPECT_EQ(st.malformed, 2u);
  EXPECT_FALSE(st.path_done);
  ASSERT_EQ(st.recent_errors.size(), 2u);
  EXPECT_EQ(st.recent_errors[0], "file " + fifo + " line 3: line longer than 64 bytes");
  EXPECT_EQ(st.recent_errors[1], "file " + fifo +
                                     " line 5: count 'x' is not a whole number from 1 to 2^40: "
                                     "'main 1 x'");
  source.Stop();
}

TEST(FoldedSource, FileReadOnceAndFollowed) {
  const std::string dir = FreshDir();
  const std::string path = dir + "/app.folded";
  {
    std::ofstream out(path);
    out << "# from a profiler\nmain;a 10\nmain;b nope\n@1700000005 main;a 1\nmain;c 2";
  }
  {
    Collected got;
    FoldedSourceOptions o;
    o.path = path;
    FoldedSource source(o, got.Sink());
    ASSERT_TRUE(source.Start().ok());
    ASSERT_TRUE(WaitFor([&] { return source.stats().path_done; }));
    EXPECT_EQ(got.ByKey(), (std::map<std::string, uint64_t>{{"|main;a", 11}, {"|main;c", 2}}));
    EXPECT_EQ(source.stats().malformed, 1u);
    EXPECT_EQ(source.stats().lines, 5u);
  }
  {
    Collected got;
    FoldedSourceOptions o;
    o.path = path;
    o.follow = true;
    o.poll_ms = 20;
    FoldedSource source(o, got.Sink());
    ASSERT_TRUE(source.Start().ok());
    // The unterminated "main;c 2" waits for its newline while following.
    ASSERT_TRUE(WaitFor([&] { return got.size() == 2; }));
    {
      std::ofstream out(path, std::ios::app);
      out << "1\nmain;d 4\n";
    }
    ASSERT_TRUE(WaitFor([&] { return got.size() == 4; }));
    EXPECT_EQ(got.ByKey(),
              (std::map<std::string, uint64_t>{{"|main;a", 11}, {"|main;c", 21}, {"|main;d", 4}}));
    EXPECT_FALSE(source.stats().path_done);
  }
  FoldedSource missing({.path = dir + "/nope"}, [](StackSample&&) {});
  const Status s = missing.Start();
  EXPECT_EQ(s.message(), "folded source: cannot open " + dir + "/nope: No such file or directory");
  FoldedSource nothing(FoldedSourceOptions{}, [](StackSample&&) {});
  EXPECT_EQ(nothing.Start().message(), "folded source: neither a path nor a socket is set");
}

TEST(FoldedSource, StandardInputToItsEnd) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const int saved = dup(0);
  ASSERT_EQ(dup2(fds[0], 0), 0);
  close(fds[0]);
  Collected got;
  FoldedSourceOptions o;
  o.path = "-";
  FoldedSource source(o, got.Sink());
  const Status started = source.Start();
  dup2(saved, 0);  // the source reads its own duplicate
  close(saved);
  ASSERT_TRUE(started.ok()) << started.message();
  WriteAll(fds[1], "#fields app=x\na;b 2\nnope\na;b 3");
  close(fds[1]);
  ASSERT_TRUE(WaitFor([&] { return source.stats().path_done; }));
  EXPECT_EQ(got.ByKey(), (std::map<std::string, uint64_t>{{"app=x|a;b", 5}}));
  EXPECT_EQ(source.stats().recent_errors,
            std::vector<std::string>{"standard input line 3: no count after the stack (want "
                                     "\"frame;frame COUNT\"): 'nope'"});
}

TEST(FoldedSource, ClientsOverTheLimitAreClosed) {
  const std::string dir = FreshDir();
  Collected got;
  FoldedSourceOptions o;
  o.socket = dir + "/s.sock";
  o.max_clients = 2;
  FoldedSource source(o, got.Sink());
  ASSERT_TRUE(source.Start().ok());
  const int a = ConnectUnix(o.socket), b = ConnectUnix(o.socket);
  ASSERT_TRUE(WaitFor([&] { return source.stats().clients == 2; }));
  const int c = ConnectUnix(o.socket);
  ASSERT_TRUE(WaitFor([&] { return source.stats().clients_refused == 1; }));
  char byte;
  EXPECT_EQ(read(c, &byte, 1), 0) << "the third connection is closed";
  WriteAll(a, "x 1\n");
  WriteAll(b, "y 1\n");
  ASSERT_TRUE(WaitFor([&] { return got.size() == 2; }));
  for (int fd : {a, b, c}) close(fd);
}

// A sink that throws (a bug below it) unwinds the source's event loop: caught at the thread's
// boundary, logged and counted, and the loop runs on, so the next client is still read.
TEST(FoldedSource, AnUnexpectedErrorInItsThreadIsCountedAndItReadsOn) {
  const std::string dir = FreshDir();
  FoldedSourceOptions o;
  o.socket = dir + "/stacks.sock";
  std::mutex mu;
  std::vector<std::string> got;
  bool thrown = false;
  FoldedSource source(o, [&mu, &got, &thrown](StackSample&& s) {
    std::lock_guard lock(mu);
    if (!thrown) {
      thrown = true;
      throw std::runtime_error("sink failed");
    }
    got.push_back(s.frames.empty() ? "" : s.frames.back());
  });
  testing::internal::CaptureStderr();
  ASSERT_TRUE(source.Start().ok());
  const int first = ConnectUnix(o.socket);
  ASSERT_GE(first, 0);
  ASSERT_GT(write(first, "main;a 1\n", 9), 0);
  const bool counted = WaitFor([&] { return source.stats().thread_failures == 1; });
  const int second = ConnectUnix(o.socket);
  ASSERT_GE(second, 0);
  ASSERT_GT(write(second, "main;b 2\n", 9), 0);
  const bool read_on = WaitFor([&] {
    std::lock_guard lock(mu);
    return !got.empty();
  });
  close(first);
  close(second);
  source.Stop();
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(counted) << log;
  EXPECT_TRUE(read_on) << log;
  EXPECT_NE(log.find("folded stacks: unexpected error: sink failed"), std::string::npos) << log;
}

}  // namespace
}  // namespace trailmap
