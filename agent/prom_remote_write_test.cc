#include "agent/prom_remote_write.h"

#include <gtest/gtest.h>

#include "core/histogram.h"
#include "prometheus/remote.pb.h"

namespace trailmap {
namespace {

constexpr int64_t kNow = 1'700'000'000;

struct Fixture {
  explicit Fixture(const PromWriters* writers = nullptr, bool* backlogged = nullptr)
      : converter([] {
          PromConvertOptions o;
          o.clock = [] { return kNow; };
          return o;
        }()),
        hosts(2),
        receiver(
            &converter, &hosts, writers,
            [backlogged] { return backlogged != nullptr && *backlogged; }, Config()) {}
  static PromWriteConfig Config() {
    PromWriteConfig c;
    c.max_uncompressed_bytes = 1 << 20;
    return c;
  }
  HttpRouteAnswer Post(std::string body, std::string_view auth = "",
                       std::string_view encoding = "snappy") {
    bodies.push_back(std::move(body));
    return receiver.Handle(
        HttpRouteRequest{"POST", "application/x-protobuf", encoding, bodies.back(), auth});
  }
  PromConverter converter;
  PromHosts hosts;
  PromReceiver receiver;
  std::vector<std::string> bodies;
};

// Counter c_total of `host` at 1000 and then 1042, one second apart.
std::string CounterRequest(const std::string& host, double first = 1000, double second = 1042) {
  prometheus::WriteRequest r;
  prometheus::TimeSeries* ts = r.add_timeseries();
  for (const auto& [k, v] : {std::pair<std::string, std::string>{"__name__", "c_total"},
                             {"instance", host},
                             {"job", "j"}}) {
    prometheus::Label* l = ts->add_labels();
    l->set_name(k);
    l->set_value(v);
  }
  prometheus::Sample* s = ts->add_samples();
  s->set_value(first);
  s->set_timestamp((kNow - 1) * 1000);
  s = ts->add_samples();
  s->set_value(second);
  s->set_timestamp(kNow * 1000);
  return SnappyCompress(r.SerializeAsString());
}

TEST(PromRemoteWrite, AGoodRequestIs204AndShipsUnderItsHost) {
  Fixture f;
  HttpRouteAnswer a = f.Post(CounterRequest("web-1"));
  EXPECT_EQ(a.status, 204u) << a.body;
  const std::vector<Batch> batches = f.hosts.TakeBatchesBefore(kNow + 1);
  ASSERT_EQ(batches.size(), 1u);
  EXPECT_EQ(batches[0].host, "web-1");
  ASSERT_EQ(batches[0].series.size(), 1u);
  EXPECT_EQ(batches[0].series[0], (SeriesDef{"c_total", MetricKind::kScalar, "/s", "job=j"}));
  ASSERT_EQ(batches[0].seconds.size(), 1u);
  EXPECT_EQ(batches[0].seconds[0].time, kNow);
  EXPECT_EQ(f.receiver.counters().accepted, 1u);
}

TEST(PromRemoteWrite, BadBodiesAre400AndNothingIsApplied) {
  Fixture f;
  EXPECT_EQ(f.Post("\xff\xff\xff\xff\xff\xff").status, 400u);  // no snappy length
  HttpRouteAnswer a = f.Post(SnappyCompress("\x0a\x05garbage-not-protobuf"));
  EXPECT_EQ(a.status, 400u);
  EXPECT_EQ(a.body, "the body is not a remote-write WriteRequest (protobuf; strings UTF-8)\n");
  std::string cut = CounterRequest("web-1");
  cut.resize(cut.size() - 3);
  EXPECT_EQ(f.Post(cut).status, 400u);
  // Not UTF-8: protobuf refuses a proto3 string that is not.
  prometheus::WriteRequest r;
  prometheus::Label* l = r.add_timeseries()->add_labels();
  l->set_name("__name__");
  l->set_value("\xc3\x28");
  EXPECT_EQ(f.Post(SnappyCompress(r.SerializePartialAsString())).status, 400u);
  EXPECT_EQ(f.Post(CounterRequest("web-1"), "", "gzip").status, 415u);
  EXPECT_EQ(f.receiver.counters().bad_request, 4u);
  EXPECT_EQ(f.receiver.counters().unsupported, 1u);
  EXPECT_EQ(f.hosts.hosts(), 0u);
  // Past max_uncompressed_bytes, told by snappy's header before anything is decompressed.
  EXPECT_EQ(f.Post(SnappyCompress(std::string(2 << 20, 'x'))).status, 413u);
}

TEST(PromRemoteWrite, TokensAndTheirHostsAreChecked) {
  Result<PromWriters> writers =
      PromWriters::Parse("web " + Sha256Hex("t1") + " web-*\n", "writers");
  ASSERT_TRUE(writers.ok());
  Fixture f(&*writers);
  EXPECT_EQ(f.Post(CounterRequest("web-1")).status, 401u);
  EXPECT_EQ(f.Post(CounterRequest("web-1"), "Bearer t2").status, 401u);
  HttpRouteAnswer a = f.Post(CounterRequest("db-1"), "Bearer t1");
  EXPECT_EQ(a.status, 403u);
  EXPECT_EQ(a.body, "writer web may not write host db-1\n");
  EXPECT_EQ(f.Post(CounterRequest("web-1"), "Bearer t1").status, 204u);
  EXPECT_EQ(f.receiver.counters().unauthorized, 2u);
  EXPECT_EQ(f.receiver.counters().forbidden, 1u);
  EXPECT_EQ(f.hosts.hosts(), 1u);
}

TEST(PromRemoteWrite, ABackloggedAgentAnswers503AndTakesTheRetry) {
  bool backlogged = true;
  Fixture f(nullptr, &backlogged);
  EXPECT_EQ(f.Post(CounterRequest("web-1")).status, 503u);
  EXPECT_EQ(f.receiver.counters().busy, 1u);
  EXPECT_EQ(f.converter.remembered_series(), 0u);  // the retry is not a duplicate
  backlogged = false;
  EXPECT_EQ(f.Post(CounterRequest("web-1")).status, 204u);
  const std::vector<Batch> batches = f.hosts.TakeBatchesBefore(kNow + 1);
  ASSERT_EQ(batches.size(), 1u);
  EXPECT_EQ(f.hosts.hosts(), 0u);  // all shipped: forgotten
  // Past max_hosts (2) held at once: a third host waits until the others are shipped.
  EXPECT_EQ(f.Post(CounterRequest("web-2")).status, 204u);
  EXPECT_EQ(f.Post(CounterRequest("web-3")).status, 204u);
  HttpRouteAnswer a = f.Post(CounterRequest("web-4"));
  EXPECT_EQ(a.status, 503u);
  EXPECT_EQ(a.body,
            "the agent holds remote-written data of as many hosts as its max_hosts allows; host "
            "web-4 waits\n");
  EXPECT_EQ(f.hosts.TakeBatchesBefore(kNow + 1).size(), 2u);
  EXPECT_EQ(f.Post(CounterRequest("web-4")).status, 204u);
}

}  // namespace
}  // namespace trailmap
