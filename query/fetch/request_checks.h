// What a request may hold, checked before any shard is asked: the names it sends (metric, --by,
// --hosts, --where), how long it may wait (--timeout) and how large a picture it may ask for.
// Both front ends reach these through the view runners (query/run/), so the CLI and
// trailmap-query refuse the same requests with the same words.
//
// Why here and not only in the aggregator: a name the aggregator cannot read costs a shard's
// answer, and a fan-out that waits for it holds a query worker until its timeout. A refusal here
// costs nothing and names the flag.
//
// Messages never quote the user's bytes raw: Printable() escapes what is not printable ASCII, so
// a message is valid UTF-8 whatever was typed and can go into JSON (trailmap-query's 400 body).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace trailmap {

struct ViewRequest;

// --timeout (and the API's timeout=): the longest a query may wait for its shards. Longer is a
// usage error naming this cap: a query node's worker is held for as long as its query waits.
inline constexpr uint64_t kMaxQueryTimeoutSeconds = 60;

// --width × --height of a PNG or SVG picture (heat map, columns, trails): at most this many
// pixels, so one request cannot make the renderer allocate gigabytes. 16 Mi pixels is a
// 4096 × 4096 image, or 16384 × 1024.
inline constexpr int64_t kMaxImagePixels = int64_t{16} * 1024 * 1024;

// `text` for an error message: printable ASCII as it is, every other byte as \xNN, cut to
// `max_bytes` of the original with "..." after.
std::string Printable(std::string_view text, size_t max_bytes = 64);

// InvalidArgument naming the flag ("--metric", "--by", "--hosts", "--where", "--timeout") when
// one does not validate: a metric name or --by key outside [A-Za-z0-9_.-] or too long (a metric
// name at most 128 bytes, a key 128), a host that is empty, over 256 bytes, has a control byte
// or is not UTF-8, a --where that is not UTF-8, or a --timeout that does not parse or is longer
// than kMaxQueryTimeoutSeconds. An empty metric passes (catalog queries have none).
Status CheckViewRequest(const ViewRequest& request);

// InvalidArgument when a `width` × `height` picture is over kMaxImagePixels; `what` names what
// sets the size ("--width 20000 × --height 10000").
Status CheckImagePixels(const std::string& what, int64_t width, int64_t height);

}  // namespace trailmap
