#include "net/curve_keys.h"

#include <sys/stat.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

namespace trailmap {
namespace {

constexpr std::string_view kZ85 =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

// Each byte's value in kZ85, or -1.
constexpr std::array<int8_t, 256> kZ85Index = [] {
  std::array<int8_t, 256> index{};
  index.fill(-1);
  for (size_t i = 0; i < kZ85.size(); ++i) index[static_cast<unsigned char>(kZ85[i])] = i;
  return index;
}();

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// Splits `text` into lines and calls `fn(line_number, trimmed_line)` for each that is neither
// blank nor a comment, stopping at the first error.
template <typename Fn>
Status ForEachLine(std::string_view text, Fn fn) {
  size_t number = 0;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = Trim(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++number;
    if (line.empty() || line.front() == '#') continue;
    if (Status s = fn(number, line); !s.ok()) return s;
  }
  return Status::Ok();
}

std::string At(std::string_view source, size_t line) {
  return std::string(source) + ":" + std::to_string(line) + ": ";
}

// What ValidateZ85Key says, for messages: printable and short.
std::string Shown(std::string_view value) {
  std::string out;
  for (char c : value.substr(0, 48)) out.push_back(c >= 0x20 && c < 0x7f ? c : '?');
  return value.size() > 48 ? out + "..." : out;
}

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return Status::NotFound(path + ": no such file");
    return Status::IOError(path + ": cannot read it: " + std::strerror(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::IOError(path + ": read error");
  return text.str();
}

}  // namespace

std::string Z85Encode(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() / 4 * 5);
  for (size_t i = 0; i + 4 <= bytes.size(); i += 4) {
    uint32_t value = 0;
    for (size_t j = 0; j < 4; ++j) value = value << 8 | static_cast<unsigned char>(bytes[i + j]);
    char group[5];
    for (int j = 4; j >= 0; --j) {
      group[j] = kZ85[value % 85];
      value /= 85;
    }
    out.append(group, 5);
  }
  return out;
}

Result<std::string> Z85Decode(std::string_view text) {
  if (text.size() % 5 != 0) {
    return Status::InvalidArgument("Z85 text of " + std::to_string(text.size()) +
                                   " characters; it comes in groups of 5");
  }
  std::string out;
  out.reserve(text.size() / 5 * 4);
  for (size_t i = 0; i < text.size(); i += 5) {
    uint64_t value = 0;
    for (size_t j = 0; j < 5; ++j) {
      const int8_t digit = kZ85Index[static_cast<unsigned char>(text[i + j])];
      if (digit < 0) {
        return Status::InvalidArgument("character " + std::to_string(i + j + 1) +
                                       " is not in the Z85 alphabet");
      }
      value = value * 85 + digit;
    }
    if (value > UINT32_MAX) {
      return Status::InvalidArgument("characters " + std::to_string(i + 1) + "-" +
                                     std::to_string(i + 5) + " are past 2^32: not Z85");
    }
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(value >> shift));
  }
  return out;
}

Status ValidateZ85Key(std::string_view key) {
  if (key.size() != kZ85KeyLength) {
    return Status::InvalidArgument("a CURVE key is 40 Z85 characters; \"" + Shown(key) + "\" has " +
                                   std::to_string(key.size()));
  }
  if (Result<std::string> bytes = Z85Decode(key); !bytes.ok()) {
    return Status::InvalidArgument("\"" + Shown(key) +
                                   "\" is not a Z85 key: " + bytes.status().message());
  }
  return Status::Ok();
}

