// BearerTokens: who may use trailmap-query's HTTP API. Without a token file the API
// is open, which trailmap-query allows only on a loopback address (or with --insecure-no-auth).
//
// The token file (--tokens FILE) lists one token a line, by a name and the SHA-256 of the token
// in hex; the token itself is never stored:
//
//   # who       sha256 of the token
//   alice       2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824
//
// Make a line with `trailmap-query --hash-token NAME` (reads the token from standard input) or
// `printf %s "$TOKEN" | sha256sum`. Blank lines and lines starting with '#' are skipped; names
// are unique.
//
// A request is admitted when its `Authorization: Bearer TOKEN` header (the scheme in any case,
// RFC 7235 2.1; spaces around the token are not part of it) — or, for the page's live
// stream (EventSource cannot set headers), its `access_token` query parameter (RFC 6750 2.3) —
// hashes to a listed hash. The presented token's hash is compared with every listed hash in
// constant time, so timing tells nothing about how much of a hash matched.
//
// Value type; Admit is thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "core/sha256.h"

namespace trailmap {

class BearerTokens {
 public:
  // `source` names the text in errors ("tokens.txt:3: ...").
  static Result<BearerTokens> Parse(std::string_view text, std::string_view source);
  static Result<BearerTokens> Load(const std::string& path);

  // The name of the token that admits a request with this Authorization header value ("" when
  // it has none) and `target` ("/api/heatmap?..."); its access_token parameter, if any, is taken
  // out of *target. Otherwise InvalidArgument with what the 401 reply says.
  Result<std::string> Admit(std::string_view authorization, std::string* target) const;

  size_t size() const { return names_.size(); }

 private:
  std::vector<std::string> names_;
  std::vector<Sha256Digest> hashes_;  // of each name's token, in the same order
};

// Whether a request for `target` ("/api/heatmap?...") needs a token when there are tokens: every
// one but a request for the page's own files ("/", "/app.js", ...), which hold no data. Decided
// on the path as the router reads it (RequestPath, query/http/params.h), so no other spelling of
// an /api/ or /metrics path gets past: a path not in the router's one form needs a token too
// (and, with one, is refused 400).
bool NeedsToken(std::string_view target);

// The token file line for `name` and `token`: "name <sha256 hex>".
std::string TokenFileLine(std::string_view name, std::string_view token);

}  // namespace trailmap
