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

// A request of the node's defaults (`base`: the aggregators and timeout it was started with),
// answering in JSON unless format= says otherwise.
template <typename Request>
Request Defaults(ViewRequest base) {
  Request r;
  r.query = std::move(base);
  r.format = "json";
  return r;
}
// The flame graph keeps its stacks metric unless metric= names another.
template <>
FlameRequest Defaults(ViewRequest base) {
  FlameRequest r;
  r.format = "json";
  base.metric = r.fleet.view.metric;
  r.fleet.view = std::move(base);
  return r;
}
// The fleet's sub-second map: cpu.offsets over the last two minutes unless the parameters say.
template <>
SubsecondFleetRequest Defaults(ViewRequest base) {
  SubsecondFleetRequest r;
  base.metric = r.query.metric;
  base.from = r.query.from;
  r.query = std::move(base);
  r.format = "json";
  return r;
}

Result<ViewDocument> RunFlameOfFleet(const FlameRequest& r, const QueryContext& context) {
  std::istringstream no_input;  // the API reads no files: stacks come from the fleet
  return RunFlameView(r, context, no_input);
}

// Each view: its parameters read into its request by its table (query/run/options.h, the table
// the CLI registers its flags from), a parameter nobody read refused, then the view run.
using ViewRunner = std::function<Result<ViewDocument>(Params*, const QueryContext&, ViewRequest)>;

template <typename Request>
ViewRunner Route(const OptionTable<Request>& (*table)(),
                 Result<ViewDocument> (*run)(const Request&, const QueryContext&)) {
  return [table, run](Params* p, const QueryContext& context, ViewRequest base) {
    Request request = Defaults<Request>(std::move(base));
    if (Status s = ReadOptions(p, table(), &request); !s.ok()) return Result<ViewDocument>(s);
    if (Status s = p->Unknown(); !s.ok()) return Result<ViewDocument>(s);
    return run(request, context);
  };
}

const std::map<std::string, ViewRunner>& Routes() {
  static const std::map<std::string, ViewRunner> routes{
      {"/api/heatmap", Route(HeatmapParameters, RunHeatmapView)},
      {"/api/columns", Route(ColumnsParameters, RunColumnsView)},
      {"/api/trails", Route(TrailsParameters, RunTrailsView)},
      {"/api/line", Route(LineParameters, RunLineView)},
      {"/api/stats", Route(StatsParameters, RunStatsView)},
      {"/api/flame", Route(FlameParameters, RunFlameOfFleet)},
      {"/api/metrics", Route(MetricsParameters, RunMetricsView)},
      {"/api/fields", Route(FieldsParameters, RunFieldsView)},
      {"/api/outliers", Route(OutliersParameters, RunOutliersView)},
      // `trailmap subsecond` without a FILE: the fleet's map, or with range= the flame graph of
      // those whole seconds.
      {"/api/subsecond", Route(SubsecondParameters, RunSubsecondFleetView)},
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
  const unsigned status =
      s.code() == Status::Code::kInvalidArgument                                              ? 400
      : s.code() == Status::Code::kUnavailable || s.code() == Status::Code::kPermissionDenied ? 502
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
struct LiveHeatmapRequest {
  HeatmapRequest heatmap;
  uint64_t events = 0;  // columns to send; 0 = until the viewer leaves
  uint64_t lag = 2;     // seconds after a second ends before its column is asked for
};

const OptionTable<LiveHeatmapRequest>& LiveHeatmapParameters() {
  using R = LiveHeatmapRequest;
  static const OptionTable<R> table = [] {
    OptionTable<R> t;
    t.Include(HeatmapParameters(), &R::heatmap);
    t.Whole("events", &R::events, 0, 1'000'000, "Columns to send (0: until the viewer leaves)",
            "10");
    t.Whole("lag", &R::lag, 0, kMaxLiveLag,
            "Seconds after a second ends before its column is asked for", "2");
    return t;
  }();
  return table;
}

HttpReply LiveHeatmap(Params* p, const QueryContext& context, const ApiOptions& options) {
  LiveHeatmapRequest live;
  live.heatmap = Defaults<HeatmapRequest>(options.defaults);
  if (Status s = ReadOptions(p, LiveHeatmapParameters(), &live); !s.ok()) return FromStatus(s);
  if (Status s = p->Unknown(); !s.ok()) return FromStatus(s);
  if (Status s = LiveHeatmapParameters().Check(live); !s.ok()) return FromStatus(s);
  HeatmapRequest& r = live.heatmap;
  const uint64_t events = live.events, lag = live.lag;
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