bool IsValidKeyName(std::string_view name) {
  if (name.empty() || name.size() > kMaxKeyNameLength) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

Result<CurveKeyFile> ParseCurveKeyFile(std::string_view text, std::string_view source) {
  CurveKeyFile key;
  std::set<std::string, std::less<>> seen;
  Status s = ForEachLine(text, [&](size_t line, std::string_view content) -> Status {
    const size_t eq = content.find('=');
    if (eq == std::string_view::npos) {
      return Status::InvalidArgument(At(source, line) +
                                     "expected KEY = VALUE (name, public-key or secret-key); is "
                                     "this a trailmap key file (trailmap keygen)?");
    }
    const std::string_view name = Trim(content.substr(0, eq));
    std::string_view value = Trim(content.substr(eq + 1));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
      value = value.substr(1, value.size() - 2);
    } else if (!value.empty() && (value.front() == '"' || value.back() == '"')) {
      return Status::InvalidArgument(At(source, line) + "unbalanced quote in the value of " +
                                     Shown(name));
    }
    std::string* out = name == "name"         ? &key.name
                       : name == "public-key" ? &key.public_key
                       : name == "secret-key" ? &key.secret_key
                                              : nullptr;
    if (out == nullptr) {
      return Status::InvalidArgument(At(source, line) + "unknown key \"" + Shown(name) +
                                     "\"; a key file holds name, public-key and secret-key");
    }
    if (!seen.insert(std::string(name)).second) {
      return Status::InvalidArgument(At(source, line) + std::string(name) + " given twice");
    }
    if (name == "name") {
      if (!IsValidKeyName(value)) {
        return Status::InvalidArgument(At(source, line) + "name \"" + Shown(value) +
                                       "\": use 1-64 letters, digits, '.', '_' or '-'");
      }
    } else if (Status v = ValidateZ85Key(value); !v.ok()) {
      return Status::InvalidArgument(At(source, line) + std::string(name) + ": " + v.message());
    }
    *out = std::string(value);
    return Status::Ok();
  });
  if (!s.ok()) return s;
  if (key.public_key.empty()) {
    return Status::InvalidArgument(std::string(source) +
                                   ": no public-key line; write key files with trailmap keygen");
  }
  return key;
}

std::string FormatCurveKeyFile(const CurveKeyFile& key) {
  std::string out;
  if (!key.secret_key.empty()) {
    out += "# trailmap CURVE key pair" + (key.name.empty() ? "" : " \"" + key.name + "\"") +
           ": keep this file secret (mode 0600); its .pub goes to the aggregators' clients list\n";
  } else {
    out += "# trailmap CURVE public key" + (key.name.empty() ? "" : " of \"" + key.name + "\"") +
           ": list it in the aggregators' clients file (trailmap keygen --help)\n";
  }
  if (!key.name.empty()) out += "name = \"" + key.name + "\"\n";
  out += "public-key = \"" + key.public_key + "\"\n";
  if (!key.secret_key.empty()) out += "secret-key = \"" + key.secret_key + "\"\n";
  return out;
}

Result<CurveKeyFile> LoadCurveKeyFile(const std::string& path, bool need_secret) {
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  Result<CurveKeyFile> key = ParseCurveKeyFile(*text, path);
  if (!key.ok() || !need_secret) return key;
  if (key->secret_key.empty()) {
    return Status::InvalidArgument(path +
                                   ": holds no secret-key (a .pub file?); give the .key file "
                                   "trailmap keygen wrote");
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && (st.st_mode & 077) != 0) {
    return Status::InvalidArgument(path + ": a secret key readable by group or others; chmod 600 " +
                                   path);
  }
  return key;
}

