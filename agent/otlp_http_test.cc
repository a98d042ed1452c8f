#include "agent/otlp_http.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include <google/protobuf/arena.h>

#include <functional>
#include <sstream>

#include "otlp/metrics_service.pb.h"
#include "otlp/status.pb.h"

namespace trailmap {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr int64_t kNow = 1'700'000'100;

// One request on its own connection, with a Content-Length or chunked (in 16 KiB chunks);
// everything the server says until it closes.
std::string Exchange(uint16_t port, const std::string& method, const std::string& headers,
                     const std::string& body, bool chunked = false) {
  asio::io_context io;
  tcp::socket socket(io);
  socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  std::string request =
      method + " /v1/metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + headers;
  if (chunked) {
    request += "Transfer-Encoding: chunked\r\n\r\n";
    for (size_t at = 0; at < body.size(); at += 16384) {
      const std::string piece = body.substr(at, 16384);
      std::ostringstream size;
      size << std::hex << piece.size() << "\r\n";
      request += size.str() + piece + "\r\n";
    }
    request += "0\r\n\r\n";
  } else {
    request += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  }
  boost::system::error_code ec;
  asio::write(socket, asio::buffer(request), ec);  // the server reads it all, even to refuse it
  std::string reply;
  asio::read(socket, asio::dynamic_buffer(reply), ec);
  return reply;
}

std::string Body(const std::string& reply) {
  const size_t at = reply.rfind("\r\n\r\n");
  return at == std::string::npos ? "" : reply.substr(at + 4);
}

// A gauge "temp" of two points: 21.5 now and 1 far in the past.
std::string TwoGauges() {
  OtlpRequest request;
  auto* metric = request.add_resource_metrics()->add_scope_metrics()->add_metrics();
  metric->set_name("temp");
  auto* good = metric->mutable_gauge()->add_data_points();
  good->set_time_unix_nano(static_cast<uint64_t>(kNow) * 1'000'000'000);
  good->set_as_double(21.5);
  auto* old = metric->mutable_gauge()->add_data_points();
  old->set_time_unix_nano(static_cast<uint64_t>(kNow - 900) * 1'000'000'000);
  old->set_as_double(1);
  return request.SerializeAsString();
}

class OtlpHttpTest : public ::testing::Test {
 protected:
  OtlpHttpTest() {
    OtlpConvertOptions options;
    options.clock = [] { return kNow; };
    converter_ = std::make_unique<OtlpConverter>(&bucketizer_, options);
    Restart(OtlpHttpOptions{4096, 65536});
  }

  // A new receiver with `options`, served as the agent serves it.
  void Restart(OtlpHttpOptions options) {
    server_.reset();
    receiver_ = std::make_unique<OtlpReceiver>(converter_.get(), options);
    MetricsHttpOptions listen{"127.0.0.1", 0, "trailmap-agent", {receiver_->Route()}};
    listen.refused = [this](unsigned status) { receiver_->CountRefused(status); };
    Result<std::unique_ptr<MetricsHttpServer>> started =
        MetricsHttpServer::Start(std::move(listen), {});
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    server_ = std::move(*started);
  }

  Bucketizer bucketizer_;
  std::unique_ptr<OtlpConverter> converter_;
  std::unique_ptr<OtlpReceiver> receiver_;
  std::unique_ptr<MetricsHttpServer> server_;
};

TEST_F(OtlpHttpTest, ProtobufAndGzipAnswerInKindWithPartialSuccess) {
  const std::string reply = Exchange(server_->port(), "POST",
                                     "Content-Type: application/x-protobuf\r\n"
                                     "Content-Encoding: gzip\r\n",
                                     Gzip(TwoGauges()));
  ASSERT_THAT(reply, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(reply, HasSubstr("Content-Type: application/x-protobuf\r\n"));
  opentelemetry::proto::collector::metrics::v1::ExportMetricsServiceResponse response;
  ASSERT_TRUE(response.ParseFromString(Body(reply)));
  EXPECT_EQ(response.partial_success().rejected_data_points(), 1);
  EXPECT_EQ(response.partial_success().error_message(),
            "metric 'temp' point 2: time_unix_nano 1699999200000000000 is 900 s in the past (at "
            "most 600)");
  CompletedSeconds done = bucketizer_.TakeAll();
  ASSERT_EQ(done.seconds.size(), 1u);
  ASSERT_EQ(done.seconds[0].scalars.size(), 1u);
  EXPECT_EQ(done.seconds[0].scalars[0].value, 21.5);
}

TEST_F(OtlpHttpTest, JsonPerTheOtlpMapping) {
  // lowerCamelCase, int64 as strings, an enum as a number, an exemplar (skipped, hex ids).
  const std::string json = R"({"resourceMetrics":[{"resource":{"attributes":[
      {"key":"service.name","value":{"stringValue":"shop"}}]},
    "scopeMetrics":[{"scope":{"name":"x"},"metrics":[{"name":"orders","unit":"1",
      "sum":{"aggregationTemporality":1,"isMonotonic":true,"dataPoints":[
        {"timeUnixNano":"1700000099000000000","asInt":"7",
         "exemplars":[{"traceId":"5b8efff798038103d269b633813fc60c","asInt":"1"}]}]}}]}]}]})";
  const std::string reply =
      Exchange(server_->port(), "POST", "Content-Type: application/json; charset=utf-8\r\n", json);
  ASSERT_THAT(reply, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(reply, HasSubstr("Content-Type: application/json\r\n"));
  EXPECT_EQ(Body(reply), "{}");
  CompletedSeconds done = bucketizer_.TakeAll();
  ASSERT_EQ(done.seconds.size(), 1u);
  EXPECT_EQ(done.seconds[0].time, 1'700'000'099);
  EXPECT_EQ(done.series[done.seconds[0].scalars[0].series].fields, "service.name=shop");
  EXPECT_EQ(done.seconds[0].scalars[0].value, 7);
  // A refusal in JSON: rejectedDataPoints is an int64, so a string.
  const std::string refused = R"({"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":"a b",
      "gauge":{"dataPoints":[{"asDouble":1}]}}]}]}]})";
  EXPECT_EQ(Body(Exchange(server_->port(), "POST", "Content-Type: application/json\r\n", refused)),
            R"({"partialSuccess":{"rejectedDataPoints":"1","errorMessage":"metric 'a b' point 1: )"
            R"(metric name 'a b' has a character outside [A-Za-z0-9_.-]"}})");
}

