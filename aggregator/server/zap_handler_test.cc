#include "aggregator/server/zap_handler.h"

#include <gtest/gtest.h>
#include <zmq.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>
#include <zmq.hpp>

#include "aggregator/server/router_server.h"
#include "core/curve_socket.h"

namespace trailmap::aggregator {
namespace {

std::vector<std::string> CurveRequest(const std::string& key_bytes) {
  return {"1.0", "7", "ingest", "127.0.0.1", "", "CURVE", key_bytes};
}

TEST(ZapRequestTest, ParsesAndDecides) {
  const std::string key(32, 'k');
  const std::vector<ClientKey> keys = {{"web-1", Z85Encode(key), true, false, {"web-1"}}};
  Result<ZapRequest> r = ParseZapRequest(CurveRequest(key));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->domain, "ingest");
  EXPECT_EQ(r->public_key, Z85Encode(key));
  ZapDecision d = DecideZap(*r, keys);
  EXPECT_TRUE(d.admitted);
  EXPECT_EQ(ZapReplyFrames("7", d),
            (std::vector<std::string>{"1.0", "7", "200", "OK", "web-1", ""}));

  r = ParseZapRequest(CurveRequest(std::string(32, 'x')));
  ASSERT_TRUE(r.ok());
  d = DecideZap(*r, keys);
  EXPECT_FALSE(d.admitted);
  EXPECT_EQ(d.reason, "key " + Z85Encode(std::string(32, 'x')) + " is not listed");
  EXPECT_EQ(ZapReplyFrames("7", d)[2], "400");

