#include "query/http/params.h"

#include <algorithm>

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

Status Params::Read(const OptionSpec& spec, OptionTarget target) {
  if (spec.front == OptionFront::kCli) return Status::Ok();
  if (const std::string* v = Take(spec.name)) {
    if (Status s = ReadOption(spec, *v, target); !s.ok()) return s;
  }
  if (spec.negation.empty()) return Status::Ok();
  const std::string* v = Take(spec.negation);
  if (v == nullptr) return Status::Ok();
  OptionSpec negation = spec;
  negation.name = spec.negation;
  bool off = false;
  if (Status s = ReadOption(negation, *v, &off); !s.ok()) return s;
  if (off) *std::get<bool*>(target) = false;
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
