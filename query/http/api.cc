#include "query/http/api.h"

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "core/clock.h"
#include "query/http/page.h"
#include "query/http/params.h"
#include "query/run/catalog.h"
#include "query/run/columns.h"
#include "query/run/flame.h"
#include "query/run/heatmap.h"
#include "query/run/line.h"
#include "query/run/outliers.h"
#include "query/run/stats.h"
#include "query/run/subsecond.h"
#include "query/run/trails.h"

namespace trailmap {
namespace {

// The parameters every histogram view shares (the CLI's AddQueryFlags, less the aggregators).
Status ReadViewRequest(Params* p, ViewRequest* r) {
  p->Text("metric", &r->metric);
  p->Text("from", &r->from);
  p->Text("to", &r->to);
  p->Text("by", &r->by);
  p->Text("hosts", &r->hosts);
  p->Text("where", &r->where);
  p->Text("timeout", &r->timeout);
  // Ask the aggregators for less than their own limits (README "Bounded queries").
  if (Status s = p->Unsigned("max-keys", UINT64_MAX, &r->max_keys); !s.ok()) return s;
  return p->Unsigned("max-cells", UINT64_MAX, &r->max_cells);
}

// The CLI requires --metric; so does the API, with CLI11's words.
Status RequireMetric(const Params& p, const ViewRequest& r) {
  if (!r.metric.empty()) return Status::Ok();
  return Status::InvalidArgument("--metric,-m is required");
}

// Each view: its parameters read into its request, then run. The checks of every value are the
// run's, so they are the CLI's.
using ViewRunner = std::function<Result<ViewDocument>(Params*, const QueryContext&, ViewRequest)>;

// The heat map's parameters into `r` (also the live stream's).
Status ReadHeatmap(Params* p, ViewRequest base, HeatmapRequest* out) {
  HeatmapRequest& r = *out;
  r.query = std::move(base);
  r.format = "json";
  if (Status s = ReadViewRequest(p, &r.query); !s.ok()) return s;
  uint64_t rows = r.rows, cols = r.cols;
  if (Status s = p->Unsigned("rows", UINT32_MAX, &rows); !s.ok()) return s;
  if (Status s = p->Unsigned("cols", UINT32_MAX, &cols); !s.ok()) return s;
  r.rows = static_cast<uint32_t>(rows);
  r.cols = static_cast<uint32_t>(cols);
  p->Text("step", &r.step);
  p->Text("ymin", &r.ymin);
  p->Text("ymax", &r.ymax);
  p->Text("scale", &r.scale);
  p->Text("clip", &r.clip);
  p->Text("coloring", &r.coloring);
  if (Status s = p->Bool("per-column", &r.per_column); !s.ok()) return s;
  p->Text("palette", &r.palette);
  p->Text("overlay", &r.overlay);
  p->Text("select", &r.select);
  if (Status s = p->Bool("isolate", &r.isolate); !s.ok()) return s;
  if (Status s = p->Bool("exclude", &r.exclude); !s.ok()) return s;
  p->Text("at", &r.at);
  if (Status s = p->Int("width", &r.width); !s.ok()) return s;
  if (Status s = p->Int("height", &r.height); !s.ok()) return s;
  if (Status s = p->Bool("panel", &r.panel); !s.ok()) return s;
  bool no_panel = false;
  if (Status s = p->Bool("no-panel", &no_panel); !s.ok()) return s;
  if (no_panel) r.panel = false;
  p->Text("format", &r.format);
  return Status::Ok();
}

Result<ViewDocument> ApiHeatmap(Params* p, const QueryContext& context, ViewRequest base) {
  HeatmapRequest r;
  if (Status s = ReadHeatmap(p, std::move(base), &r); !s.ok()) return s;
  if (Status s = p->Unknown(); !s.ok()) return s;
  if (Status s = RequireMetric(*p, r.query); !s.ok()) return s;
  return RunHeatmapView(r, context);
}

Result<ViewDocument> ApiColumns(Params* p, const QueryContext& context, ViewRequest base) {
  ColumnsRequest r;
  r.query = std::move(base);
  r.format = "json";
  if (Status s = ReadViewRequest(p, &r.query); !s.ok()) return s;
  uint64_t rows = r.rows, limit = r.limit;
  if (Status s = p->Unsigned("rows", UINT32_MAX, &rows); !s.ok()) return s;
  r.rows = static_cast<uint32_t>(rows);
  p->Text("ymax", &r.ymax);
  p->Text("clip", &r.clip);
  p->Text("coloring", &r.coloring);
  p->Text("shading", &r.shading);
  p->Text("sort", &r.sort);
  if (Status s = p->Bool("reverse", &r.reverse); !s.ok()) return s;
  if (Status s = p->Unsigned("limit", 1'000'000, &limit); !s.ok()) return s;
  r.limit = limit;
  p->Text("format", &r.format);
  if (Status s = p->Unknown(); !s.ok()) return s;
  if (Status s = RequireMetric(*p, r.query); !s.ok()) return s;
  return RunColumnsView(r, context);
}

Result<ViewDocument> ApiTrails(Params* p, const QueryContext& context, ViewRequest base) {
  TrailsRequest r;
  r.query = std::move(base);
  r.format = "json";
  if (Status s = ReadViewRequest(p, &r.query); !s.ok()) return s;
  uint64_t limit = r.limit, points = r.points, height = static_cast<uint64_t>(r.height);
  p->Text("range", &r.range);
  p->Text("sort", &r.sort);
  if (Status s = p->Unsigned("limit", 1'000'000, &limit); !s.ok()) return s;
  if (Status s = p->Bool("fill", &r.fill); !s.ok()) return s;
  if (Status s = p->Bool("invert", &r.invert); !s.ok()) return s;
  if (Status s = p->Bool("border", &r.border); !s.ok()) return s;
  if (Status s = p->Bool("linear", &r.linear); !s.ok()) return s;
  if (Status s = p->Double("overlap", &r.overlap); !s.ok()) return s;
  p->Text("threshold", &r.threshold);
  p->Text("bandwidth", &r.bandwidth);
  if (Status s = p->Unsigned("points", 1'000'000, &points); !s.ok()) return s;
  if (Status s = p->Unsigned("height", 100'000, &height); !s.ok()) return s;
  r.height = static_cast<int>(height);
  r.limit = limit;
  r.points = points;
  p->Text("format", &r.format);
  if (Status s = p->Unknown(); !s.ok()) return s;
  if (Status s = RequireMetric(*p, r.query); !s.ok()) return s;
  return RunTrailsView(r, context);
}

Result<ViewDocument> ApiLine(Params* p, const QueryContext& context, ViewRequest base) {
  LineRequest r;
  r.query = std::move(base);
  r.format = "json";
  if (Status s = ReadViewRequest(p, &r.query); !s.ok()) return s;
  uint64_t top = r.top, step = r.step;
  p->Text("stat", &r.stat);
  if (Status s = p->Unsigned("top", 1'000'000, &top); !s.ok()) return s;
  if (Status s = p->Bool("area", &r.area); !s.ok()) return s;
  if (Status s = p->Bool("stacked", &r.stacked); !s.ok()) return s;
  if (Status s = p->Unsigned("step", UINT32_MAX, &step); !s.ok()) return s;
  r.top = top;
  r.step = static_cast<uint32_t>(step);
  p->Text("format", &r.format);
  if (Status s = p->Unknown(); !s.ok()) return s;
  if (Status s = RequireMetric(*p, r.query); !s.ok()) return s;
  return RunLineView(r, context);
}

Result<ViewDocument> ApiStats(Params* p, const QueryContext& context, ViewRequest base) {
  StatsRequest r;
  r.query = std::move(base);
  r.format = "json";
  if (Status s = ReadViewRequest(p, &r.query); !s.ok()) return s;
  uint64_t top = r.top;
  p->Text("sort", &r.sort);
  if (Status s = p->Unsigned("top", 1'000'000, &top); !s.ok()) return s;
  r.top = top;
  p->Text("format", &r.format);
  if (Status s = p->Unknown(); !s.ok()) return s;
  if (Status s = RequireMetric(*p, r.query); !s.ok()) return s;
  return RunStatsView(r, context);
}

Result<ViewDocument> ApiFlame(Params* p, const QueryContext& context, ViewRequest base) {
  FlameRequest r;
  r.format = "json";
  const std::string default_metric = r.fleet.view.metric;
  r.fleet.view = std::move(base);
  r.fleet.view.metric = default_metric;
  if (Status s = ReadViewRequest(p, &r.fleet.view); !s.ok()) return s;
  p->Text("baseline-from", &r.fleet.baseline_from);
  p->Text("baseline-to", &r.fleet.baseline_to);
  p->Text("baseline-where", &r.fleet.baseline_where);
  p->Text("region", &r.fleet.region);
  p->Text("stacks", &r.fleet.stacks);
  if (Status s = p->Bool("differential", &r.fleet.region_differential); !s.ok()) return s;
  p->Text("palette", &r.palette);
  p->Text("title", &r.title);
  if (Status s = p->Bool("inverted", &r.inverted); !s.ok()) return s;
  if (Status s = p->Double("minwidth", &r.min_width); !s.ok()) return s;
  if (Status s = p->Int("width", &r.width); !s.ok()) return s;
  p->Text("countname", &r.count_name);
  if (Status s = p->Bool("no-normalize", &r.no_normalize); !s.ok()) return s;
  p->Text("format", &r.format);
  if (Status s = p->Unknown(); !s.ok()) return s;
  std::istringstream no_input;  // the API reads no files: stacks come from the fleet
  return RunFlameView(r, context, no_input);
}

Result<ViewDocument> ApiMetrics(Params* p, const QueryContext& context, ViewRequest base) {
  MetricsRequest r;
  r.query = std::move(base);
  r.format = "json";
  p->Text("timeout", &r.query.timeout);
  p->Text("format", &r.format);
  if (Status s = p->Unknown(); !s.ok()) return s;
  return RunMetricsView(r, context);
}

Result<ViewDocument> ApiFields(Params* p, const QueryContext& context, ViewRequest base) {
  FieldsRequest r;
  r.query = std::move(base);
  r.format = "json";
  if (Status s = ReadViewRequest(p, &r.query); !s.ok()) return s;
  uint64_t top = r.top;
  if (Status s = p->Unsigned("top", 1'000'000, &top); !s.ok()) return s;
  r.top = top;
  p->Text("format", &r.format);
  if (Status s = p->Unknown(); !s.ok()) return s;
  if (Status s = RequireMetric(*p, r.query); !s.ok()) return s;
  return RunFieldsView(r, context);
}

Result<ViewDocument> ApiOutliers(Params* p, const QueryContext& context, ViewRequest base) {
  OutliersRequest r;
  r.query = std::move(base);
  r.format = "json";
  if (Status s = ReadViewRequest(p, &r.query); !s.ok()) return s;
  p->Text("stat", &r.stat);
  if (Status s = p->Double("threshold", &r.threshold); !s.ok()) return s;
  if (Status s = p->Bool("flame", &r.flame); !s.ok()) return s;
  p->Text("stacks", &r.stacks);
  p->Text("format", &r.format);
  if (Status s = p->Unknown(); !s.ok()) return s;
  if (Status s = RequireMetric(*p, r.query); !s.ok()) return s;
  return RunOutliersView(r, context);
}

// The fleet's sub-second map (cpu.offsets unless metric= names another), or with range= the
// flame graph of those whole seconds' stacks: `trailmap subsecond` without a FILE.
Result<ViewDocument> ApiSubsecond(Params* p, const QueryContext& context, ViewRequest base) {
  SubsecondFleetRequest r;
  const ViewRequest defaults = r.query;
  r.query = std::move(base);
  r.query.metric = defaults.metric;
  r.query.from = defaults.from;
  r.format = "json";
  if (Status s = ReadViewRequest(p, &r.query); !s.ok()) return s;
  if (Status s = p->Int("rows", &r.rows); !s.ok()) return s;
  p->Text("range", &r.range);
  p->Text("stacks", &r.stacks);
  p->Text("format", &r.format);
  if (Status s = p->Unknown(); !s.ok()) return s;
  return RunSubsecondFleetView(r, context);
}

const std::map<std::string, ViewRunner>& Routes() {
  static const std::map<std::string, ViewRunner> routes{
      {"/api/heatmap", ApiHeatmap},   {"/api/columns", ApiColumns},
      {"/api/trails", ApiTrails},     {"/api/line", ApiLine},
      {"/api/stats", ApiStats},       {"/api/flame", ApiFlame},
      {"/api/metrics", ApiMetrics},   {"/api/fields", ApiFields},
      {"/api/outliers", ApiOutliers}, {"/api/subsecond", ApiSubsecond},
  };
  return routes;
}

std::string ContentType(const std::string& format) {
  if (format == "json") return "application/json";
  if (format == "svg") return "image/svg+xml";
  if (format == "png") return "image/png";
  if (format == "csv") return "text/csv; charset=utf-8";
  return "text/plain; charset=utf-8";
}

// Header values are one line: the reasons of a missing shard may hold anything.
std::string OneLine(std::string text) {
  for (char& c : text) {
    if (c == '\r' || c == '\n') c = ' ';
  }
  return text;
}

HttpReply FromStatus(const Status& s) {
  // Unavailable: no shard answered; PermissionDenied: every shard that answered refused this
  // node's key (the aggregators' clients files must give it the query right).
  const unsigned status = s.code() == Status::Code::kInvalidArgument ? 400
                          : s.code() == Status::Code::kUnavailable ||
                                  s.code() == Status::Code::kPermissionDenied
                              ? 502
                          // GoOn (query/fetch/view_request.h): not drawn within the timeout
                          : s.code() == Status::Code::kResourceExhausted ? 503
                                                                         : 500;
  return ErrorReply(status, s.message());
}

std::string EventChunk(const char* event, const nlohmann::ordered_json& data) {
  return std::string("event: ") + event + "\ndata: " + data.dump() + "\n\n";
}

// /api/heatmap/live: the first document checks every parameter (errors are plain replies), fixes
// the value axis and the first second to follow; the stream then asks for one column a second.
HttpReply LiveHeatmap(Params* p, const QueryContext& context, const ApiOptions& options) {
  HeatmapRequest r;
  if (Status s = ReadHeatmap(p, options.defaults, &r); !s.ok()) return FromStatus(s);
  uint64_t events = 0, lag = 2;
  if (Status s = p->Unsigned("events", 1'000'000, &events); !s.ok()) return FromStatus(s);
  if (Status s = p->Unsigned("lag", kMaxLiveLag, &lag); !s.ok()) return FromStatus(s);
  if (Status s = p->Unknown(); !s.ok()) return FromStatus(s);
  if (Status s = RequireMetric(*p, r.query); !s.ok()) return FromStatus(s);
  if (!r.at.empty()) return ErrorReply(400, "--at lists one cell: not for a live stream");
  r.format = "json";
  Result<ViewDocument> first = RunHeatmapView(r, context);
  if (!first.ok()) return FromStatus(first.status());
  nlohmann::ordered_json head = nlohmann::ordered_json::parse(first->bytes);
  const int64_t start = head["to"].get<int64_t>();
  HeatmapRequest column = r;
  column.cols = 0;
  column.step = "";
  column.clip = "";  // the axis is fixed: nothing more to leave above it
  column.ymin = std::to_string(head["ymin"].get<uint64_t>());
  column.ymax = std::to_string(head["ymax"].get<uint64_t>());
  column.overlay = "";
  HttpReply reply;
  reply.content_type = "text/event-stream";
  reply.stream = [head = std::move(head), column, context, start, events,
                  lag = static_cast<int64_t>(lag)](const EventSink& send) {
    if (!send(EventChunk("heatmap", head))) return;
    for (uint64_t n = 0; events == 0 || n < events; ++n) {
      const int64_t second = start + static_cast<int64_t>(n);
      // Complete `lag` seconds after it ends: the agents ship each second within about one.
      while (UnixSecondsNow() < second + 1 + lag) {
        if (!send("")) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      HeatmapRequest one = column;
      one.query.from = std::to_string(second);
      one.query.to = std::to_string(second + 1);
      QueryContext now = context;
      now.now = UnixSecondsNow();
      // Each column has the request's timeout of its own.
      if (now.received != std::chrono::steady_clock::time_point{}) {
        now.received = std::chrono::steady_clock::now();
      }
      Result<ViewDocument> doc = RunHeatmapView(one, now);
      nlohmann::ordered_json data;
      data["time"] = second;
      if (!doc.ok()) {
        data["error"] = doc.status().message();
        if (!send(EventChunk("error", data))) return;
        continue;
      }
      const nlohmann::ordered_json j = nlohmann::ordered_json::parse(doc->bytes);
      nlohmann::ordered_json counts = nlohmann::ordered_json::array();
      for (const auto& row : j["counts"])
        counts.push_back(row.empty() ? 0 : row[0].get<uint64_t>());
      data["counts"] = std::move(counts);
      data["total"] = j["total"];
      data["missing_shards"] = j["missing_shards"];
      if (!send(EventChunk("column", data))) return;
    }
  };
  return reply;
}

}  // namespace

HttpReply ErrorReply(unsigned status, const std::string& message) {
  HttpReply reply;
  reply.status = status;
  // Messages quote what users typed through Printable (query/fetch/request_checks.h); should one
  // slip through with bytes that are not UTF-8, they become U+FFFD rather than a 500.
  reply.body = nlohmann::ordered_json{{"error", message}}.dump(
                   2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) +
               "\n";
  return reply;
}

HttpReply HandleApi(std::string_view target, const QueryContext& context,
                    const ApiOptions& options) {
  Result<Params> params = Params::Parse(target);
  if (!params.ok()) return ErrorReply(400, params.status().message());
  if (params->path().rfind("/api/", 0) != 0) return PageReply(params->path());
  if (params->path() == "/api/heatmap/live") return LiveHeatmap(&*params, context, options);
  auto route = Routes().find(params->path());
  if (route == Routes().end()) {
    std::string paths;
    for (const auto& [path, runner] : Routes()) paths += (paths.empty() ? "" : ", ") + path;
    return ErrorReply(404, "no such path " + params->path() + ": the API has " + paths);
  }
  Result<ViewDocument> document = route->second(&*params, context, options.defaults);
  if (!document.ok()) return FromStatus(document.status());
  HttpReply reply;
  reply.status = document->missing.empty() ? 200 : 206;
  reply.content_type = ContentType(document->format);
  reply.body = std::move(document->bytes);
  std::string missing;
  for (const std::string& m : document->missing) missing += (missing.empty() ? "" : "; ") + m;
  if (!missing.empty()) reply.headers.emplace_back("X-Trailmap-Missing-Shards", OneLine(missing));
  for (const std::string& note : document->notes) {
    reply.headers.emplace_back("X-Trailmap-Note", OneLine(note));
  }
  return reply;
}

}  // namespace trailmap
