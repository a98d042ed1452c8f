// PromWriters: who may remote-write to the agent, and which hosts each may write.
//
// The writers file (`[prometheus] writers = FILE`) lists one writer a line: a name, the SHA-256
// of its bearer token (as trailmap-query's --tokens file; the token itself is never stored) and
// the hosts it may write, names or glob patterns of `*` and `?` (as the aggregators' clients
// file, net/curve_keys.h):
//
//   # name      sha256 of the token                                               hosts
//   prom-eu     2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824  eu-* lb-?
//   prom-all    486ea46224d1bb4fb680f34f7c9ad96a8f24ec88be73ea8e5a6c65260e9cb8a7  *
//
// Make a hash with `printf %s "$TOKEN" | sha256sum` (or `trailmap-query --hash-token NAME`).
// Blank lines and lines starting with '#' are skipped; names are unique. A request is admitted
// when its `Authorization: Bearer TOKEN` hashes to a listed hash (compared in constant time,
// core/bearer_token.h); it may then write only series whose host its line allows.
//
// Value type; Admit is thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/sha256.h"
#include "core/status.h"

namespace trailmap {

struct PromWriter {
  std::string name;
  std::vector<std::string> hosts;  // names or glob patterns
  bool MayWrite(std::string_view host) const;
};

class PromWriters {
 public:
  // `source` names the text in errors ("writers.txt:3: ...").
  static Result<PromWriters> Parse(std::string_view text, std::string_view source);
  static Result<PromWriters> Load(const std::string& path);

  // The writer whose token the Authorization header value carries. InvalidArgument with what
  // the 401 answer says when there is none, it is not a bearer token, or no writer's.
  Result<const PromWriter*> Admit(std::string_view authorization) const;
  size_t size() const { return writers_.size(); }

 private:
  std::vector<PromWriter> writers_;
  std::vector<Sha256Digest> hashes_;  // of each writer's token, in the same order
};

}  // namespace trailmap
