// Aggregator endpoint lists, as every program writes them: "HOST:PORT,HOST:PORT", a HOST alone
// taking the default port, a "tcp://" prefix allowed. A host's owner among them is chosen by
// rendezvous hashing of the normalized entries (core/cluster.h), whatever their order.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace trailmap {

inline constexpr uint16_t kDefaultIngestPort = 7400;
inline constexpr uint16_t kDefaultQueryPort = 7401;

// One entry: "a:1" → "tcp://a:1", "a" → "tcp://a:<default_port>"; says what is wrong and what to
// write instead.
Result<std::string> ParseEndpoint(std::string_view entry, uint16_t default_port);

// "a:1,b" → {"tcp://a:1", "tcp://b:<default_port>"}. Refuses empty entries and bad ports, saying
// which entry and what to write instead.
Result<std::vector<std::string>> ParseEndpointList(std::string_view list, uint16_t default_port);

struct HostPort {
  std::string host;  // name or address; an IPv6 literal without its brackets
  uint16_t port = 0;
};

// "127.0.0.1:7400", "db-1:7400", "[::1]:7400" (a listening address: the port is required, no
// tcp://). InvalidArgument saying what is wrong.
Result<HostPort> ParseHostPort(std::string_view text);

}  // namespace trailmap
