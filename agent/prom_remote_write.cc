#include "agent/prom_remote_write.h"

#include <google/protobuf/arena.h>
#include <snappy.h>

#include <algorithm>
#include <set>

#include "core/endpoint.h"
#include "prometheus/remote.pb.h"

namespace trailmap {
namespace {

constexpr CounterField<PromWriteCounters> kHttp[] = {
    {"trailmap.agent.prom.requests", true, "requests/s", "POST /api/v1/write requests received",
     &PromWriteCounters::requests},
    {"trailmap.agent.prom.accepted", true, "requests/s",
     "remote-write requests converted whole (204)", &PromWriteCounters::accepted},
    {"trailmap.agent.prom.bytes", true, "B/s", "remote-write bodies received, as sent (snappy)",
     &PromWriteCounters::body_bytes},
};

constexpr CounterField<PromConvertCounters> kConvert[] = {
    {"trailmap.agent.prom.samples", true, "samples/s", "remote-write float samples taken",
     &PromConvertCounters::samples},
    {"trailmap.agent.prom.histogram_samples", true, "samples/s",
     "remote-write native histogram samples taken", &PromConvertCounters::histogram_samples},
    {"trailmap.agent.prom.events", true, "events/s",
     "events placed from classic and native histograms", &PromConvertCounters::histogram_events},
    {"trailmap.agent.prom.baselines", true, "samples/s",
     "first samples of cumulative series: only remembered", &PromConvertCounters::baselines},
    {"trailmap.agent.prom.resets", true, "samples/s", "cumulative series that went down (reset)",
     &PromConvertCounters::resets},
    {"trailmap.agent.prom.stale", true, "samples/s", "staleness markers and NaN samples skipped",
     &PromConvertCounters::stale},
    {"trailmap.agent.prom.out_of_window", true, "samples/s",
     "samples outside the time window, skipped", &PromConvertCounters::out_of_window},
    {"trailmap.agent.prom.incomplete", true, "histograms/s",
     "histogram samples dropped: buckets that never all came, or past 2^64 base units",
     &PromConvertCounters::incomplete},
    {"trailmap.agent.prom.evicted", true, "series/s", "remembered series forgotten at the bound",
     &PromConvertCounters::evicted_series},
    {"trailmap.agent.prom.inexact_sums", true, "histograms/s",
     "histograms placed without their sum (it did not fit the buckets)",
     &PromConvertCounters::inexact_sums},
};

bool StartsWithMediaType(std::string_view header, std::string_view type) {
  if (!header.starts_with(type)) return false;
  header.remove_prefix(type.size());
  return header.empty() || header.front() == ';' || header.front() == ' ';
}

}  // namespace

bool PromHosts::Fits(size_t fresh) const {
  std::lock_guard<std::mutex> lock(mu_);
  return hosts_.size() + fresh <= max_hosts_;
}

bool PromHosts::Holds(std::string_view host) const {
  std::lock_guard<std::mutex> lock(mu_);
  return hosts_.find(host) != hosts_.end();
}

void PromHosts::Apply(const PromWrites& writes) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto of = [this](const std::string& host) -> Bucketizer& {
    auto it = hosts_.find(host);
    if (it == hosts_.end()) it = hosts_.emplace(host, std::make_unique<Bucketizer>()).first;
    return *it->second;
  };
  for (const PromHistogramWrite& h : writes.histograms) {
    Bucketizer& b = of(h.host);
    for (const PlacedValue& v : h.values) b.Add(h.second, h.series, v.value, v.count);
  }
  for (const PromScalarWrite& s : writes.scalars) of(s.host).SetScalar(s.second, s.series, s.value);
}

std::vector<Batch> PromHosts::TakeBatchesBefore(int64_t second) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Batch> out;
  for (auto it = hosts_.begin(); it != hosts_.end();) {
    while (true) {
      CompletedSeconds done = it->second->TakeSecondsBefore(second);
      if (done.empty()) break;
      for (Batch& b : MakeBatches(std::move(done), it->first, {})) out.push_back(std::move(b));
    }
    // A host with nothing held is forgotten, so max_hosts bounds the hosts held at once.
    it = it->second->pending_seconds() == 0 ? hosts_.erase(it) : std::next(it);
  }
  return out;
}

size_t PromHosts::hosts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hosts_.size();
}