TEST_F(OtlpHttpTest, RefusedRequestsAreAnsweredAndCounted) {
  std::string reply = Exchange(server_->port(), "POST", "Content-Type: text/plain\r\n", "temp 1");
  EXPECT_THAT(reply, StartsWith("HTTP/1.1 415 Unsupported Media Type\r\n"));
  EXPECT_EQ(Body(reply),
            "unsupported Content-Type 'text/plain': send application/x-protobuf or "
            "application/json\n");
  reply = Exchange(server_->port(), "POST",
                   "Content-Type: application/x-protobuf\r\nContent-Encoding: br\r\n", "x");
  EXPECT_THAT(reply, StartsWith("HTTP/1.1 415 "));
  reply = Exchange(server_->port(), "POST", "Content-Type: application/x-protobuf\r\n",
                   std::string("\xff\xff\xff", 3));
  EXPECT_THAT(reply, StartsWith("HTTP/1.1 400 Bad Request\r\n"));
  google::rpc::Status status;
  ASSERT_TRUE(status.ParseFromString(Body(reply)));
  EXPECT_EQ(status.code(), 3);
  EXPECT_EQ(status.message(), "body is not a protobuf ExportMetricsServiceRequest");
  reply = Exchange(server_->port(), "POST", "Content-Type: application/json\r\n", "{\"resource");
  EXPECT_THAT(reply, StartsWith("HTTP/1.1 400 "));
  EXPECT_THAT(Body(reply), HasSubstr(R"("code":3,"message":"body is not an OTLP/JSON)"));
  const std::string gzipped = Gzip(TwoGauges());
  reply = Exchange(server_->port(), "POST",
                   "Content-Type: application/x-protobuf\r\nContent-Encoding: gzip\r\n",
                   gzipped.substr(0, gzipped.size() - 9));
  EXPECT_THAT(reply, StartsWith("HTTP/1.1 400 "));
  EXPECT_THAT(Body(reply), HasSubstr("gzip body is truncated"));
  // Over the limit as sent (4096), and once inflated (65536).
  reply = Exchange(server_->port(), "POST", "Content-Type: application/x-protobuf\r\n",
                   std::string(5000, 'x'));
  EXPECT_THAT(reply, StartsWith("HTTP/1.1 413 Payload Too Large\r\n"));
  ASSERT_TRUE(status.ParseFromString(Body(reply)));
  EXPECT_EQ(status.code(), 8);
  EXPECT_EQ(status.message(), "request body too large (at most 4096 bytes)");
  reply = Exchange(server_->port(), "POST",
                   "Content-Type: application/x-protobuf\r\nContent-Encoding: gzip\r\n",
                   Gzip(std::string(100000, '\0')));
  EXPECT_THAT(reply, StartsWith("HTTP/1.1 413 "));
  EXPECT_THAT(Body(reply), HasSubstr("gzip body inflates past 65536 bytes"));
  reply = Exchange(server_->port(), "GET", "", "");
  EXPECT_THAT(reply, StartsWith("HTTP/1.1 405 "));
  const OtlpHttpCounters c = receiver_->counters();
  EXPECT_EQ(c.requests, 8u);
  EXPECT_EQ(c.unsupported, 2u);
  EXPECT_EQ(c.undecodable, 3u);
  EXPECT_EQ(c.too_large, 2u);  // as sent (the listener's) and once inflated
  EXPECT_EQ(c.bad_method, 1u);
}

TEST_F(OtlpHttpTest, ExpectContinueIsAnswered) {
  const std::string reply = Exchange(server_->port(), "POST",
                                     "Content-Type: application/x-protobuf\r\n"
                                     "Expect: 100-continue\r\n",
                                     TwoGauges());
  EXPECT_THAT(reply, StartsWith("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n"));
}

// TwoGauges with an unknown field of zeros after it, so the whole is exactly `size` bytes.
std::string GaugesOfSize(size_t size) {
  const std::string base = TwoGauges();
  for (size_t varint = 1; varint <= 5; ++varint) {
    const size_t fill = size - base.size() - 2 - varint;  // tag 1000: 2 bytes
    std::string length;
    for (size_t v = fill; v != 0 || length.empty(); v >>= 7) {
      length.push_back(static_cast<char>((v & 0x7f) | (v >= 0x80 ? 0x80 : 0)));
    }
    if (length.size() == varint) return base + "\xc2\x3e" + length + std::string(fill, '\0');
  }
  return {};
}

// A refusal's google.rpc.Status message ("" when the body is not one).
std::string StatusMessage(const std::string& reply) {
  google::rpc::Status status;
  return status.ParseFromString(Body(reply)) ? status.message() : "";
}

TEST_F(OtlpHttpTest, BodiesUpToTheRouteLimitAreTakenWithAContentLengthOrChunked) {
  Restart(OtlpHttpOptions{65536, 1 << 20});
  for (const bool chunked : {false, true}) {
    for (const size_t size : {size_t{20000}, size_t{65535}, size_t{65536}, size_t{65537}}) {
      SCOPED_TRACE(std::to_string(size) + (chunked ? " chunked" : ""));
      const std::string body = GaugesOfSize(size);
      ASSERT_EQ(body.size(), size);
      const std::string reply = Exchange(server_->port(), "POST",
                                         "Content-Type: application/x-protobuf\r\n", body, chunked);
      if (size <= 65536) {
        EXPECT_THAT(reply, StartsWith("HTTP/1.1 200 OK\r\n"));
        continue;
      }
      EXPECT_THAT(reply, StartsWith("HTTP/1.1 413 Payload Too Large\r\n"));
      EXPECT_THAT(reply, HasSubstr("Content-Type: application/x-protobuf\r\n")) << reply;
      EXPECT_EQ(StatusMessage(reply), "request body too large (at most 65536 bytes)");
    }
  }
  EXPECT_EQ(converter_->counters().points_accepted, 6u);
  const OtlpHttpCounters c = receiver_->counters();
  EXPECT_EQ(c.requests, 8u);
  EXPECT_EQ(c.too_large, 2u);
}

TEST_F(OtlpHttpTest, HeadersOfAtMostEightKiBAreTaken) {
  const std::string body = TwoGauges();
  // The header as Exchange writes it, padded to `size` bytes.
  const auto padded = [&body](size_t size) {
    const std::string fixed =
        "POST /v1/metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        "Content-Type: application/json\r\nContent-Length: " +
        std::to_string(body.size()) + "\r\n\r\n";
    return "Content-Type: application/json\r\nX-Pad: " + std::string(size - fixed.size() - 9, 'p') +
           "\r\n";
  };
  // JSON: a body that does not decode, so the 400 shows the header was taken.
  EXPECT_THAT(Exchange(server_->port(), "POST", padded(8192), body), StartsWith("HTTP/1.1 400 "));
  const std::string reply = Exchange(server_->port(), "POST", padded(8193), body);
  EXPECT_THAT(reply, StartsWith("HTTP/1.1 431 "));
  EXPECT_THAT(reply, HasSubstr("Content-Type: application/json\r\n"));
  EXPECT_THAT(Body(reply), HasSubstr(R"x("message":"request header too large (at most 8 KiB)")x"));
  EXPECT_EQ(receiver_->counters().header_too_large, 1u);
}

TEST_F(OtlpHttpTest, RequestsPastThePointBoundAreRefusedBeforeTheyAreDecoded) {
  OtlpHttpOptions options;
  options.max_points = 100;
  Restart(options);
  const auto gauges = [](int gauge_points, int histogram_points) {
    OtlpRequest request;
    auto* scope = request.add_resource_metrics()->add_scope_metrics();
    auto* gauge = scope->add_metrics();
    gauge->set_name("g");
    for (int i = 0; i < gauge_points; ++i) {
      auto* p = gauge->mutable_gauge()->add_data_points();
      p->set_time_unix_nano(static_cast<uint64_t>(kNow) * 1'000'000'000);
      p->set_as_double(i);
    }
    auto* histogram = scope->add_metrics();
    histogram->set_name("h");
    for (int i = 0; i < histogram_points; ++i) histogram->mutable_histogram()->add_data_points();
    return request.SerializeAsString();
  };
  const std::string protobuf = "Content-Type: application/x-protobuf\r\n";
  EXPECT_THAT(Exchange(server_->port(), "POST", protobuf, gauges(100, 0)),
              StartsWith("HTTP/1.1 200 "));
  EXPECT_EQ(converter_->counters().points_accepted, 100u);
  const std::string message =
      "request holds more than 100 data points, the most one request may hold: export smaller "
      "batches";
  for (const auto& [gauge, histogram] : {std::pair{101, 0}, {60, 41}}) {
    const std::string reply = Exchange(server_->port(), "POST", protobuf, gauges(gauge, histogram));
    EXPECT_THAT(reply, StartsWith("HTTP/1.1 413 "));
    EXPECT_EQ(StatusMessage(reply), message);
  }
  std::string json =
      R"({"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":"g","gauge":{"dataPoints":[)";
  for (int i = 0; i < 101; ++i) json += std::string(i > 0 ? "," : "") + "{}";
  json += "]}}]}]}]}";
  const std::string reply =
      Exchange(server_->port(), "POST",
               "Content-Type: application/json\r\nContent-Encoding: gzip\r\n", Gzip(json));
  EXPECT_THAT(reply, StartsWith("HTTP/1.1 413 "));
  EXPECT_THAT(Body(reply), HasSubstr(R"("message":")" + message + "\""));
  EXPECT_EQ(converter_->counters().points_accepted, 100u);  // nothing of the refused ones
  EXPECT_EQ(receiver_->counters().too_large, 3u);
}

TEST_F(OtlpHttpTest, RequestsPastTheDecodedBoundAreRefused) {
  OtlpHttpOptions options;
  options.max_decoded_bytes = 1 << 20;
  Restart(options);
  // 100 000 empty attributes on one point: 200 KB sent, some 5 MB decoded.
  OtlpRequest request;
  auto* point = request.add_resource_metrics()->add_scope_metrics()->add_metrics();
  point->set_name("g");
  auto* p = point->mutable_gauge()->add_data_points();
  for (int i = 0; i < 100'000; ++i) p->add_attributes();
  const std::string reply =
      Exchange(server_->port(), "POST", "Content-Type: application/x-protobuf\r\n",
               request.SerializeAsString());
  EXPECT_THAT(reply, StartsWith("HTTP/1.1 413 "));
  EXPECT_EQ(StatusMessage(reply),
            "request would take more than 1048576 bytes decoded, the most one request may: export "
            "smaller batches");
  // The same as JSON objects, counted before the JSON is read.
  std::string json =
      R"({"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":"g","gauge":{"dataPoints":[{"attributes":[)";
  for (int i = 0; i < 100'000; ++i) json += std::string(i > 0 ? "," : "") + "{}";
  json += "]}]}}]}]}]}";
  EXPECT_THAT(Exchange(server_->port(), "POST", "Content-Type: application/json\r\n", json),
              StartsWith("HTTP/1.1 413 "));
  EXPECT_EQ(receiver_->counters().too_large, 2u);
}

TEST_F(OtlpHttpTest, OutsizedRequestsAreFollowedByATrim) {
  Restart(OtlpHttpOptions{8 << 20, 32 << 20});
  EXPECT_THAT(
      Exchange(server_->port(), "POST", "Content-Type: application/x-protobuf\r\n", TwoGauges()),
      StartsWith("HTTP/1.1 200 "));
  EXPECT_EQ(receiver_->counters().trims, 0u);
  EXPECT_THAT(Exchange(server_->port(), "POST", "Content-Type: application/x-protobuf\r\n",
                       GaugesOfSize(kTrimAfterBytes + 1)),
              StartsWith("HTTP/1.1 200 "));
  EXPECT_EQ(receiver_->counters().trims, 1u);
}

TEST(OtlpWire, TheEstimateCoversWhatDecodingTakes) {
  const auto request = [](const std::function<void(OtlpRequest*)>& fill) {
    OtlpRequest r;
    fill(&r);
    return r.SerializeAsString();
  };
  const auto point = [](OtlpRequest* r) {
    auto* m = r->add_resource_metrics()->add_scope_metrics()->add_metrics();
    m->set_name("shop.orders.latency");
    return m->mutable_exponential_histogram()->add_data_points();
  };
  const std::vector<std::pair<std::string, std::string>> shapes = {
      {"empty points", request([](OtlpRequest* r) {
         auto* g = r->add_resource_metrics()->add_scope_metrics()->add_metrics()->mutable_gauge();
         for (int i = 0; i < 10'000; ++i) g->add_data_points();
       })},
      {"empty attributes", request([&point](OtlpRequest* r) {
         auto* p = point(r);
         for (int i = 0; i < 10'000; ++i) p->add_attributes();
       })},
      {"bucket counts", request([&point](OtlpRequest* r) {
         auto* p = point(r);
         for (int i = 0; i < 10'000; ++i) p->mutable_positive()->add_bucket_counts(0);
       })},
      {"empty metrics", request([](OtlpRequest* r) {
         auto* s = r->add_resource_metrics()->add_scope_metrics();
         for (int i = 0; i < 10'000; ++i) s->add_metrics();
       })},
      {"unknown fields",
       [] {
         std::string out;
         for (int i = 0; i < 10'000; ++i) out += std::string("\xc2\x3e\x00", 3);
         return out;
       }()},
      {"as exported", request([&point](OtlpRequest* r) {
         for (int i = 0; i < 100; ++i) {
           auto* p = point(r);
           for (const char* key : {"service.name", "http.route", "http.method"}) {
             auto* kv = p->add_attributes();
             kv->set_key(key);
             kv->mutable_value()->set_string_value("checkout-service-value");
           }
           p->set_count(100);
           p->set_sum(1234.5);
           p->set_scale(3);
           for (int b = 0; b < 40; ++b) p->mutable_positive()->add_bucket_counts(b);
         }
       })},
  };
  for (const auto& [name, body] : shapes) {
    SCOPED_TRACE(name);
    const OtlpWireCount count = CountOtlpWire(body, SIZE_MAX, SIZE_MAX);
    ASSERT_TRUE(count.ok);
    google::protobuf::Arena arena;
    auto* decoded = google::protobuf::Arena::CreateMessage<OtlpRequest>(&arena);
    ASSERT_TRUE(decoded->ParseFromString(body));
    const uint64_t took = std::max<uint64_t>(decoded->SpaceUsedLong(), arena.SpaceUsed());
    EXPECT_GE(count.bytes, took) << decoded->SpaceUsedLong() << " " << arena.SpaceUsed();
    EXPECT_LE(count.bytes, 3 * took) << took;
    // An ordinary export is estimated at less than 15 times its size (its bucket counts are the
    // most: on an arena a growing array leaves its old ones behind): an 8 MiB body of it is
    // within the default bound.
    if (name == "as exported") {
      EXPECT_LT(count.bytes, 15 * body.size()) << body.size();
      EXPECT_LT(15 * (8 << 20), OtlpHttpOptions{}.max_decoded_bytes);
    }
  }
  EXPECT_EQ(CountOtlpWire(shapes[0].second, SIZE_MAX, SIZE_MAX).points, 10'000u);
}

// `request` as it is on its own connection; everything the server says until it closes.
std::string RawExchange(uint16_t port, const std::string& request) {
  asio::io_context io;
  tcp::socket socket(io);
  socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  boost::system::error_code ec;
  asio::write(socket, asio::buffer(request), ec);
  std::string reply;
  asio::read(socket, asio::dynamic_buffer(reply), ec);
  return reply;
}

TEST_F(OtlpHttpTest, TheListenersOwnRefusalsAreCounted) {
  // Too large with "Expect: 100-continue": refused before the body is sent, no 100 first.
  std::string reply = RawExchange(server_->port(),
                                  "POST /v1/metrics HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                                  "Content-Type: application/json\r\nContent-Length: 5000\r\n\r\n");
  EXPECT_THAT(reply, StartsWith("HTTP/1.1 413 "));
  EXPECT_THAT(Body(reply),
              HasSubstr(R"x("message":"request body too large (at most 4096 bytes)")x"));
  // Another path, and bytes that are not HTTP: the listener's text, counted all the same.
  reply = RawExchange(server_->port(),
                      "POST /v1/traces HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                      "Content-Length: 0\r\n\r\n");
  EXPECT_THAT(reply, StartsWith("HTTP/1.1 404 "));
  reply = RawExchange(server_->port(), "POST /v1/metrics HTTP/1.1\r\nContent-Length: x\r\n\r\n");
  EXPECT_THAT(reply, StartsWith("HTTP/1.1 400 "));
  EXPECT_THAT(reply, HasSubstr("not an HTTP/1.1 request: "));
  reply = RawExchange(server_->port(), "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n");
  EXPECT_THAT(reply, StartsWith("HTTP/1.1 400 "));
  const OtlpHttpCounters c = receiver_->counters();
  EXPECT_EQ(c.requests, 4u);
  EXPECT_EQ(c.too_large, 1u);
  EXPECT_EQ(c.not_found, 1u);
  EXPECT_EQ(c.undecodable, 2u);
}

TEST_F(OtlpHttpTest, TheDecodedBoundIsExact) {
  const std::string body = TwoGauges();
  const uint64_t estimate = CountOtlpWire(body, SIZE_MAX, SIZE_MAX).bytes;
  for (const uint64_t bound : {estimate + 1, estimate, estimate - 1}) {
    SCOPED_TRACE(bound);
    OtlpHttpOptions options;
    options.max_decoded_bytes = bound;
    Restart(options);
    EXPECT_THAT(Exchange(server_->port(), "POST", "Content-Type: application/x-protobuf\r\n", body),
                StartsWith(bound >= estimate ? "HTTP/1.1 200 " : "HTTP/1.1 413 "));
  }
}

}  // namespace
}  // namespace trailmap
