// The HTTP API of trailmap-query, apart from sockets: a GET target in, a reply out.
//
//   GET /api/heatmap | /api/columns | /api/trails | /api/line | /api/stats | /api/flame
//       /api/metrics | /api/fields
//
// Parameters are the CLI's long options without the dashes (metric, from, to, where, by, hosts,
// rows, coloring, per-column, ...; docs/http-api.md lists them), and the body is
// the document the CLI prints with the same options: the same query/run/ function makes both.
// `format` picks it (json by default; svg and png where the CLI has them). The aggregators are
// the server's, never a parameter.
//
//   GET /api/outliers    the hosts unlike the fleet (query/run/outliers.h); flame=1 their
//       differential flame graph against the rest
//   GET /  and /app.js, ...: the web page (query/http/page/, embedded at build time)
//
//   GET /api/heatmap/live?...   the heat map's parameters, then Server-Sent Events: first
//       "event: heatmap" with the document /api/heatmap gives for them, then one "event: column"
//       a second, {"time": T, "counts": [rows...], "total": N, "missing_shards": [...]}, as each
//       second T after the range becomes complete (`lag` seconds after it ends, default 2), on the
//       first document's value axis. `events=N` ends the stream after N columns. `lag` is at
//       most kMaxLiveLag (400 past it): a stream waits for its first column without sending
//       events, and a longer wait held a slot for as long.
//
// Status codes follow the CLI's exit codes: 200 (exit 0); 206 with the document drawn from the
// shards that answered when some did not (exit 3), naming them in the JSON's missing_shards and
// in X-Trailmap-Missing-Shards; 400 with {"error": "<the CLI's message>"} for a usage error (exit
// 2); 502 when no shard answered (exit 3); 404 for an unknown path; 500 for anything else.
//
// Thread safety: Handle may run on many threads at once.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "query/fetch/view_request.h"

namespace trailmap {

// Sends one Server-Sent Events chunk to the client; false once the client is gone or the server
// stops (then the stream should return). An empty chunk sends nothing and only asks.
using EventSink = std::function<bool(const std::string& chunk)>;
// A live stream: runs on its own thread, sending events until it returns or the sink says stop.
using EventStream = std::function<void(const EventSink& send)>;

// The most seconds /api/heatmap/live's `lag` may ask it to wait after each second.
inline constexpr uint64_t kMaxLiveLag = 60;

struct HttpReply {
  unsigned status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // besides Content-Type
  EventStream stream;  // when set: a text/event-stream of these events instead of `body`
};

struct ApiOptions {
  // The aggregators, config file and default timeout every request uses (the server's flags).
  ViewRequest defaults;
};

// Answers one GET. `context.now` is the request's clock.
HttpReply HandleApi(std::string_view target, const QueryContext& context,
                    const ApiOptions& options);

// {"error": message} with `status`.
HttpReply ErrorReply(unsigned status, const std::string& message);

}  // namespace trailmap
