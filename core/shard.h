// Which aggregator owns a host: FNV-1a of the host name modulo the number of aggregators.
// Every agent, `trailmap import` and the load generator use this, so a host's data always lands
// on one shard (given the same --aggregators list, in the same order).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace trailmap {

inline size_t ShardIndex(std::string_view host, size_t shards) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : host) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return shards == 0 ? 0 : static_cast<size_t>(h % shards);
}

}  // namespace trailmap
