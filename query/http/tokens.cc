#include "query/http/tokens.h"

#include "core/bearer_token.h"
#include "query/http/page_files.h"
#include "query/http/params.h"

namespace trailmap {
namespace {

constexpr const char* kNeedToken =
    "this API needs a bearer token: send the header \"Authorization: Bearer TOKEN\" with a token "
    "whose SHA-256 is in trailmap-query's --tokens file";

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// %XX escapes and '+' of a query parameter's value; nullopt-like "" on a malformed escape.
std::string PercentDecode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && HexDigit(s[i + 1]) >= 0 && HexDigit(s[i + 2]) >= 0) {
      out += static_cast<char>(HexDigit(s[i + 1]) << 4 | HexDigit(s[i + 2]));
      i += 2;
    } else {
      out += s[i] == '+' ? ' ' : s[i];
    }
  }
  return out;
}

// Takes the access_token parameter out of *target; returns its value ("" when absent).
std::string TakeAccessToken(std::string* target) {
  const size_t q = target->find('?');
  if (q == std::string::npos) return "";
  std::string kept = target->substr(0, q);
  std::string token;
  std::string_view query = std::string_view(*target).substr(q + 1);
  char sep = '?';
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view item = query.substr(0, amp);
    if (item.starts_with("access_token=")) {
      token = PercentDecode(item.substr(13));
    } else if (!item.empty()) {
      kept += sep;
      kept += item;
      sep = '&';
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  *target = std::move(kept);
  return token;
}

}  // namespace

Result<BearerTokens> BearerTokens::Parse(std::string_view text, std::string_view source) {
  BearerTokens tokens;
  Status s =
      ForEachTokenLine(text, source, [&tokens](std::string_view line, const std::string& where) {
        const size_t space = line.find_first_of(" \t");
        Sha256Digest hash;
        if (space == std::string_view::npos ||
            !ParseSha256Hex(TrimBlanks(line.substr(space)), &hash)) {
          return Status::InvalidArgument(
              where +
              "expected \"NAME SHA256HEX\" (64 hex digits; make one with trailmap-query "
              "--hash-token NAME)");
        }
        const std::string name(line.substr(0, space));
        for (const std::string& other : tokens.names_) {
          if (other == name)
            return Status::InvalidArgument(where + "the name " + name + " is listed twice");
        }
        tokens.names_.push_back(name);
        tokens.hashes_.push_back(hash);
        return Status::Ok();
      });
  if (!s.ok()) return s;
  if (tokens.names_.empty()) {
    return Status::InvalidArgument(std::string(source) + ": lists no token (one line each: "
                                                         "NAME SHA256HEX)");
  }
  return tokens;
}

Result<BearerTokens> BearerTokens::Load(const std::string& path) {
  Result<std::string> text = ReadTokenFile(path, "token");
  if (!text.ok()) return text.status();
  return Parse(*text, path);
}

Result<std::string> BearerTokens::Admit(std::string_view authorization, std::string* target) const {
  std::string token = TakeAccessToken(target);
  if (!authorization.empty()) {
    Result<std::string> bearer = BearerTokenOf(authorization);
    if (!bearer.ok()) return bearer.status();
    token = std::move(*bearer);
  }
  if (token.empty()) return Status::InvalidArgument(kNeedToken);
  const std::optional<size_t> match = MatchToken(token, hashes_);
  if (!match) {
    return Status::InvalidArgument("the bearer token is not one this trailmap-query accepts");
  }
  return names_[*match];
}

bool NeedsToken(std::string_view target) {
  const Result<std::string> path = RequestPath(target);
  if (!path.ok()) return true;
  if (*path == "/") return false;
  for (const PageFile& file : PageFiles()) {
    if (file.path == *path) return false;
  }
  return true;
}

std::string TokenFileLine(std::string_view name, std::string_view token) {
  return std::string(name) + " " + Sha256Hex(token);
}

}  // namespace trailmap