bool GlobMatch(std::string_view pattern, std::string_view text) {
  // Iterative, with one backtrack point for the last '*': linear in practice, never exponential.
  size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

bool ClientKey::MayWrite(std::string_view host) const {
  if (!ingest) return false;
  for (const std::string& pattern : hosts) {
    if (GlobMatch(pattern, host)) return true;
  }
  return false;
}

Result<std::vector<ClientKey>> ParseClientKeys(std::string_view text, std::string_view source) {
  std::vector<ClientKey> keys;
  std::set<std::string, std::less<>> public_keys;
  Status s = ForEachLine(text, [&](size_t line, std::string_view content) -> Status {
    std::vector<std::string_view> words;
    while (!content.empty()) {
      const size_t end = content.find_first_of(" \t");
      words.push_back(content.substr(0, end));
      content = end == std::string_view::npos ? std::string_view() : Trim(content.substr(end));
    }
    if (words.size() < 3) {
      return Status::InvalidArgument(At(source, line) +
                                     "expected NAME PUBLIC-KEY RIGHTS [HOSTS...], e.g. \"web-1 "
                                     "<40 Z85 characters of web-1.pub> ingest web-1\"");
    }
    ClientKey key;
    if (!IsValidKeyName(words[0])) {
      return Status::InvalidArgument(At(source, line) + "name \"" + Shown(words[0]) +
                                     "\": use 1-64 letters, digits, '.', '_' or '-'");
    }
    key.name = std::string(words[0]);
    if (Status v = ValidateZ85Key(words[1]); !v.ok()) {
      return Status::InvalidArgument(At(source, line) + "public key of " + key.name + ": " +
                                     v.message());
    }
    key.public_key = std::string(words[1]);
    if (!public_keys.insert(key.public_key).second) {
      return Status::InvalidArgument(At(source, line) + "the public key of " + key.name +
                                     " is listed twice; list each key once");
    }
    std::string_view rights = words[2];
    while (!rights.empty()) {
      const size_t comma = rights.find(',');
      const std::string_view right = rights.substr(0, comma);
      rights = comma == std::string_view::npos ? std::string_view() : rights.substr(comma + 1);
      if (right.empty()) continue;
      if (right == "ingest") {
        key.ingest = true;
      } else if (right == "query") {
        key.query = true;
      } else {
        return Status::InvalidArgument(At(source, line) + "right \"" + Shown(right) + "\" of " +
                                       key.name + ": use ingest, query or ingest,query");
      }
    }
    if (!key.ingest && !key.query) {
      return Status::InvalidArgument(At(source, line) + key.name +
                                     " has no rights: use ingest, query or ingest,query");
    }
    for (size_t i = 3; i < words.size(); ++i) key.hosts.emplace_back(words[i]);
    if (key.ingest && key.hosts.empty()) {
      return Status::InvalidArgument(At(source, line) + key.name +
                                     " may ingest but lists no hosts; add the hosts it may write "
                                     "(names or patterns like web-*, or * for any)");
    }
    if (!key.ingest && !key.hosts.empty()) {
      return Status::InvalidArgument(At(source, line) + key.name +
                                     " lists hosts but may not ingest; add the ingest right or "
                                     "drop the hosts");
    }
    for (const ClientKey& other : keys) {
      if (other.name == key.name &&
          (other.ingest != key.ingest || other.query != key.query || other.hosts != key.hosts)) {
        return Status::InvalidArgument(At(source, line) + key.name +
                                       " is listed before with other rights or hosts; the keys "
                                       "of one name share them");
      }
    }
    keys.push_back(std::move(key));
    return Status::Ok();
  });
  if (!s.ok()) return s;
  return keys;
}

Result<std::vector<ClientKey>> LoadClientKeys(const std::string& path) {
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  return ParseClientKeys(*text, path);
}

Status CurveClient::Usable() const {
  if (plaintext || keyed()) return Status::Ok();
  return Status::InvalidArgument(
      "no CURVE key: give --key FILE (this client's .key) and --server-key FILE (the "
      "aggregators' .pub), or TRAILMAP_KEY and TRAILMAP_SERVER_KEY (trailmap keygen makes them); "
      "or --insecure-plaintext on a lab network");
}

void ClientKeyPathsFromEnvironment(bool plaintext, std::string* key_path,
                                   std::string* server_key_path) {
  if (plaintext) return;
  const char* key = std::getenv("TRAILMAP_KEY");
  const char* server_key = std::getenv("TRAILMAP_SERVER_KEY");
  if (key != nullptr && key_path->empty()) *key_path = key;
  if (server_key != nullptr && server_key_path->empty()) *server_key_path = server_key;
}

Result<CurveClient> ResolveCurveClient(const std::string& key_path,
                                       const std::string& server_key_path, bool plaintext) {
  CurveClient client;
  if (plaintext) {
    if (!key_path.empty() || !server_key_path.empty()) {
      return Status::InvalidArgument(
          "--insecure-plaintext together with a key (--key/--server-key or TRAILMAP_KEY/"
          "TRAILMAP_SERVER_KEY): choose one");
    }
    client.plaintext = true;
    return client;
  }
  if (key_path.empty() && server_key_path.empty()) return client;
  if (key_path.empty() || server_key_path.empty()) {
    return Status::InvalidArgument(std::string(key_path.empty() ? "--key" : "--server-key") +
                                   " is missing: a CURVE client needs its own .key and the "
                                   "aggregators' .pub");
  }
  Result<CurveKeyFile> own = LoadCurveKeyFile(key_path, /*need_secret=*/true);
  if (!own.ok()) return Status::InvalidArgument("--key: " + own.status().message());
  Result<CurveKeyFile> server = LoadCurveKeyFile(server_key_path, /*need_secret=*/false);
  if (!server.ok()) return Status::InvalidArgument("--server-key: " + server.status().message());
  client.name = own->name;
  client.public_key = own->public_key;
  client.secret_key = own->secret_key;
  client.server_key = server->public_key;
  return client;
}

}  // namespace trailmap
