#include "agent/statsd_server.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/udp.hpp>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "core/log.h"

namespace trailmap {

namespace asio = boost::asio;
using asio::ip::udp;

struct StatsdServer::Impl {
  Impl(StatsdServerOptions o, Bucketizer* b)
      : options(std::move(o)), bucketizer(b), socket(io), buffer(64 * 1024) {}

  int64_t Now() const {
    if (options.clock) return options.clock();
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }

  void Receive() {
    socket.async_receive_from(asio::buffer(buffer), sender,
                              [this](const boost::system::error_code& error, size_t bytes) {
                                // `this` outlives the socket: the destructor stops io first.
                                try {
                                  OnPacket(error, bytes);
                                } catch (const std::exception& e) {
                                  Log(std::string("statsd: unexpected error: ") + e.what());
                                }
                                if (error != asio::error::operation_aborted) Receive();
                              });
  }

  void OnPacket(const boost::system::error_code& error, size_t bytes) {
    if (error == asio::error::operation_aborted) return;
    if (error) {
      Log("statsd: receive failed: " + error.message());
      return;
    }
    const StatsdPacket packet = ParseStatsdPacket(std::string_view(buffer.data(), bytes));
    const int64_t second = Now();
    for (const StatsdSample& s : packet.samples) {
      bucketizer->Add(second, SeriesDef{s.metric, MetricKind::kLatency, "ns", s.fields}, s.value_ns,
                      s.count);
    }
    uint64_t rejected_before = 0;
    {
      std::lock_guard<std::mutex> lock(mu);
      rejected_before = counters.lines_rejected;
      ++counters.packets;
      counters.lines_accepted += packet.samples.size();
      counters.lines_rejected += packet.errors.size();
      for (const StatsdError& e : packet.errors) {
        ++counters.rejected_by_reason[static_cast<size_t>(e.reason)];
      }
    }
    for (size_t i = 0; i < packet.errors.size(); ++i) {
      const uint64_t n = rejected_before + i + 1;  // this rejection's rank, from 1
      const uint64_t every = std::max<uint64_t>(1, options.log_every_rejections);
      if (n <= options.log_first_rejections || n % every == 0) {
        Log("statsd: rejected from " + sender.address().to_string() + " (" + std::to_string(n) +
            " rejected so far): " + packet.errors[i].message);
      }
    }
  }

  StatsdServerOptions options;
  Bucketizer* bucketizer;  // not owned
  asio::io_context io;
  udp::socket socket;
  udp::endpoint sender;      // filled by each receive
  std::vector<char> buffer;  // one datagram
  mutable std::mutex mu;
  StatsdCounters counters;  // guarded by mu
  std::thread thread;
};

Result<std::unique_ptr<StatsdServer>> StatsdServer::Start(StatsdServerOptions options,
                                                          Bucketizer* bucketizer) {
  const std::string where = options.address + ":" + std::to_string(options.port);
  auto impl = std::make_unique<Impl>(std::move(options), bucketizer);
  boost::system::error_code error;
  // An IP literal, or a name such as localhost (resolved once, the first address is bound).
  udp::endpoint endpoint;
  if (const asio::ip::address address = asio::ip::make_address(impl->options.address, error);
      !error) {
    endpoint = udp::endpoint(address, impl->options.port);
  } else {
    udp::resolver resolver(impl->io);
    const auto results = resolver.resolve(udp::v4(), impl->options.address,
                                          std::to_string(impl->options.port), error);
    if (error || results.empty()) {
      return Status::InvalidArgument("statsd address '" + where +
                                     "': not an IP address, and the name does not resolve" +
                                     (error ? " (" + error.message() + ")" : std::string()));
    }
    endpoint = results.begin()->endpoint();
  }
  impl->socket.open(endpoint.protocol(), error);
  if (!error) impl->socket.bind(endpoint, error);
  if (error) return Status::IOError("cannot bind statsd UDP " + where + ": " + error.message());
  // A larger kernel buffer absorbs bursts while the thread is busy; best effort.
  impl->socket.set_option(asio::socket_base::receive_buffer_size(4 << 20), error);
  impl->Receive();
  Impl* raw = impl.get();
  impl->thread = std::thread([raw] { raw->io.run(); });  // joined in ~StatsdServer
  return std::unique_ptr<StatsdServer>(new StatsdServer(std::move(impl)));
}

StatsdServer::StatsdServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

StatsdServer::~StatsdServer() {
  impl_->io.stop();
  impl_->thread.join();
}

StatsdCounters StatsdServer::counters() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->counters;
}

uint16_t StatsdServer::port() const {
  boost::system::error_code error;
  return impl_->socket.local_endpoint(error).port();
}

}  // namespace trailmap
