#include "agent/otlp_http.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include "otlp/metrics_service.pb.h"
#include "otlp/status.pb.h"

namespace trailmap {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr int64_t kNow = 1'700'000'100;

// One request on its own connection; everything the server says until it closes.
std::string Exchange(uint16_t port, const std::string& method, const std::string& headers,
                     const std::string& body) {
  asio::io_context io;
  tcp::socket socket(io);
  socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  const std::string request = method + " /v1/metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" +
                              headers + "Content-Length: " + std::to_string(body.size()) +
                              "\r\n\r\n" + body;
  asio::write(socket, asio::buffer(request));
  std::string reply;
  boost::system::error_code ec;
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
    receiver_ = std::make_unique<OtlpReceiver>(converter_.get(), OtlpHttpOptions{4096, 65536});
    Result<std::unique_ptr<MetricsHttpServer>> started =
        MetricsHttpServer::Start(MetricsHttpOptions{"127.0.0.1", 0, "trailmap-agent", {receiver_->Route()}}, {});
    EXPECT_TRUE(started.ok()) << started.status().ToString();
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
  EXPECT_EQ(Body(reply), "request body too large (at most 4096 bytes)\n");
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

}  // namespace
}  // namespace trailmap