  r = ParseZapRequest({"1.0", "8", "", "127.0.0.1", "", "NULL"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(DecideZap(*r, keys).reason, "mechanism NULL refused; CURVE only");

  EXPECT_EQ(ParseZapRequest({"1.0", "1"}).status().message(),
            "ZAP request of 2 frames; at least 6 expected");
  EXPECT_EQ(ParseZapRequest({"2.0", "1", "", "", "", "CURVE", key}).status().message(),
            "ZAP version \"2.0\"; only 1.0 is known");
  EXPECT_EQ(ParseZapRequest(CurveRequest("short")).status().message(),
            "ZAP CURVE request without one 32-byte key frame");
  EXPECT_EQ(ZapReplyFrames("9", ZapDecision{}, /*malformed=*/true)[2], "500");
}

// A reload never takes an empty list by accident: a file truncated, or left with blank lines and
// comments only, is refused while keys are listed; the marker line takes it; a file that does not
// parse is refused with its line; a list that was empty may stay empty.
TEST(ClientKeysForReloadTest, RefusesAnEmptyFileUnlessItSaysSo) {
  const std::string key = Z85Encode(std::string(32, 'k'));
  const std::string refusal =
      "clients file /etc/clients lists no client key (a file meant to admit no one must hold "
      "the line \"# trailmap: no clients\")";
  for (const std::string text :
       {"", "\n", "  \n\t\n", "# web-1 removed\n\n", "\r\n", "# trailmap: no clients, please\n"}) {
    EXPECT_EQ(ClientKeysForReload(text, "/etc/clients", 3).status().message(), refusal)
        << "\"" << text << "\"";
  }
  for (const std::string text : {"# trailmap: no clients\n", "\n  # trailmap: no clients \r\n",
                                 "# all gone\n\t# trailmap: no clients"}) {
    Result<std::vector<ClientKey>> keys = ClientKeysForReload(text, "/etc/clients", 3);
    ASSERT_TRUE(keys.ok()) << keys.status().ToString();
    EXPECT_TRUE(keys->empty());
  }
  Result<std::vector<ClientKey>> none = ClientKeysForReload("", "/etc/clients", 0);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  Result<std::vector<ClientKey>> one =
      ClientKeysForReload("web-1 " + key + " ingest web-1\n", "/etc/clients", 3);
  ASSERT_TRUE(one.ok());
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ((*one)[0].name, "web-1");
  // Half a line (a write caught midway): refused with its line, whatever the marker says.
  EXPECT_TRUE(
      ClientKeysForReload("# trailmap: no clients\nweb-1 " + key.substr(0, 17), "/etc/clients", 3)
          .status()
          .message()
          .starts_with("/etc/clients:2: "));
}

// ReloadKeysFrom keeps the keys it has when it refuses, counts each refusal, and says so.
TEST(ClientKeysForReloadTest, TheHandlerKeepsItsKeysAndCountsARefusal) {
  const std::string dir = ::testing::TempDir();
  const std::string path = dir + "/zap_reload_clients";
  const std::string key = Z85Encode(std::string(32, 'k'));
  zmq::context_t context;
  ZapHandler zap(&context, {{"web-1", key, true, false, {"web-1"}}});
  { std::ofstream(path) << ""; }
  Result<std::string> r = zap.ReloadKeysFrom(path);
  EXPECT_EQ(r.status().message(),
            "clients file " + path +
                " lists no client key (a file meant to admit no one must hold the line \"# "
                "trailmap: no clients\"); kept the 1 client keys as they were");
  EXPECT_EQ(zap.key_count(), 1u);
  EXPECT_NE(zap.Find("web-1"), nullptr);
  EXPECT_EQ(zap.ReloadKeysFrom(dir + "/no_such_clients_file").status().message(),
            "cannot read " + dir + "/no_such_clients_file; kept the 1 client keys as they were");
  EXPECT_EQ(zap.counters().reloads_refused, 2u);
  { std::ofstream(path) << "web-2 " << key << " ingest web-2\n"; }
  r = zap.ReloadKeysFrom(path);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, "clients file " + path + " read again: 1 client keys (were 1)");
  EXPECT_EQ(zap.Find("web-1"), nullptr);
  EXPECT_NE(zap.Find("web-2"), nullptr);
  { std::ofstream(path) << "# trailmap: no clients\n"; }
  r = zap.ReloadKeysFrom(path);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, "clients file " + path + " read again: 0 client keys (were 1)");
  EXPECT_EQ(zap.counters().reloads_refused, 2u);
  std::remove(path.c_str());
}

struct KeyPair {
  std::string public_key, secret_key;
};
KeyPair NewPair() {
  char p[41], s[41];
  EXPECT_EQ(zmq_curve_keypair(p, s), 0);
  return {p, s};
}

// A CURVE ROUTER with `server`'s pair on a free loopback port, in the ZAP domain "ingest".
RouterServer::Options IngestOn(const KeyPair& server) {
  RouterServer::Options options;
  options.endpoint = "tcp://127.0.0.1:*";
  options.curve_secret_key = server.secret_key;
  options.zap_domain = "ingest";
  return options;
}

// A listed key reaches the handler with its name; an unlisted one and a plaintext client never do.
TEST(ZapHandlerTest, AdmitsListedKeysAndNamesTheirRequests) {
  zmq::context_t context;
  const KeyPair server = NewPair(), listed = NewPair(), unlisted = NewPair();
  ZapHandler zap(&context, {{"web-1", listed.public_key, true, false, {"web-1"}}});
  ASSERT_TRUE(zap.Start().ok());
  RouterServer router(
      &context, IngestOn(server),
      RouterServer::PeerHandler([](const Result<std::string_view>& payload,
                                   const RouterServer::Peer& peer) -> std::optional<std::string> {
        return peer.key_name + ":" + std::string(payload.ok() ? *payload : "");
      }));
  ASSERT_TRUE(router.Start().ok());

  auto ask = [&](const KeyPair* own, int timeout_ms) -> std::optional<std::string> {
    zmq::socket_t dealer(context, zmq::socket_type::dealer);
    dealer.set(zmq::sockopt::linger, 0);
    dealer.set(zmq::sockopt::rcvtimeo, timeout_ms);
    if (own != nullptr) {
      ApplyCurveClient(dealer,
                       CurveClient{"", own->public_key, own->secret_key, server.public_key, false});
    }
    dealer.connect(router.endpoint());
    dealer.send(zmq::str_buffer("hello"));
    zmq::message_t reply;
    if (!dealer.recv(reply)) return std::nullopt;
    return reply.to_string();
  };
  EXPECT_EQ(ask(&listed, 10'000), "web-1:hello");
  EXPECT_EQ(ask(&unlisted, 500), std::nullopt);
  EXPECT_EQ(ask(nullptr, 500), std::nullopt);
  EXPECT_EQ(zap.counters().admitted, 1u);
  EXPECT_GE(zap.counters().refused, 1u);  // the unlisted client retries its handshake
  EXPECT_EQ(zap.counters().malformed, 0u);
  ASSERT_NE(zap.Find("web-1"), nullptr);
  EXPECT_EQ(zap.Find("nobody"), nullptr);
  router.Stop();
  zap.Stop();
}

// The count that status and self-metrics show follows a reservation's expiry even when no
// monitor event comes after it: a client that got ZAP's 200 and left before its handshake
// completed. (It used to be refreshed only on events, so the last such client stayed counted.)
TEST(ZapHandlerTest, AnExpiredReservationLeavesTheCountWithNoLaterEvent) {
  zmq::context_t context;
  const KeyPair listed = NewPair();
  ZapOptions options;
  options.max_connections = 10;
  options.reservation_ttl = std::chrono::milliseconds(1000);
  ZapHandler zap(&context, {{"web-1", listed.public_key, true, false, {"web-1"}}}, options);
  ASSERT_TRUE(zap.Start().ok());
  // The request a CURVE handshake would make, with no connection behind it: ZAP says 200 and
  // reserves a slot, and no handshake event will ever come for it.
  Result<std::string> key = Z85Decode(listed.public_key);
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  zmq::socket_t req(context, zmq::socket_type::req);
  req.set(zmq::sockopt::linger, 0);
  req.set(zmq::sockopt::rcvtimeo, 5000);
  req.connect(kZapEndpoint);
  const std::vector<std::string> frames = CurveRequest(*key);
  for (size_t i = 0; i < frames.size(); ++i) {
    req.send(zmq::buffer(frames[i]),
             i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
  }
  std::vector<std::string> reply;
  for (bool more = true; more;) {
    zmq::message_t frame;
    ASSERT_TRUE(req.recv(frame));
    more = frame.more();
    reply.push_back(frame.to_string());
  }
  ASSERT_GE(reply.size(), 3u);
  EXPECT_EQ(reply[2], "200");
  auto wait_for = [&](size_t want, std::chrono::milliseconds within) {
    const auto deadline = std::chrono::steady_clock::now() + within;
    while (zap.connections("ingest") != want && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return zap.connections("ingest");
  };
  EXPECT_EQ(wait_for(1, std::chrono::milliseconds(800)), 1u);  // reserved, shown
  EXPECT_EQ(wait_for(0, std::chrono::milliseconds(5000)), 0u);  // expired, shown
  zap.Stop();
}

// What a client's HandshakeWatch (core/curve_socket.h) makes of each way a handshake fails: a
// server key that is not the server's, a key the ZAP handler does not list, a plaintext client
// of a CURVE server; and nothing once a listed key with the right server key got through.
TEST(ZapHandlerTest, AClientsHandshakeWatchSaysWhyItsHandshakeFailed) {
  zmq::context_t context;
  const KeyPair server = NewPair(), listed = NewPair(), unlisted = NewPair(), other = NewPair();
  ZapHandler zap(&context, {{"web-1", listed.public_key, true, false, {"web-1"}}});
  ASSERT_TRUE(zap.Start().ok());
  RouterServer router(
      &context, IngestOn(server),
      RouterServer::PeerHandler([](const Result<std::string_view>&, const RouterServer::Peer&)
                                    -> std::optional<std::string> { return "ok"; }));
  ASSERT_TRUE(router.Start().ok());
  // What the watch says within 10 s (or when the first answer came: "").
  auto watched = [&](const KeyPair& own, const std::string& server_key) {
    zmq::socket_t dealer(context, zmq::socket_type::dealer);
    dealer.set(zmq::sockopt::linger, 0);
    ApplyCurveClient(dealer,
                     CurveClient{"web-1", own.public_key, own.secret_key, server_key, false});
    std::string failure;
    {
      HandshakeWatch watch(context, dealer, "web-1");
      dealer.connect(router.endpoint());
      dealer.send(zmq::str_buffer("hello"), zmq::send_flags::dontwait);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (std::chrono::steady_clock::now() < deadline) {
        zmq::pollitem_t item{dealer.handle(), 0, ZMQ_POLLIN, 0};
        zmq::poll(&item, 1, std::chrono::milliseconds(20));
        if (item.revents & ZMQ_POLLIN) break;
        failure = watch.Failure();
        if (!failure.empty()) break;
      }
    }
    return failure;
  };
  EXPECT_EQ(watched(listed, server.public_key), "");
  EXPECT_EQ(watched(listed, other.public_key),
            "CURVE handshake failed: the server closed the connection, as it does when the "
            "server key given for it is not its own (check server_key in the cluster file, or "
            "--server-key)");
  EXPECT_EQ(watched(unlisted, server.public_key),
            "CURVE handshake refused (ZAP status 400): key web-1 is not listed there (add it to "
            "that aggregator's clients file)");
  EXPECT_EQ(DescribeHandshakeFailure(ZMQ_EVENT_HANDSHAKE_FAILED_AUTH, 300, "web-1"),
            "CURVE handshake refused for now (ZAP status 300: the server is at its connection "
            "cap); retrying");
  EXPECT_EQ(DescribeHandshakeFailure(ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL,
                                     ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH, "web-1"),
            "CURVE handshake failed: the server does not speak CURVE (started with "
            "--insecure-plaintext?)");
  router.Stop();
  zap.Stop();
}

}  // namespace
}  // namespace trailmap::aggregator
