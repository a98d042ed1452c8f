#include "core/bearer_token.h"

#include <fstream>
#include <sstream>

namespace trailmap {
namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
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

}  // namespace

std::string_view TrimBlanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

Result<std::string> BearerTokenOf(std::string_view authorization) {
  const std::string_view value = TrimBlanks(authorization);
  const size_t space = value.find_first_of(" \t");
  if (space == std::string_view::npos || !IsBearer(value.substr(0, space))) {
    return Status::InvalidArgument("the Authorization header is not \"Bearer TOKEN\"");
  }
  return std::string(TrimBlanks(value.substr(space)));
}

bool ParseSha256Hex(std::string_view hex, Sha256Digest* out) {
  if (hex.size() != 64) return false;
  for (size_t i = 0; i < 32; ++i) {
    const int hi = HexDigit(hex[2 * i]), lo = HexDigit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    (*out)[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return true;
}

std::optional<size_t> MatchToken(std::string_view token, const std::vector<Sha256Digest>& listed) {
  const Sha256Digest presented = Sha256(token);
  size_t match = listed.size();
  for (size_t i = 0; i < listed.size(); ++i) {
    uint8_t diff = 0;
    for (size_t b = 0; b < presented.size(); ++b) diff |= presented[b] ^ listed[i][b];
    const size_t is_match = static_cast<size_t>(diff == 0);
    match = is_match ? i : match;
  }
  if (match == listed.size()) return std::nullopt;
  return match;
}

Status ForEachTokenLine(
    std::string_view text, std::string_view source,
    const std::function<Status(std::string_view line, const std::string& where)>& take) {
  size_t line_number = 0;
  while (!text.empty()) {
    ++line_number;
    const size_t end = text.find('\n');
    const std::string_view line = TrimBlanks(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (line.empty() || line.front() == '#') continue;
    if (Status s = take(line, std::string(source) + ":" + std::to_string(line_number) + ": ");
        !s.ok()) {
      return s;
    }
  }
  return Status::Ok();
}

Result<std::string> ReadTokenFile(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path + ": cannot open the " + std::string(what) + " file");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace trailmap
