#include "agent/otlp_http.h"

#include <google/protobuf/arena.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/type_resolver_util.h>
#include <google/protobuf/wire_format_lite.h>
#include <malloc.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <unordered_map>

#include "core/utf8.h"
#include "otlp/metrics_service.pb.h"
#include "otlp/status.pb.h"

namespace trailmap {

namespace {

namespace pb = google::protobuf;
using opentelemetry::proto::collector::metrics::v1::ExportMetricsServiceResponse;
using WireFormat = pb::internal::WireFormatLite;

constexpr const char* kProtobuf = "application/x-protobuf";
constexpr const char* kJson = "application/json";
constexpr int kMaxDepth = 100;  // nested messages, as libprotobuf's own parser allows

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

// The google.rpc.Status code of an HTTP refusal.
int RpcCode(unsigned status) {
  switch (status) {
    case 404:
      return 5;  // NOT_FOUND
    case 405:
      return 12;  // UNIMPLEMENTED
    case 413:
    case 431:
      return 8;  // RESOURCE_EXHAUSTED
    default:
      return 3;  // INVALID_ARGUMENT
  }
}

// A refusal: a google.rpc.Status. Its message must be UTF-8 (a string field; libprotobuf logs an
// error serialising one that is not), and may quote what the client sent.
HttpRouteAnswer Refuse(unsigned status, const std::string& message, bool json) {
  google::rpc::Status body;
  body.set_code(RpcCode(status));
  body.set_message(ValidUtf8(message));
  return HttpRouteAnswer{status, json ? kJson : kProtobuf, Encode(body, json)};
}

// Walks protobuf bytes as the type they are parsed as, adding up points and memory
// (OtlpWireCount), and stops at the first bound passed or string that is not UTF-8.
class WireScanner {
 public:
  WireScanner(size_t max_points, size_t max_bytes)
      : max_points_(max_points), max_bytes_(max_bytes) {}

  OtlpWireCount Scan(std::string_view body, const pb::Descriptor* type) {
    OtlpWireCount count;
    count_ = &count;
    pb::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(body.data()),
                                static_cast<int>(body.size()));
    const auto limit = in.PushLimit(static_cast<int>(body.size()));
    count.bytes += Cost(type);
    count.ok = Message(&in, type, 0);
    in.PopLimit(limit);
    return count;
  }

 private:
  // A decoded message of `type`: the object, and its slot in a repeated field. On an arena a
  // growing array leaves its old ones behind: with the room it keeps, up to 4 slots a message.
  struct TypeInfo {
    uint64_t cost = 0;
    bool point = false;  // a data point of any metric type
  };
  const TypeInfo& Info(const pb::Descriptor* type) {
    if (type == info_type_) return *info_;
    auto [it, added] = types_.try_emplace(type);
    info_type_ = type, info_ = &it->second;
    if (added) {
      const pb::Message* prototype = pb::MessageFactory::generated_factory()->GetPrototype(type);
      it->second.cost = (prototype != nullptr ? prototype->SpaceUsedLong() : 256) + kSlot;
      it->second.point = type->file()->package() == "opentelemetry.proto.metrics.v1" &&
                         std::string_view(type->name()).ends_with("DataPoint");
    }
    return it->second;
  }
  uint64_t Cost(const pb::Descriptor* type) { return Info(type).cost; }

  // The field of `tag` in `type`, or nullptr. A hostile body repeats one field millions of
  // times: the last answer is kept.
  const pb::FieldDescriptor* FieldOf(const pb::Descriptor* type, uint32_t tag) {
    if (type != last_type_ || tag != last_tag_) {
      last_type_ = type, last_tag_ = tag;
      last_field_ = type->FindFieldByNumber(WireFormat::GetTagFieldNumber(tag));
    }
    return last_field_;
  }

  static bool Packed(const pb::FieldDescriptor* field) {
    return field->is_repeated() && field->type() != pb::FieldDescriptor::TYPE_STRING &&
           field->type() != pb::FieldDescriptor::TYPE_BYTES &&
           field->type() != pb::FieldDescriptor::TYPE_MESSAGE;
  }

  bool Over() const {
    return count_->points > max_points_ || count_->bytes > max_bytes_ ||
           !count_->bad_string.empty();
  }

