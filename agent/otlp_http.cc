#include "agent/otlp_http.h"

#include <google/protobuf/util/json_util.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>

#include "otlp/metrics_service.pb.h"
#include "otlp/status.pb.h"

namespace trailmap {

namespace {

using opentelemetry::proto::collector::metrics::v1::ExportMetricsServiceResponse;

constexpr const char* kProtobuf = "application/x-protobuf";
constexpr const char* kJson = "application/json";

// The media type of a Content-Type header, lower case, without parameters or blanks.
std::string MediaType(std::string_view header) {
  header = header.substr(0, header.find(';'));
  std::string out;
  for (const char c : header) {
    if (c != ' ' && c != '\t') out.push_back(static_cast<char>(std::tolower(c)));
  }
  return out;
}

// A message as the request was encoded.
std::string Encode(const google::protobuf::Message& message, bool json) {
  std::string out;
  if (!json) {
    message.SerializeToString(&out);
    return out;
  }
  if (!google::protobuf::util::MessageToJsonString(message, &out).ok()) out = "{}";
  return out;
}

// A refusal: a google.rpc.Status (code 3 INVALID_ARGUMENT, 8 RESOURCE_EXHAUSTED).
HttpRouteAnswer Refuse(unsigned status, int code, const std::string& message, bool json) {
  google::rpc::Status body;
  body.set_code(code);
  body.set_message(message);
  return HttpRouteAnswer{status, json ? kJson : kProtobuf, Encode(body, json)};
}

}  // namespace

Result<std::string> Gunzip(std::string_view compressed, size_t max_bytes) {
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
    return Status::InvalidArgument("gzip: cannot start inflating");
  }
  std::string out;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  z.avail_in = static_cast<uInt>(compressed.size());
  char chunk[64 * 1024];
  Status status = Status::Ok();
  while (true) {
    z.next_out = reinterpret_cast<Bytef*>(chunk);
    z.avail_out = sizeof chunk;
    const int rc = inflate(&z, Z_NO_FLUSH);
    out.append(chunk, sizeof chunk - z.avail_out);
    if (out.size() > max_bytes) {
      status = Status::ResourceExhausted("gzip body inflates past " + std::to_string(max_bytes) +
                                         " bytes");
      break;
    }
    if (rc == Z_STREAM_END) {
      if (z.avail_in == 0) break;
      inflateReset(&z);  // another member follows
      continue;
    }
    if (rc != Z_OK && !(rc == Z_BUF_ERROR && z.avail_out == 0)) {
      status = Status::InvalidArgument(z.avail_in == 0 && rc == Z_BUF_ERROR
                                           ? "gzip body is truncated"
                                           : std::string("gzip body does not inflate: ") +
                                                 (z.msg != nullptr ? z.msg : "error"));
      break;
    }
  }
  inflateEnd(&z);
  if (!status.ok()) return status;
  return out;
}

std::string Gzip(std::string_view text) {
  z_stream z{};
  deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, text.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

OtlpReceiver::OtlpReceiver(OtlpConverter* converter, OtlpHttpOptions options)
    : converter_(converter), options_(options) {}

HttpRouteAnswer OtlpReceiver::Handle(const HttpRouteRequest& request) {
  ++requests_;
  body_bytes_ += request.body.size();
  const std::string type = MediaType(request.content_type);
  const bool json = type == kJson;
  if (request.method != "POST") {
    ++bad_method_;
    return HttpRouteAnswer{405, "text/plain", "method not allowed: POST /v1/metrics\n"};
  }
  if (!json && type != kProtobuf) {
    ++unsupported_;
    return HttpRouteAnswer{415, "text/plain",
                           "unsupported Content-Type '" + std::string(request.content_type) +
                               "': send application/x-protobuf or application/json\n"};
  }
  const std::string encoding = MediaType(request.content_encoding);
  if (!encoding.empty() && encoding != "gzip" && encoding != "identity") {
    ++unsupported_;
    return HttpRouteAnswer{415, "text/plain",
                           "unsupported Content-Encoding '" +
                               std::string(request.content_encoding) + "': send gzip or none\n"};
  }
  std::string inflated;
  std::string_view body = request.body;
  if (encoding == "gzip") {
    Result<std::string> made = Gunzip(body, options_.max_inflated_bytes);
    if (!made.ok()) {
      const bool big = made.status().code() == Status::Code::kResourceExhausted;
      ++(big ? too_large_ : undecodable_);
      return Refuse(big ? 413 : 400, big ? 8 : 3, made.status().message(), json);
    }
    inflated = std::move(*made);
    body = inflated;
  }
  OtlpRequest decoded;
  if (json) {
    google::protobuf::util::JsonParseOptions parse;
    parse.ignore_unknown_fields = true;
    const auto parsed = google::protobuf::util::JsonStringToMessage(
        google::protobuf::StringPiece(body.data(), body.size()), &decoded, parse);
    if (!parsed.ok()) {
      ++undecodable_;
      return Refuse(
          400, 3,
          "body is not an OTLP/JSON ExportMetricsServiceRequest: " + std::string(parsed.message()),
          json);
    }
  } else if (!decoded.ParseFromArray(body.data(), static_cast<int>(body.size()))) {
    ++undecodable_;
    return Refuse(400, 3, "body is not a protobuf ExportMetricsServiceRequest", json);
  }
  const OtlpExportResult result = converter_->Convert(decoded);
  ExportMetricsServiceResponse response;
  if (result.rejected > 0) {
    response.mutable_partial_success()->set_rejected_data_points(
        static_cast<int64_t>(result.rejected));
    response.mutable_partial_success()->set_error_message(result.error_message);
  }
  return HttpRouteAnswer{200, json ? kJson : kProtobuf, Encode(response, json)};
}

HttpRoute OtlpReceiver::Route() {
  return HttpRoute{"/v1/metrics", options_.max_body_bytes,
                   [this](const HttpRouteRequest& request) { return Handle(request); },
                   [this] { ++requests_, ++too_large_; }};
}

OtlpHttpCounters OtlpReceiver::counters() const {
  return OtlpHttpCounters{requests_.load(),  undecodable_.load(), bad_method_.load(),
                          too_large_.load(), unsupported_.load(), body_bytes_.load()};
}

}  // namespace trailmap
