// Series keys: a metric name plus a canonical field set.
//
// A field set is written "k=v,k=v" with keys sorted and unique, so the same fields always give
// the same string, whichever order the source sent them in. Keys are [A-Za-z0-9_.-]{1,64};
// values are 1..200 bytes of printable ASCII without ','. A metric name is a dotted name of the
// same characters as keys, 1..128 bytes.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"

namespace trailmap {

using Field = std::pair<std::string, std::string>;
using FieldSet = std::vector<Field>;

inline constexpr size_t kMaxMetricName = 128;
inline constexpr size_t kMaxFieldKey = 64;
inline constexpr size_t kMaxFieldValue = 200;
inline constexpr size_t kMaxFields = 16;

Status ValidateMetricName(std::string_view name);
Status ValidateField(std::string_view key, std::string_view value);
// Sorts by key and checks every field; a repeated key is an error.
Result<std::string> CanonicalFields(FieldSet fields);
// Parses a canonical "k=v,k=v" string back into fields (checks it is canonical).
Result<FieldSet> ParseFields(std::string_view canonical);
// The value of `key` in a canonical field string, or "" when absent.
std::string_view FieldValue(std::string_view canonical, std::string_view key);

}  // namespace trailmap
