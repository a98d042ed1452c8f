// SHA-256 (FIPS 180-4), for bearer tokens (trailmap-query's, query/http/tokens.h; the agent's
// remote writers', agent/prom_writers.h): a token file holds each token's hash, never the token.
// A plain function of bytes; no state, thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace trailmap {

using Sha256Digest = std::array<uint8_t, 32>;

Sha256Digest Sha256(std::string_view bytes);
// The digest as 64 lower-case hex digits, as sha256sum prints it.
std::string Sha256Hex(std::string_view bytes);

}  // namespace trailmap
