#include "query/http/params.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "core/utf8.h"
#include "query/fetch/request_checks.h"

namespace trailmap {
namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

Result<std::string> Decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] == '%') {
      const int hi = i + 2 < text.size() ? HexDigit(text[i + 1]) : -1;
      const int lo = i + 2 < text.size() ? HexDigit(text[i + 2]) : -1;
      if (hi < 0 || lo < 0) {
        return Status::InvalidArgument("malformed percent escape in \"" + Printable(text) +
                                       "\": write %XX with two hex digits");
      }
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::string Flag(const std::string& name) { return "--" + name; }

bool IsPathByte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

}  // namespace

Result<std::string> RequestPath(std::string_view target) {
  const std::string_view path = target.substr(0, target.find('?'));
  bool canonical = path.starts_with('/');
  // Each segment after a '/': not empty (unless the path is "/"), not "." or "..".
  for (size_t start = 1; canonical && start <= path.size() && path != "/";) {
    const size_t slash = std::min(path.find('/', start), path.size());
    const std::string_view segment = path.substr(start, slash - start);
    canonical = !segment.empty() && segment != "." && segment != "..";
    for (char c : segment) canonical = canonical && IsPathByte(c);
    start = slash + 1;
  }
  if (!canonical) {
    return Status::InvalidArgument(
        "the path \"" + Printable(path) +
        "\" is not one trailmap-query serves: a path is /SEGMENT/... of letters, digits and - . _ "
        "~, without percent escapes and without empty, \".\" or \"..\" segments");
  }
  return std::string(path);
}

Result<Params> Params::Parse(std::string_view target) {
  Params params;
  const size_t question = target.find('?');
  Result<std::string> path = RequestPath(target);
  if (!path.ok()) return path.status();
  params.path_ = std::move(path).value();
  if (question == std::string_view::npos) return params;
  std::string_view rest = target.substr(question + 1);
  while (!rest.empty()) {
    const size_t amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    Result<std::string> name = Decode(pair.substr(0, eq));
    if (!name.ok()) return name.status();
    Result<std::string> value =
        Decode(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1));
    if (!value.ok()) return value.status();
    if (!IsValidUtf8(*name)) {
      return Status::InvalidArgument("the parameter name \"" + Printable(*name) +
                                     "\" is not valid UTF-8");
    }
    if (!IsValidUtf8(*value)) {
      return Status::InvalidArgument(Flag(*name) + " \"" + Printable(*value) +
                                     "\": not valid UTF-8");
    }
    if (!params.values_.emplace(*name, *value).second) {
      return Status::InvalidArgument(Flag(*name) + " is given twice");
    }
  }
  return params;
}

const std::string* Params::Take(const std::string& name) {
  auto it = values_.find(name);
  if (it == values_.end()) return nullptr;
  taken_.insert(name);
  return &it->second;
}

void Params::Text(const std::string& name, std::string* out) {
  if (const std::string* v = Take(name)) *out = *v;
}

Status Params::Bool(const std::string& name, bool* out) {
  const std::string* v = Take(name);
  if (v == nullptr) return Status::Ok();
  if (v->empty() || *v == "1" || *v == "true" || *v == "yes") {
    *out = true;
  } else if (*v == "0" || *v == "false" || *v == "no") {
    *out = false;
  } else {
    return Status::InvalidArgument(Flag(name) + " " + *v + ": give true or false");
  }
  return Status::Ok();
}

Status Params::Unsigned(const std::string& name, uint64_t max, uint64_t* out) {
  const std::string* v = Take(name);
  if (v == nullptr) return Status::Ok();
  char* end = nullptr;
  errno = 0;
  const unsigned long long n = std::strtoull(v->c_str(), &end, 10);
  if (v->empty() || *end != '\0' || errno != 0 || (*v)[0] == '-' || n > max) {
    return Status::InvalidArgument(Flag(name) + " " + *v + ": give a whole number from 0 to " +
                                   std::to_string(max));
  }
  *out = n;
  return Status::Ok();
}

Status Params::Int(const std::string& name, int* out) {
  uint64_t n = static_cast<uint64_t>(*out);
  if (Status s = Unsigned(name, 1'000'000'000, &n); !s.ok()) return s;
  *out = static_cast<int>(n);
  return Status::Ok();
}

Status Params::Double(const std::string& name, double* out) {
  const std::string* v = Take(name);
  if (v == nullptr) return Status::Ok();
  char* end = nullptr;
  const double d = std::strtod(v->c_str(), &end);
  if (v->empty() || *end != '\0') {
    return Status::InvalidArgument(Flag(name) + " " + *v + ": give a number");
  }
  *out = d;
  return Status::Ok();
}

Status Params::Unknown() const {
  for (const auto& [name, value] : values_) {
    if (taken_.count(name) == 0) {
      return Status::InvalidArgument("unknown parameter " + name + " for " + path_);
    }
  }
  return Status::Ok();
}

}  // namespace trailmap
