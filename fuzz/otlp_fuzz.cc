// An OTLP/HTTP metrics request (agent/otlp_http.h, agent/otlp_convert.h): the first byte picks
// the body's encoding (0 protobuf, 1 JSON, 2 gzip of protobuf; any other: protobuf), the rest
// is the body. Properties: the answer is 200 (an ExportMetricsServiceResponse that decodes, whose
// rejected_data_points is the converter's refusals and names them) or a 400 / 413 refusal of the
// whole request; every histogram the bucketizer then holds is one the aggregator accepts
// (ValidateItem) and every scalar is finite; the same request sent again is taken and refused
// point for point the same (a cumulative point not newer than the last one is taken as nothing).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "agent/otlp_http.h"
#include "core/histogram.h"
#include "fuzz/fuzz_check.h"
#include "otlp/metrics_service.pb.h"

namespace {

using namespace trailmap;

constexpr int64_t kNow = 1'700'000'100;

struct Sent {
  unsigned status = 0;
  int64_t rejected = 0;
  std::string message;
};

Sent Send(OtlpReceiver* receiver, const OtlpConverter& converter, std::string_view type,
          std::string_view encoding, std::string_view body) {
  const OtlpCounters before = converter.counters();
  const HttpRouteAnswer answer = receiver->Handle(HttpRouteRequest{"POST", type, encoding, body});
  const OtlpCounters after = converter.counters();
  Sent sent{answer.status};
  FUZZ_CHECK(answer.status == 200 || answer.status == 400 || answer.status == 413, "status %u",
             answer.status);
  if (answer.status != 200) {
    FUZZ_CHECK(after.points_accepted == before.points_accepted &&
               after.points_rejected == before.points_rejected);
    return sent;
  }
  opentelemetry::proto::collector::metrics::v1::ExportMetricsServiceResponse response;
  if (type == "application/json") {
    FUZZ_CHECK(answer.content_type == "application/json");
    FUZZ_CHECK(!answer.body.empty() && answer.body.front() == '{');
  } else {
    FUZZ_CHECK(answer.content_type == "application/x-protobuf");
    FUZZ_CHECK(response.ParseFromString(answer.body));
    sent.rejected = response.partial_success().rejected_data_points();
    sent.message = response.partial_success().error_message();
    FUZZ_CHECK(static_cast<uint64_t>(sent.rejected) ==
               after.points_rejected - before.points_rejected);
    FUZZ_CHECK((sent.rejected == 0) == sent.message.empty());
  }
  return sent;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::string_view type = data[0] == 1 ? "application/json" : "application/x-protobuf";
  const std::string_view encoding = data[0] == 2 ? "gzip" : "";
  Bucketizer bucketizer;
  OtlpConvertOptions options;
  options.host = "fuzz-1";
  options.clock = [] { return kNow; };
  options.started = kNow - 1000;
  options.max_cumulative_series = 8;
  OtlpConverter converter(&bucketizer, options);
  OtlpReceiver receiver(&converter, OtlpHttpOptions{1 << 20, 4 << 20});
  const Sent first = Send(&receiver, converter, type, encoding, body);
  const Sent again = Send(&receiver, converter, type, encoding, body);
  FUZZ_CHECK(first.status == again.status && first.rejected == again.rejected &&
             first.message == again.message);
  const CompletedSeconds done = bucketizer.TakeAll();
  for (const SecondDelta& s : done.seconds) {
    for (const HistogramDelta& h : s.histograms) {
      const Status valid = Histogram::ValidateItem(h.encoded);
      FUZZ_CHECK(valid.ok(), "%s", valid.message().c_str());
    }
    for (const ScalarValue& v : s.scalars) FUZZ_CHECK(std::isfinite(v.value));
  }
  return 0;
}