BucketizerCounters PromHosts::counters() const {
  std::lock_guard<std::mutex> lock(mu_);
  BucketizerCounters sum;
  for (const auto& [host, b] : hosts_) {
    const BucketizerCounters c = b->counters();
    sum.events += c.events;
    sum.overflow_events += c.overflow_events;
    sum.late_events += c.late_events;
    sum.refused_events += c.refused_events;
    sum.scalars += c.scalars;
    sum.overflow_scalars += c.overflow_scalars;
    sum.bad_scalars += c.bad_scalars;
  }
  return sum;
}

PromReceiver::PromReceiver(PromConverter* converter, PromHosts* hosts, const PromWriters* writers,
                           std::function<bool()> backlogged, const PromWriteConfig& config)
    : converter_(converter),
      hosts_(hosts),
      writers_(writers),
      backlogged_(std::move(backlogged)),
      max_body_bytes_(static_cast<size_t>(config.max_body_bytes)),
      max_uncompressed_bytes_(static_cast<size_t>(config.max_uncompressed_bytes)) {}

HttpRouteAnswer PromReceiver::Refuse(unsigned status, std::string message) {
  CountRefused(status);
  return HttpRouteAnswer{status, "text/plain", std::move(message) + "\n"};
}

void PromReceiver::CountRefused(unsigned status) {
  switch (status) {
    case 400:
      ++bad_request_;
      break;
    case 401:
      ++unauthorized_;
      break;
    case 403:
      ++forbidden_;
      break;
    case 404:
    case 405:
      ++bad_method_;
      break;
    case 413:
    case 431:
      ++too_large_;
      break;
    case 415:
      ++unsupported_;
      break;
    default:
      ++busy_;
      break;
  }
}

HttpRouteAnswer PromReceiver::Handle(const HttpRouteRequest& request) {
  ++requests_;
  body_bytes_ += request.body.size();
  if (request.method != "POST") return Refuse(405, "remote write is POST /api/v1/write");
  const PromWriter* writer = nullptr;  // nullptr: no writers file, every host may be written
  if (writers_ != nullptr) {
    Result<const PromWriter*> admitted = writers_->Admit(request.authorization);
    if (!admitted.ok()) return Refuse(401, admitted.status().message());
    writer = *admitted;
  }
  if (!StartsWithMediaType(request.content_type, "application/x-protobuf")) {
    return Refuse(415, "Content-Type must be application/x-protobuf (remote write 1.0), not \"" +
                           std::string(request.content_type) + "\"");
  }
  if (request.content_encoding != "snappy") {
    return Refuse(415, "Content-Encoding must be snappy (remote write 1.0), not \"" +
                           std::string(request.content_encoding) + "\"");
  }
  if (backlogged_ && backlogged_()) {
    return Refuse(503,
                  "the agent is behind: its batches not yet acknowledged by the aggregators "
                  "pass max_backlog_batches; retry later");
  }
  size_t length = 0;
  if (!snappy::GetUncompressedLength(request.body.data(), request.body.size(), &length)) {
    return Refuse(400, "the body is not snappy (block format): its length header does not read");
  }
  if (length > max_uncompressed_bytes_) {
    return Refuse(413, "the body decompresses to " + std::to_string(length) +
                           " bytes, past the agent's max_uncompressed_bytes " +
                           std::to_string(max_uncompressed_bytes_) +
                           "; send smaller batches (queue_config max_samples_per_send)");
  }
  std::string raw;
  if (!snappy::Uncompress(request.body.data(), request.body.size(), &raw)) {
    return Refuse(400, "the body is not snappy (block format): it does not decompress");
  }
  google::protobuf::Arena arena;
  auto* decoded = google::protobuf::Arena::CreateMessage<prometheus::WriteRequest>(&arena);
  if (!decoded->ParseFromString(raw)) {
    return Refuse(400, "the body is not a remote-write WriteRequest (protobuf; strings UTF-8)");
  }
  std::set<std::string, std::less<>> fresh;  // hosts this request would add
  const auto admit_host = [this, writer, &fresh](std::string_view host) {
    if (writer != nullptr && !writer->MayWrite(host)) {
      return Status::PermissionDenied("writer " + writer->name + " may not write host " +
                                      std::string(host));
    }
    if (fresh.contains(host) || hosts_->Holds(host)) return Status::Ok();
    fresh.emplace(host);
    if (hosts_->Fits(fresh.size())) return Status::Ok();
    return Status::Unavailable(
        "the agent holds remote-written data of as many hosts as its "
        "max_hosts allows; host " +
        std::string(host) + " waits");
  };
  Result<PromWrites> writes = converter_->Convert(*decoded, admit_host);
  if (!writes.ok()) {
    const Status::Code code = writes.status().code();
    return Refuse(code == Status::Code::kPermissionDenied ? 403
                  : code == Status::Code::kUnavailable    ? 503
                                                          : 400,
                  writes.status().message());
  }
  hosts_->Apply(*writes);
  ++accepted_;
  return HttpRouteAnswer{204, "text/plain", ""};
}

