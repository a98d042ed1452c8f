#include "query/http/tokens.h"

#include <fstream>
#include <sstream>

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

bool ParseHash(std::string_view hex, Sha256Digest* out) {
  if (hex.size() != 64) return false;
  for (size_t i = 0; i < 32; ++i) {
    const int hi = HexDigit(hex[2 * i]), lo = HexDigit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    (*out)[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return true;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
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

// The auth-scheme is case-insensitive (RFC 7235 2.1): "Bearer", "bearer", "BEARER".
bool IsBearer(std::string_view scheme) {
  constexpr std::string_view kBearer = "bearer";
  if (scheme.size() != kBearer.size()) return false;
  for (size_t i = 0; i < scheme.size(); ++i) {
    const char c = scheme[i] >= 'A' && scheme[i] <= 'Z' ? scheme[i] - 'A' + 'a' : scheme[i];
    if (c != kBearer[i]) return false;
  }
  return true;
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
  size_t line_number = 0;
  while (!text.empty()) {
    ++line_number;
    const size_t end = text.find('\n');
    const std::string_view line = Trim(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (line.empty() || line.front() == '#') continue;
    const std::string where = std::string(source) + ":" + std::to_string(line_number) + ": ";
    const size_t space = line.find_first_of(" \t");
    Sha256Digest hash;
    if (space == std::string_view::npos || !ParseHash(Trim(line.substr(space)), &hash)) {
      return Status::InvalidArgument(
          where + "expected \"NAME SHA256HEX\" (64 hex digits; make one with trailmap-query "
                  "--hash-token NAME)");
    }
    const std::string name(line.substr(0, space));
    for (const auto& [other, unused] : tokens.tokens_) {
      if (other == name) return Status::InvalidArgument(where + "the name " + name + " is listed twice");
    }
    tokens.tokens_.emplace_back(name, hash);
  }
  if (tokens.tokens_.empty()) {
    return Status::InvalidArgument(std::string(source) + ": lists no token (one line each: "
                                                         "NAME SHA256HEX)");
  }
  return tokens;
}

Result<BearerTokens> BearerTokens::Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path + ": cannot open the token file");
  std::ostringstream text;
  text << in.rdbuf();
  return Parse(text.str(), path);
}

Result<std::string> BearerTokens::Admit(std::string_view authorization, std::string* target) const {
  std::string token = TakeAccessToken(target);
  if (!authorization.empty()) {
    const std::string_view value = Trim(authorization);
    const size_t space = value.find_first_of(" \t");
    if (space == std::string_view::npos || !IsBearer(value.substr(0, space))) {
      return Status::InvalidArgument("the Authorization header is not \"Bearer TOKEN\"");
    }
    token = std::string(Trim(value.substr(space)));
  }
  if (token.empty()) return Status::InvalidArgument(kNeedToken);
  const Sha256Digest presented = Sha256(token);
  // Every listed hash is compared, each over all 32 bytes: no early exit tells how far a guess got.
  size_t match = tokens_.size();
  for (size_t i = 0; i < tokens_.size(); ++i) {
    uint8_t diff = 0;
    for (size_t b = 0; b < presented.size(); ++b) diff |= presented[b] ^ tokens_[i].second[b];
    const size_t is_match = static_cast<size_t>(diff == 0);
    match = is_match ? i : match;
  }
  if (match == tokens_.size()) {
    return Status::InvalidArgument("the bearer token is not one this trailmap-query accepts");
  }
  return tokens_[match].first;
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
