#include "tests/stored_events.h"

#include <gtest/gtest.h>

#include <chrono>
#include <zmq.hpp>

#include "core/query_wire.h"
#include "tests/harness.h"

namespace trailmap::test {

uint64_t StoredEvents(const std::string& query_endpoint, const std::string& metric,
                      int64_t seconds) {
  zmq::context_t context;
  zmq::socket_t dealer(context, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.set(zmq::sockopt::rcvtimeo, 30000);
  UseTestKeys(dealer);
  dealer.connect("tcp://" + query_endpoint);
  const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  Query q;
  q.id = 1;
  q.histograms.metric = metric;
  q.histograms.to = now + 1;
  q.histograms.from = q.histograms.to - seconds;
  q.histograms.step = static_cast<uint32_t>(seconds);
  dealer.send(zmq::buffer(EncodeQuery(q)), zmq::send_flags::none);
  zmq::message_t reply;
  if (!dealer.recv(reply)) return 0;
  Result<Answer> a = DecodeAnswer({static_cast<const char*>(reply.data()), reply.size()});
  EXPECT_TRUE(a.ok() && a->error.empty()) << (a.ok() ? a->error : a.status().ToString());
  uint64_t total = 0;
  if (a.ok()) {
    for (const QueryCell& c : a->histograms.cells) total += c.histogram.count();
  }
  return total;
}

}  // namespace trailmap::test
