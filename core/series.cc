#include "core/series.h"

#include <algorithm>

namespace trailmap {
namespace {

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

}  // namespace

Status ValidateMetricName(std::string_view name) {
  if (name.empty()) return Status::InvalidArgument("empty metric name");
  if (name.size() > kMaxMetricName) {
    return Status::InvalidArgument("metric name longer than " + std::to_string(kMaxMetricName) +
                                   " bytes");
  }
  for (char c : name) {
    if (!IsNameChar(c)) {
      return Status::InvalidArgument("metric name '" + std::string(name) +
                                     "' has a character outside [A-Za-z0-9_.-]");
    }
  }
  return Status::Ok();
}

Status ValidateField(std::string_view key, std::string_view value) {
  if (key.empty() || key.size() > kMaxFieldKey) {
    return Status::InvalidArgument("field key must be 1.." + std::to_string(kMaxFieldKey) +
                                   " bytes");
  }
  for (char c : key) {
    if (!IsNameChar(c)) {
      return Status::InvalidArgument("field key '" + std::string(key) +
                                     "' has a character outside [A-Za-z0-9_.-]");
    }
  }
  if (value.empty() || value.size() > kMaxFieldValue) {
    return Status::InvalidArgument("field '" + std::string(key) + "' value must be 1.." +
                                   std::to_string(kMaxFieldValue) + " bytes");
  }
  for (char c : value) {
    if (c < 0x21 || c > 0x7e || c == ',') {
      return Status::InvalidArgument("field '" + std::string(key) +
                                     "' value has a space, ',' or non-printable byte");
    }
  }
  return Status::Ok();
}

Result<std::string> CanonicalFields(FieldSet fields) {
  if (fields.size() > kMaxFields) {
    return Status::InvalidArgument(std::to_string(fields.size()) + " fields, at most " +
                                   std::to_string(kMaxFields));
  }
  std::sort(fields.begin(), fields.end());
  std::string out;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (Status s = ValidateField(fields[i].first, fields[i].second); !s.ok()) return s;
    if (i > 0 && fields[i].first == fields[i - 1].first) {
      return Status::InvalidArgument("field '" + fields[i].first + "' given twice");
    }
    if (i > 0) out += ',';
    out += fields[i].first;
    out += '=';
    out += fields[i].second;
  }
  return out;
}

Result<FieldSet> ParseFields(std::string_view canonical) {
  FieldSet fields;
  size_t start = 0;
  while (start < canonical.size()) {
    size_t end = canonical.find(',', start);
    if (end == std::string_view::npos) end = canonical.size();
    std::string_view part = canonical.substr(start, end - start);
    const size_t eq = part.find('=');
    if (eq == std::string_view::npos) {
      return Status::InvalidArgument("field '" + std::string(part) + "' has no '='");
    }
    fields.emplace_back(std::string(part.substr(0, eq)), std::string(part.substr(eq + 1)));
    start = end + 1;
    if (end + 1 == canonical.size()) return Status::InvalidArgument("field set ends with ','");
  }
  Result<std::string> again = CanonicalFields(fields);
  if (!again.ok()) return again.status();
  if (*again != canonical)
    return Status::InvalidArgument("field set '" + std::string(canonical) +
                                   "' is not canonical (keys sorted, unique)");
  return fields;
}

std::string_view FieldValue(std::string_view canonical, std::string_view key) {
  size_t start = 0;
  while (start < canonical.size()) {
    size_t end = canonical.find(',', start);
    if (end == std::string_view::npos) end = canonical.size();
    std::string_view part = canonical.substr(start, end - start);
    if (part.size() > key.size() && part.substr(0, key.size()) == key && part[key.size()] == '=') {
      return part.substr(key.size() + 1);
    }
    start = end + 1;
  }
  return {};
}

}  // namespace trailmap
