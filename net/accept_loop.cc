#include "net/accept_loop.h"

#include <algorithm>
#include <atomic>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <mutex>
#include <utility>

#include "core/log.h"

namespace trailmap {

namespace asio = boost::asio;
using asio::ip::tcp;

size_t ConnectionsWithin(size_t wanted, uint64_t open_file_limit) {
  if (open_file_limit == 0) return std::max<size_t>(1, wanted);
  const uint64_t room = open_file_limit < 256 ? open_file_limit / 2 : open_file_limit - 128;
  return static_cast<size_t>(std::max<uint64_t>(1, std::min<uint64_t>(wanted, room)));
}

struct AcceptLoop::State : std::enable_shared_from_this<State> {
  State(tcp::acceptor& a, AcceptLoopOptions o, Serve s)
      : acceptor(a), options(std::move(o)), serve(std::move(s)), timer(a.get_executor()) {
    options.max_connections = std::max<size_t>(1, options.max_connections);
  }

  void Accept() {
    acceptor.async_accept(
        [self = shared_from_this()](boost::system::error_code ec, tcp::socket socket) {
          if (ec == asio::error::operation_aborted || !self->acceptor.is_open()) return;
          try {
            if (ec) return self->Failed(ec);
            self->Accepted(std::move(socket));
          } catch (const std::exception& e) {
            Log(self->options.name + ": unexpected error accepting a connection: " + e.what());
          }
          self->Accept();
        });
  }

  void Accepted(tcp::socket socket) {
    if (failures_in_episode > 0) {
      Log(options.name + ": accepting again after " + std::to_string(failures_in_episode) +
          " failed accepts");
      failures_in_episode = 0;
      pause = std::chrono::milliseconds(0);
    }
    if (open.load() >= options.max_connections) {
      ++refused;
      if (refused_in_episode++ == 0) {
        Log(options.name + ": " + std::to_string(options.max_connections) +
            " connections open, the most it takes: closing new ones at once until one closes");
      }
      boost::system::error_code ignored;
      socket.close(ignored);
      return;
    }
    if (refused_in_episode > 0) {
      Log(options.name + ": below " + std::to_string(options.max_connections) +
          " connections again; refused " + std::to_string(refused_in_episode) + " meanwhile");
      refused_in_episode = 0;
    }
    ++open;
    ++accepted;
    // The slot's deleter keeps the state alive, so a connection may outlive the AcceptLoop.
    ConnectionSlot slot(this, [self = shared_from_this()](void*) { self->Release(); });
    serve(std::move(socket), std::move(slot));
  }

  // Pauses before the next accept: without a descriptor the backlog's connection stays, and an
  // accept at once would fail at once again.
  void Failed(const boost::system::error_code& ec) {
    ++failed;
    if (failures_in_episode++ == 0) {
      Log(options.name + ": accept failed: " + ec.message() + "; retrying after " +
          std::to_string(options.first_pause.count()) + " ms, doubling up to " +
          std::to_string(options.longest_pause.count()) +
          " ms, or when a connection closes (logged again when it accepts)");
    }
    pause = pause.count() == 0 ? options.first_pause : std::min(pause * 2, options.longest_pause);
    pausing = true;
    timer.expires_after(pause);
    timer.async_wait([self = shared_from_this()](boost::system::error_code) { self->Resume(); });
  }

  // The pause's end, or a connection closed during it (I/O thread).
  void Resume() {
    if (!pausing || !acceptor.is_open()) return;
    pausing = false;
    timer.cancel();
    Accept();
  }

  // Any thread: a connection closed.
  void Release() {
    --open;
    std::lock_guard<std::mutex> lock(alive_mu);
    if (alive) asio::post(acceptor.get_executor(), [self = shared_from_this()] { self->Resume(); });
  }

  tcp::acceptor& acceptor;
  AcceptLoopOptions options;
  Serve serve;
  asio::steady_timer timer;
  std::atomic<uint64_t> open{0}, accepted{0}, refused{0}, failed{0};
  // The I/O thread's only.
  bool pausing = false;
  std::chrono::milliseconds pause{0};
  uint64_t failures_in_episode = 0, refused_in_episode = 0;
  // False once the AcceptLoop is gone (its io_context may follow): releases post nothing then.
  std::mutex alive_mu;
  bool alive = true;
};

AcceptLoop::AcceptLoop(tcp::acceptor& acceptor, AcceptLoopOptions options, Serve serve)
    : state_(std::make_shared<State>(acceptor, std::move(options), std::move(serve))) {}

AcceptLoop::~AcceptLoop() {
  std::lock_guard<std::mutex> lock(state_->alive_mu);
  state_->alive = false;
}

void AcceptLoop::Start() { state_->Accept(); }

AcceptCounts AcceptLoop::counts() const {
  return AcceptCounts{state_->open.load(), state_->accepted.load(), state_->refused.load(),
                      state_->failed.load()};
}

const AcceptLoopOptions& AcceptLoop::options() const { return state_->options; }

}  // namespace trailmap