  // One message's fields, up to the stream's limit; false for bytes that are not protobuf.
  bool Message(pb::io::CodedInputStream* in, const pb::Descriptor* type, int depth) {
    while (!Over()) {
      const uint32_t tag = in->ReadTag();
      if (tag == 0) return in->BytesUntilLimit() == 0;
      const auto wire = WireFormat::GetTagWireType(tag);
      const pb::FieldDescriptor* field = FieldOf(type, tag);
      const bool known =
          field != nullptr && (WireFormat::WireTypeForFieldType(
                                   static_cast<WireFormat::FieldType>(field->type())) == wire ||
                               (Packed(field) && wire == WireFormat::WIRETYPE_LENGTH_DELIMITED));
      if (!known) {
        // Kept as an unknown field: an entry in a growing array, and its bytes in a string.
        const int before = in->CurrentPosition();
        if (!WireFormat::SkipField(in, tag)) return false;
        count_->bytes += 64 + static_cast<uint64_t>(in->CurrentPosition() - before);
        continue;
      }
      if (wire != WireFormat::WIRETYPE_LENGTH_DELIMITED) {
        if (field->is_repeated()) count_->bytes += kSlot;  // a singular one is in its message
        if (!WireFormat::SkipField(in, tag)) return false;
        continue;
      }
      uint32_t length = 0;
      if (!in->ReadVarint32(&length) || static_cast<int64_t>(length) > in->BytesUntilLimit()) {
        return false;
      }
      if (field->type() == pb::FieldDescriptor::TYPE_MESSAGE) {
        if (depth + 1 >= kMaxDepth) return false;
        const pb::Descriptor* inner = field->message_type();
        const TypeInfo& info = Info(inner);
        count_->bytes += info.cost;
        count_->points += info.point;
        if (length == 0) continue;  // an empty one (what a hostile body repeats)
        const auto limit = in->PushLimit(static_cast<int>(length));
        if (!Message(in, inner, depth + 1)) return false;
        in->PopLimit(limit);
        continue;
      }
      if (Packed(field)) {
        // A value per byte at most (varints) or per 4 or 8 bytes, each taking up to 4 slots of
        // 8 bytes, as above.
        const bool fixed =
            WireFormat::WireTypeForFieldType(static_cast<WireFormat::FieldType>(field->type())) !=
            WireFormat::WIRETYPE_VARINT;
        count_->bytes += static_cast<uint64_t>(length) * (fixed ? kSlot / 4 : kSlot);
        if (!in->Skip(static_cast<int>(length))) return false;
        continue;
      }
      if (!in->ReadString(&scratch_, static_cast<int>(length))) return false;
      count_->bytes += 32 + length;  // a string object and its bytes
      if (field->type() == pb::FieldDescriptor::TYPE_STRING && !IsValidUtf8(scratch_)) {
        count_->bad_string = field->full_name();
      }
    }
    return true;  // stopped at a bound: the caller says which
  }

  static constexpr uint64_t kSlot = 4 * sizeof(uint64_t);

  const size_t max_points_, max_bytes_;
  OtlpWireCount* count_ = nullptr;
  std::string scratch_;
  std::unordered_map<const pb::Descriptor*, TypeInfo> types_;  // its nodes stay put
  const pb::Descriptor* info_type_ = nullptr;
  const TypeInfo* info_ = nullptr;
  const pb::Descriptor* last_type_ = nullptr;
  uint32_t last_tag_ = 0;
  const pb::FieldDescriptor* last_field_ = nullptr;
};

// The elements of a JSON text: every '{' and ',' outside a string (objects, and the values of
// arrays, with object members besides). Each object becomes a message, each value of an array
// of numbers a repeated value: at least kLeastJsonElementBytes decoded (or nothing, skipped as
// an unknown field's), so their count bounds what the text decodes to before it is read.
uint64_t JsonElements(std::string_view text) {
  uint64_t elements = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == ',') {
      ++elements;
    }
  }
  return elements;
}
constexpr uint64_t kLeastJsonElementBytes = 32;

pb::util::TypeResolver* Resolver() {
  static pb::util::TypeResolver* const resolver = pb::util::NewTypeResolverForDescriptorPool(
      "type.googleapis.com", pb::DescriptorPool::generated_pool());
  return resolver;
}

}  // namespace

OtlpWireCount CountOtlpWire(std::string_view body, size_t max_points, size_t max_bytes) {
  return WireScanner(max_points, max_bytes).Scan(body, OtlpRequest::descriptor());
}

Result<std::string> Gunzip(std::string_view compressed, size_t max_bytes) {
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
    return Status::InvalidArgument("gzip: cannot start inflating");
  }
  std::string out;
  // A single member ends with its size (mod 2^32): room for it at once, up to the bound, saves
  // growing a large body by copies.
  if (compressed.size() >= 18) {
    const auto* tail =
        reinterpret_cast<const unsigned char*>(compressed.data() + compressed.size() - 4);
    const size_t said = tail[0] | tail[1] << 8 | tail[2] << 16 | static_cast<size_t>(tail[3]) << 24;
    out.reserve(std::min(said, max_bytes) + 1);
  }
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

