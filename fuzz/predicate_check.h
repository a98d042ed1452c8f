// The properties both predicate targets check (predicate_fuzz, predicate_json_fuzz).
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "core/predicate.h"
#include "fuzz/fuzz_check.h"

namespace trailmap::fuzz {

class MapLookup : public FieldLookup {
 public:
  std::map<std::string, std::string, std::less<>> fields;
  const std::string* Find(std::string_view name) const override {
    auto it = fields.find(name);
    return it == fields.end() ? nullptr : &it->second;
  }
};

// True when `s` is well-formed UTF-8 (what JSON strings can hold).
inline bool IsUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = s[i];
    size_t n = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : 9;
    if (n == 9 || i + n >= s.size() + (n == 0)) return false;
    for (size_t k = 1; k <= n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return false;
    }
    const unsigned char c1 = n ? s[i + 1] : 0;
    if (c == 0xc0 || c == 0xc1 || c > 0xf4 || (c == 0xe0 && c1 < 0xa0) ||
        (c == 0xed && c1 >= 0xa0) || (c == 0xf0 && c1 < 0x90) || (c == 0xf4 && c1 >= 0x90)) {
      return false;  // overlong, a surrogate, or past U+10FFFF
    }
    i += n + 1;
  }
  return true;
}

inline void CheckPredicate(std::string_view text) {
  Result<Predicate> p = Predicate::Parse(text);
  if (!p.ok()) {
    FUZZ_CHECK(!p.status().message().empty());
    return;
  }
  const std::string canonical = p->ToString();
  const std::string json = p->ToJson();
  Result<Predicate> again = Predicate::Parse(canonical);
  FUZZ_CHECK(again.ok(), "'%s' does not parse again: %s", canonical.c_str(),
             again.status().ToString().c_str());
  FUZZ_CHECK(again->ToString() == canonical, "'%s' reparses as '%s'", canonical.c_str(),
             again->ToString().c_str());
  FUZZ_CHECK(again->ToJson() == json);
  if (!json.empty() && IsUtf8(canonical)) {  // other bytes have no JSON form (U+FFFD)
    Result<Predicate> from_json = Predicate::Parse(json);
    FUZZ_CHECK(from_json.ok(), "JSON '%s' does not parse: %s", json.c_str(),
               from_json.status().ToString().c_str());
    FUZZ_CHECK(from_json->ToString() == canonical, "JSON '%s' parses as '%s', not '%s'",
               json.c_str(), from_json->ToString().c_str(), canonical.c_str());
  }
  FUZZ_CHECK(json.empty() == p->always_true());
  const auto range = p->ValueRange();
  FUZZ_CHECK(again->ValueRange() == range);
  // Evaluate against fields named as the predicate reads them, valued by their own names.
  MapLookup lookup;
  for (const std::string& name : p->Names()) lookup.fields[name] = name;
  const bool matches = p->Matches(lookup);
  FUZZ_CHECK(again->Matches(lookup) == matches, "'%s' and its canonical text disagree",
             canonical.c_str());
}

}  // namespace trailmap::fuzz
