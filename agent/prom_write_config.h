// [prometheus] in the agent's config: the remote-write receiver (agent/prom_remote_write.h).
//
//   [prometheus]
//   listen = "127.0.0.1:9201"     # POST /api/v1/write; --prom-write HOST:PORT; "off" (default)
//   host_label = "instance"       # the label that names the host
//   writers = "/etc/trailmap/writers.txt"  # bearer tokens and their hosts (agent/prom_writers.h)
//   max_hosts = 10000             # hosts with data held at once
//   max_series = 200000           # series whose previous sample is remembered
//   max_backlog_batches = 10000   # batches not yet acknowledged past which requests get 503
//   max_body_bytes = 8388608      # as sent (snappy); 413 past it
//   max_uncompressed_bytes = 33554432  # decompressed; 413 past it
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace trailmap {

struct PromWriteConfig {
  std::string listen = "off";  // HOST:PORT of POST /api/v1/write, or "off"
  std::string host_label = "instance";
  std::string writers;  // the writers file; "" = no token needed (loopback only)
  int64_t max_hosts = 10'000;
  int64_t max_series = 200'000;
  // Batches the aggregators have not acknowledged (held in the spool, summed over owners) past
  // which a request is answered 503 (one batch a second per host with data).
  int64_t max_backlog_batches = 10'000;
  int64_t max_body_bytes = int64_t{8} << 20;
  int64_t max_uncompressed_bytes = int64_t{32} << 20;
};

// Sets `key` of the [prometheus] table from its value (a string or an integer, whichever the
// key takes; the other nullopt). InvalidArgument naming "prometheus.KEY" otherwise.
Status SetPromWriteKey(std::string_view key, const std::optional<std::string>& text,
                       const std::optional<int64_t>& number, PromWriteConfig* config);
// The ranges and the address; a writers file is needed when listening beyond loopback.
Status ValidatePromWriteConfig(const PromWriteConfig& config);

}  // namespace trailmap