HttpRoute PromReceiver::Route() {
  HttpRoute route;
  route.path = "/api/v1/write";
  route.max_body_bytes = max_body_bytes_;
  route.handle = [this](const HttpRouteRequest& r) { return Handle(r); };
  route.refuse = [this](unsigned status, const std::string& message, const HttpRouteRequest&) {
    CountRefused(status);
    return HttpRouteAnswer{status, "text/plain", message + "\n"};
  };
  return route;
}

PromWriteCounters PromReceiver::counters() const {
  PromWriteCounters c;
  c.requests = requests_;
  c.accepted = accepted_;
  c.body_bytes = body_bytes_;
  c.bad_request = bad_request_;
  c.unauthorized = unauthorized_;
  c.forbidden = forbidden_;
  c.bad_method = bad_method_;
  c.too_large = too_large_;
  c.unsupported = unsupported_;
  c.busy = busy_;
  return c;
}

Result<std::unique_ptr<PromWriteInput>> PromWriteInput::Start(const PromWriteConfig& config,
                                                              std::function<bool()> backlogged) {
  Result<HostPort> where = ParseHostPort(config.listen);
  if (!where.ok()) return where.status();
  std::unique_ptr<PromWriteInput> input(new PromWriteInput());
  if (!config.writers.empty()) {
    Result<PromWriters> writers = PromWriters::Load(config.writers);
    if (!writers.ok()) return Status::InvalidArgument(writers.status().message());
    input->writers_ = std::move(*writers);
  }
  PromConvertOptions options;
  options.host_label = config.host_label;
  options.max_series = static_cast<size_t>(config.max_series);
  input->converter_ = std::make_unique<PromConverter>(std::move(options));
  input->hosts_ = std::make_unique<PromHosts>(static_cast<size_t>(config.max_hosts));
  input->receiver_ = std::make_unique<PromReceiver>(input->converter_.get(), input->hosts_.get(),
                                                    input->writers_ ? &*input->writers_ : nullptr,
                                                    std::move(backlogged), config);
  MetricsHttpOptions listen{
      where->host, where->port, "trailmap-agent", {input->receiver_->Route()}};
  listen.refused = [receiver = input->receiver_.get()](unsigned status) {
    receiver->CountRefused(status);
  };
  Result<std::unique_ptr<MetricsHttpServer>> started =
      MetricsHttpServer::Start(std::move(listen), {});
  if (!started.ok()) return started.status();
  input->http_ = std::move(*started);
  input->url_ = "http://" + config.listen.substr(0, config.listen.rfind(':')) + ":" +
                std::to_string(input->http_->port()) + "/api/v1/write";
  return input;
}

PromWriteInput::~PromWriteInput() { http_.reset(); }

void PromWriteInput::StopListening() { http_.reset(); }

void PromWriteInput::ShipSecondsBefore(int64_t second, const std::function<void(Batch)>& send) {
  for (Batch& b : hosts_->TakeBatchesBefore(second)) send(std::move(b));
}

std::string PromWriteInput::url() const { return url_; }

SelfReadings PromWriteInput::Readings() const {
  SelfReadings out;
  const PromWriteCounters c = receiver_->counters();
  AddFields(c, kHttp, "", &out);
  const std::pair<const char*, uint64_t> refused[] = {
      {"400", c.bad_request}, {"401", c.unauthorized}, {"403", c.forbidden}, {"405", c.bad_method},
      {"413", c.too_large},   {"415", c.unsupported},  {"503", c.busy}};
  for (const auto& [status, count] : refused) {
    AddCounter(&out, "trailmap.agent.prom.refused", "requests/s",
               "remote-write requests refused whole, by HTTP status", count,
               std::string("status=") + status);
  }
  AddFields(converter_->counters(), kConvert, "", &out);
  AddGauge(&out, "trailmap.agent.prom.hosts", "hosts", "hosts whose remote-written data is held",
           static_cast<double>(hosts_->hosts()));
  AddGauge(&out, "trailmap.agent.prom.series", "series",
           "remote-written series whose previous sample is remembered",
           static_cast<double>(converter_->remembered_series()));
  return out;
}

std::string SnappyCompress(std::string_view bytes) {
  std::string out;
  snappy::Compress(bytes.data(), bytes.size(), &out);
  return out;
}

}  // namespace trailmap
