// Bearer tokens (RFC 6750) checked against a list of SHA-256 hashes, so a token file never holds
// a token: what trailmap-query's --tokens file (query/http/tokens.h) and the agent's remote-write
// writers file (agent/prom_writers.h) share. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/sha256.h"
#include "core/status.h"

namespace trailmap {

// The token of an `Authorization: Bearer TOKEN` header value (the scheme in any case, RFC 7235
// 2.1; spaces around the token are not part of it). InvalidArgument when it is not one.
Result<std::string> BearerTokenOf(std::string_view authorization);

// 64 hex digits (either case) as a digest; false when they are not.
bool ParseSha256Hex(std::string_view hex, Sha256Digest* out);

// The index of the hash in `listed` that `token` hashes to. Every listed hash is compared over
// all 32 bytes, so timing tells nothing about how much of a hash a guess matched.
std::optional<size_t> MatchToken(std::string_view token, const std::vector<Sha256Digest>& listed);

// `s` without leading and trailing spaces, tabs and carriage returns.
std::string_view TrimBlanks(std::string_view s);

// Calls `take` with each line of a token file that is neither blank nor a comment ('#'), trimmed,
// and "SOURCE:N: " to begin its errors with; stops at the first error and returns it.
Status ForEachTokenLine(
    std::string_view text, std::string_view source,
    const std::function<Status(std::string_view line, const std::string& where)>& take);
// The text of the file at `path`; NotFound "PATH: cannot open the WHAT file".
Result<std::string> ReadTokenFile(const std::string& path, std::string_view what);

}  // namespace trailmap
