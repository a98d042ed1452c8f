#include "net/accept_loop.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <chrono>
#include <cstdlib>
#include <future>
#include <thread>
#include <vector>

namespace trailmap {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using namespace std::chrono_literals;

TEST(ConnectionsWithin, LeavesDescriptorsForTheRest) {
  EXPECT_EQ(ConnectionsWithin(512, 0), 512u);  // the limit unknown
  EXPECT_EQ(ConnectionsWithin(512, 64), 32u);
  EXPECT_EQ(ConnectionsWithin(512, 255), 127u);
  EXPECT_EQ(ConnectionsWithin(512, 256), 128u);
  EXPECT_EQ(ConnectionsWithin(512, 600), 472u);
  EXPECT_EQ(ConnectionsWithin(512, 1024), 512u);
  EXPECT_EQ(ConnectionsWithin(512, 1), 1u);
  EXPECT_EQ(ConnectionsWithin(0, 1024), 1u);
}

// An acceptor on loopback whose io_context runs on a thread of its own, and the connections the
// loop served (their sockets and slots), kept until Drop.
class Listener {
 public:
  explicit Listener(AcceptLoopOptions options) {
    acceptor_.open(tcp::v4());
    acceptor_.bind(tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    acceptor_.listen();
    loop_ = std::make_unique<AcceptLoop>(acceptor_, std::move(options),
                                         [this](tcp::socket socket, ConnectionSlot slot) {
                                           served_.emplace_back(std::move(socket), std::move(slot));
                                         });
    loop_->Start();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~Listener() {
    io_.stop();
    thread_.join();
    loop_.reset();
  }
  tcp::endpoint endpoint() const { return acceptor_.local_endpoint(); }
  AcceptLoop& loop() { return *loop_; }
  // Closes the first connection served (on the I/O thread), freeing its slot.
  void DropFirst() {
    std::promise<void> done;
    asio::post(io_, [this, &done] {
      served_.erase(served_.begin());
      done.set_value();
    });
    done.get_future().wait();
  }

 private:
  asio::io_context io_;
  tcp::acceptor acceptor_{io_};
  std::unique_ptr<AcceptLoop> loop_;
  std::vector<std::pair<tcp::socket, ConnectionSlot>> served_;  // the I/O thread's
  std::thread thread_;
};

bool WaitUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

TEST(AcceptLoop, ClosesConnectionsPastTheCapAtOnce) {
  Listener listener(AcceptLoopOptions{.name = "test", .max_connections = 2});
  asio::io_context io;
  std::vector<tcp::socket> clients;
  for (int i = 0; i < 3; ++i) {
    clients.emplace_back(io);
    clients.back().connect(listener.endpoint());
  }
  // The third is closed without a byte.
  char byte;
  boost::system::error_code ec;
  EXPECT_EQ(asio::read(clients[2], asio::buffer(&byte, 1), ec), 0u);
  EXPECT_EQ(ec, asio::error::eof);
  ASSERT_TRUE(WaitUntil([&] { return listener.loop().counts().refused == 1; }, 2s));
  AcceptCounts c = listener.loop().counts();
  EXPECT_EQ(c.open, 2u);
  EXPECT_EQ(c.accepted, 2u);
  EXPECT_EQ(c.failed, 0u);
  // One closes: the next is served.
  listener.DropFirst();
  EXPECT_EQ(listener.loop().counts().open, 1u);
  clients.emplace_back(io);
  clients.back().connect(listener.endpoint());
  ASSERT_TRUE(WaitUntil([&] { return listener.loop().counts().accepted == 3; }, 2s));
  c = listener.loop().counts();
  EXPECT_EQ(c.open, 2u);
  EXPECT_EQ(c.refused, 1u);
}

// Lowers the soft RLIMIT_NOFILE to just above the highest descriptor open and fills the gaps
// below it, so that no descriptor is left; the destructor gives everything back.
class NoDescriptorLeft {
 public:
  NoDescriptorLeft() {
    getrlimit(RLIMIT_NOFILE, &was_);
    int highest = 0;
    DIR* dir = opendir("/proc/self/fd");
    while (const dirent* entry = readdir(dir))
      highest = std::max(highest, std::atoi(entry->d_name));
    closedir(dir);
    rlimit low = was_;
    low.rlim_cur = static_cast<rlim_t>(highest) + 1;
    setrlimit(RLIMIT_NOFILE, &low);
    for (int fd = open("/dev/null", O_RDONLY); fd >= 0; fd = open("/dev/null", O_RDONLY)) {
      fillers_.push_back(fd);
    }
  }
  ~NoDescriptorLeft() {
    for (int fd : fillers_) close(fd);
    setrlimit(RLIMIT_NOFILE, &was_);
  }

 private:
  rlimit was_{};
  std::vector<int> fillers_;
};

// Without a descriptor for the accepted connection the accept fails at once, again and again:
// the loop pauses instead, and when one of its connections closes it tries again at once,
// however long its pause.
TEST(AcceptLoop, PausesWhileNoDescriptorIsLeftAndResumesWhenOneCloses) {
  Listener listener(AcceptLoopOptions{
      .name = "test", .max_connections = 100, .first_pause = 5s, .longest_pause = 60s});
  asio::io_context io;
  tcp::socket held(io), waiting(io);
  held.connect(listener.endpoint());
  ASSERT_TRUE(WaitUntil([&] { return listener.loop().counts().accepted == 1; }, 2s));
  waiting.open(tcp::v4());  // its descriptor now: connect needs none
  auto exhausted = std::make_unique<NoDescriptorLeft>();
  waiting.connect(listener.endpoint());
  const bool failed = WaitUntil([&] { return listener.loop().counts().failed >= 1; }, 2s);
  std::this_thread::sleep_for(300ms);
  const AcceptCounts c = listener.loop().counts();  // before the descriptors are back
  exhausted.reset();
  ASSERT_TRUE(failed);
  EXPECT_EQ(c.failed, 1u) << "tried again within its 5 s pause";
  EXPECT_EQ(c.accepted, 1u);
  // A connection closing ends the pause.
  listener.DropFirst();
  ASSERT_TRUE(WaitUntil([&] { return listener.loop().counts().accepted == 2; }, 2s));
  EXPECT_EQ(listener.loop().counts().failed, 1u);
}

}  // namespace
}  // namespace trailmap
