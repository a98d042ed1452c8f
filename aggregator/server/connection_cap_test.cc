#include "aggregator/server/connection_cap.h"

#include <gtest/gtest.h>
#include <zmq.h>

namespace trailmap::aggregator {
namespace {

using namespace std::chrono_literals;
using Clock = ConnectionCap::Clock;

class ConnectionCapTest : public ::testing::Test {
 protected:
  void Event(uint16_t event, uint32_t value = 0) { cap_.OnEvent(event, value, now_); }
  // What libzmq sends for a client ZAP admitted, whose handshake completes.
  void Admitted() {
    ASSERT_TRUE(cap_.TryAdmit(now_));
    Event(ZMQ_EVENT_HANDSHAKE_SUCCEEDED);
  }
  Clock::time_point now_ = Clock::time_point() + 1h;
  ConnectionCap cap_{{.max_admitted = 3}};
};

// Four connect at once: every ACCEPTED comes before any ZAP request, as with 200 at once. The
// accepted count is no reason to refuse; the admitted one is.
TEST_F(ConnectionCapTest, AdmitsUpToTheCapWhenAllConnectAtOnce) {
  for (int fd = 10; fd < 14; ++fd) Event(ZMQ_EVENT_ACCEPTED, fd);
  EXPECT_TRUE(cap_.TryAdmit(now_));
  EXPECT_TRUE(cap_.TryAdmit(now_));
  EXPECT_TRUE(cap_.TryAdmit(now_));
  EXPECT_FALSE(cap_.TryAdmit(now_));  // three reserved: the fourth is refused
  EXPECT_EQ(cap_.admitted(now_), 3u);
  Event(ZMQ_EVENT_HANDSHAKE_SUCCEEDED);
  Event(ZMQ_EVENT_HANDSHAKE_FAILED_AUTH, 300);
  Event(ZMQ_EVENT_HANDSHAKE_SUCCEEDED);
  Event(ZMQ_EVENT_HANDSHAKE_SUCCEEDED);
  EXPECT_EQ(cap_.admitted(now_), 3u);
  EXPECT_EQ(cap_.open(), 4u);
  // The refused client drops its connection: still three admitted, still full.
  Event(ZMQ_EVENT_DISCONNECTED, 13);
  EXPECT_EQ(cap_.admitted(now_), 3u);
  EXPECT_FALSE(cap_.TryAdmit(now_));
  // One admitted goes: a new one is admitted.
  Event(ZMQ_EVENT_DISCONNECTED, 10);
  EXPECT_EQ(cap_.admitted(now_), 2u);
  Event(ZMQ_EVENT_ACCEPTED, 10);
  Admitted();
  EXPECT_FALSE(cap_.TryAdmit(now_));
}

TEST_F(ConnectionCapTest, AFailedHandshakeNeverHeldASlot) {
  Event(ZMQ_EVENT_ACCEPTED, 10);
  Admitted();
  Event(ZMQ_EVENT_ACCEPTED, 11);  // a port scan: drops before its greeting
  Event(ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL, 104);
  Event(ZMQ_EVENT_DISCONNECTED, 11);
  Event(ZMQ_EVENT_ACCEPTED, 12);  // a plaintext client at a CURVE socket
  Event(ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL, 0x10000002);
  Event(ZMQ_EVENT_DISCONNECTED, 12);
  EXPECT_EQ(cap_.admitted(now_), 1u);
  EXPECT_EQ(cap_.open(), 1u);
}

TEST_F(ConnectionCapTest, NothingHoldsASlotForever) {
  // Admitted by ZAP, then gone before its handshake completed: the reservation expires.
  Event(ZMQ_EVENT_ACCEPTED, 10);
  ASSERT_TRUE(cap_.TryAdmit(now_));
  Event(ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL, 104);
  Event(ZMQ_EVENT_DISCONNECTED, 10);
  EXPECT_EQ(cap_.admitted(now_), 1u);
  now_ += 6s;
  EXPECT_EQ(cap_.admitted(now_), 0u);
  // The one guess: an admitted connection closing while a refused one is open is taken for the
  // refused one's close (one too many counted), until the refused one closes.
  Event(ZMQ_EVENT_ACCEPTED, 11);
  Admitted();
  Event(ZMQ_EVENT_ACCEPTED, 12);
  Event(ZMQ_EVENT_HANDSHAKE_FAILED_AUTH, 400);
  Event(ZMQ_EVENT_DISCONNECTED, 11);
  EXPECT_EQ(cap_.admitted(now_), 1u);
  Event(ZMQ_EVENT_DISCONNECTED, 12);
  EXPECT_EQ(cap_.admitted(now_), 0u);
  // A refusal never seen closing is forgotten past the handshake timeout.
  Event(ZMQ_EVENT_ACCEPTED, 13);
  Event(ZMQ_EVENT_HANDSHAKE_FAILED_AUTH, 400);
  now_ += 36s;
  Event(ZMQ_EVENT_ACCEPTED, 14);
  Admitted();
  Event(ZMQ_EVENT_DISCONNECTED, 14);
  EXPECT_EQ(cap_.admitted(now_), 0u);
  Event(ZMQ_EVENT_DISCONNECTED, 13);
  EXPECT_EQ(cap_.open(), 0u);
  // And never more admitted than open, whatever events were missed.
  Event(ZMQ_EVENT_ACCEPTED, 13);
  Admitted();
  Event(ZMQ_EVENT_HANDSHAKE_SUCCEEDED);  // one too many
  EXPECT_EQ(cap_.admitted(now_), 1u);
}

// Under load a refused client may be gone before its ERROR was sent: its close then follows a
// handshake failure and the refusal is never seen closing. When everyone has gone, nothing is
// counted any more.
TEST_F(ConnectionCapTest, WhenAllHaveGoneNothingIsCounted) {
  Event(ZMQ_EVENT_ACCEPTED, 10);
  Admitted();
  Event(ZMQ_EVENT_ACCEPTED, 11);
  Event(ZMQ_EVENT_HANDSHAKE_FAILED_AUTH, 300);
  Event(ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL, 104);
  Event(ZMQ_EVENT_DISCONNECTED, 11);  // taken for a failed handshake: the refusal stays awaited
  Event(ZMQ_EVENT_DISCONNECTED, 10);  // nothing is open now, so nothing is admitted
  EXPECT_EQ(cap_.open(), 0u);
  EXPECT_EQ(cap_.admitted(now_), 0u);
  for (int fd = 20; fd < 23; ++fd) {
    Event(ZMQ_EVENT_ACCEPTED, fd);
    Admitted();
  }
  EXPECT_EQ(cap_.admitted(now_), 3u);
  EXPECT_FALSE(cap_.TryAdmit(now_));
}

TEST(ConnectionCapNoLimitTest, CountsWithoutACap) {
  ConnectionCap cap({.max_admitted = 0});
  const auto now = Clock::now();
  for (int i = 0; i < 100; ++i) {
    cap.OnEvent(ZMQ_EVENT_ACCEPTED, i, now);
    ASSERT_TRUE(cap.TryAdmit(now));
    cap.OnEvent(ZMQ_EVENT_HANDSHAKE_SUCCEEDED, 0, now);
  }
  EXPECT_EQ(cap.admitted(now), 100u);
}

}  // namespace
}  // namespace trailmap::aggregator
