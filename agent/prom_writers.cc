#include "agent/prom_writers.h"

#include <sstream>

#include "core/bearer_token.h"
#include "core/curve_keys.h"

namespace trailmap {

bool PromWriter::MayWrite(std::string_view host) const {
  for (const std::string& pattern : hosts) {
    if (GlobMatch(pattern, host)) return true;
  }
  return false;
}

Result<PromWriters> PromWriters::Parse(std::string_view text, std::string_view source) {
  PromWriters out;
  Status s =
      ForEachTokenLine(text, source, [&out](std::string_view line, const std::string& where) {
        std::vector<std::string> words;
        std::istringstream in{std::string(line)};
        for (std::string w; in >> w;) words.push_back(std::move(w));
        Sha256Digest hash;
        if (words.size() < 3 || !ParseSha256Hex(words[1], &hash)) {
          return Status::InvalidArgument(
              where +
              "expected \"NAME SHA256HEX HOST...\" (64 hex digits: printf %s \"$TOKEN\" | "
              "sha256sum; hosts are names or patterns of * and ?)");
        }
        for (const PromWriter& other : out.writers_) {
          if (other.name == words[0]) {
            return Status::InvalidArgument(where + "the name " + words[0] + " is listed twice");
          }
        }
        out.writers_.push_back(PromWriter{words[0], {words.begin() + 2, words.end()}});
        out.hashes_.push_back(hash);
        return Status::Ok();
      });
  if (!s.ok()) return s;
  if (out.writers_.empty()) {
    return Status::InvalidArgument(std::string(source) +
                                   ": lists no writer (one line each: NAME SHA256HEX HOST...)");
  }
  return out;
}

Result<PromWriters> PromWriters::Load(const std::string& path) {
  Result<std::string> text = ReadTokenFile(path, "writers");
  if (!text.ok()) return text.status();
  return Parse(*text, path);
}

Result<const PromWriter*> PromWriters::Admit(std::string_view authorization) const {
  if (TrimBlanks(authorization).empty()) {
    return Status::InvalidArgument(
        "remote write needs a bearer token: the header \"Authorization: Bearer TOKEN\" "
        "(Prometheus: remote_write's authorization or bearer_token_file) with a token whose "
        "SHA-256 is in the agent's writers file");
  }
  Result<std::string> token = BearerTokenOf(authorization);
  if (!token.ok()) return token.status();
  const std::optional<size_t> match = MatchToken(*token, hashes_);
  if (!match) return Status::InvalidArgument("the bearer token is not one of the agent's writers");
  return &writers_[*match];
}

}  // namespace trailmap