std::string Gzip(std::string_view text, int level) {
  z_stream z{};
  deflateInit2(&z, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
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
  size_t held = request.body.size();
  HttpRouteAnswer answer = Take(request, &held);  // what it decoded is freed by now
  if (held > kTrimAfterBytes) {
    // glibc keeps freed memory for reuse; one outsized request would keep the agent large.
    malloc_trim(0);
    ++trims_;
  }
  return answer;
}

HttpRouteAnswer OtlpReceiver::Take(const HttpRouteRequest& request, size_t* held) {
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
      *held = std::max(*held, big ? options_.max_inflated_bytes : 0);
      return Refuse(big ? 413 : 400, made.status().message(), json);
    }
    inflated = std::move(*made);
    body = inflated;
    *held = std::max(*held, inflated.size());
  }
  const std::string too_big = "request would take more than " +
                              std::to_string(options_.max_decoded_bytes) +
                              " bytes decoded, the most one request may: export smaller batches";
  // JSON becomes protobuf first (what libprotobuf's JSON parser does too), so both are bounded
  // alike before anything is built; its elements are counted first, since reading them costs.
  std::string binary;
  if (json && JsonElements(body) * kLeastJsonElementBytes > options_.max_decoded_bytes) {
    ++too_large_;
    return Refuse(413, too_big, json);
  }
  if (json) {
    pb::util::JsonParseOptions parse;
    parse.ignore_unknown_fields = true;
    const auto made = pb::util::JsonToBinaryString(
        Resolver(), "type.googleapis.com/" + OtlpRequest::descriptor()->full_name(),
        pb::StringPiece(body.data(), body.size()), &binary, parse);
    if (!made.ok()) {
      ++undecodable_;
      return Refuse(
          400,
          "body is not an OTLP/JSON ExportMetricsServiceRequest: " + std::string(made.message()),
          json);
    }
    body = binary;
    *held = std::max(*held, binary.size());
  }
  const OtlpWireCount count = CountOtlpWire(body, options_.max_points, options_.max_decoded_bytes);
  *held = std::max(*held, static_cast<size_t>(count.bytes));
  if (!count.ok) {
    ++undecodable_;
    return Refuse(400,
                  json ? "body is not an OTLP/JSON ExportMetricsServiceRequest"
                       : "body is not a protobuf ExportMetricsServiceRequest",
                  json);
  }
  if (!count.bad_string.empty()) {
    ++undecodable_;
    return Refuse(400, "field " + count.bad_string + " is not UTF-8 (OTLP strings must be)", json);
  }
  if (count.points > options_.max_points) {
    ++too_large_;
    return Refuse(413,
                  "request holds more than " + std::to_string(options_.max_points) +
                      " data points, the most one request may hold: export smaller batches",
                  json);
  }
  if (count.bytes > options_.max_decoded_bytes) {
    ++too_large_;
    return Refuse(413, too_big, json);
  }
  pb::Arena arena;
  OtlpRequest* decoded = pb::Arena::CreateMessage<OtlpRequest>(&arena);
  if (!decoded->ParseFromArray(body.data(), static_cast<int>(body.size()))) {
    ++undecodable_;
    return Refuse(400, "body is not a protobuf ExportMetricsServiceRequest", json);
  }
  const OtlpExportResult result = converter_->Convert(*decoded);
  ExportMetricsServiceResponse response;
  if (result.rejected > 0) {
    response.mutable_partial_success()->set_rejected_data_points(
        static_cast<int64_t>(result.rejected));
    response.mutable_partial_success()->set_error_message(ValidUtf8(result.error_message));
  }
  return HttpRouteAnswer{200, json ? kJson : kProtobuf, Encode(response, json)};
}

std::atomic<uint64_t>* OtlpReceiver::CounterOf(unsigned status) {
  switch (status) {
    case 404:
      return &not_found_;
    case 405:
      return &bad_method_;
    case 413:
      return &too_large_;
    case 415:
      return &unsupported_;
    case 431:
      return &header_too_large_;
    default:
      return &undecodable_;
  }
}

void OtlpReceiver::CountRefused(unsigned status) {
  ++requests_;
  ++*CounterOf(status);
}

HttpRoute OtlpReceiver::Route() {
  return HttpRoute{
      "/v1/metrics", options_.max_body_bytes,
      [this](const HttpRouteRequest& request) { return Handle(request); },
      [this](unsigned status, const std::string& message, const HttpRouteRequest& request) {
        CountRefused(status);
        return Refuse(status, message, MediaType(request.content_type) == kJson);
      }};
}

OtlpHttpCounters OtlpReceiver::counters() const {
  OtlpHttpCounters c;
  c.requests = requests_.load();
  c.undecodable = undecodable_.load();
  c.not_found = not_found_.load();
  c.bad_method = bad_method_.load();
  c.too_large = too_large_.load();
  c.unsupported = unsupported_.load();
  c.header_too_large = header_too_large_.load();
  c.body_bytes = body_bytes_.load();
  c.trims = trims_.load();
  return c;
}

}  // namespace trailmap
