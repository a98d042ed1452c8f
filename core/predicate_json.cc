// The JSON form of predicates (docs/predicates.md): read by turning the JSON into the text form,
// one comparison at a time, so both forms share one parser, one set of limits and one AST; every
// mistake is reported with the JSON path where it is ("at $.and[1].value: ...").
#include <cctype>
#include <nlohmann/json.hpp>
#include <string>

#include "core/predicate.h"

namespace trailmap {
namespace {

using nlohmann::json;

Status ErrorAt(const std::string& path, const std::string& what) {
  return Status::InvalidArgument("at " + path + ": " + what);
}

// Drops the "column N: " a text parse puts in front: the column is of generated text.
std::string WithoutColumn(const std::string& message) {
  if (message.rfind("column ", 0) != 0) return message;
  const size_t colon = message.find(": ");
  return colon == std::string::npos ? message : message.substr(colon + 2);
}

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// One literal as predicate text. On the value name a string is a number with a unit ("10ms").
Result<std::string> LiteralText(const json& v, bool value_name, const std::string& path) {
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (s.size() > kMaxLiteral) {
      return ErrorAt(path, "string longer than " + std::to_string(kMaxLiteral) + " bytes");
    }
    if (!value_name) return Quote(s);
    if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0])) ||
        s.find_first_of(" \t\"(),") != std::string::npos) {
      return ErrorAt(path, "\"" + s + "\" is not a number with a unit (10ms, 1.5s, 4KiB, 50%)");
    }
    return s;
  }
  if (v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0)) {
    return v.dump();
  }
  if (v.is_number_float() && v.get<double>() >= 0 && v.get<double>() < 9.2e18) {
    std::string text = v.dump();
    if (text.find_first_of("eE") != std::string::npos) {
      return ErrorAt(path, "write the number without an exponent");
    }
    return text;
  }
  if (v.is_object() && v.size() == 1 && v.contains("number") && v["number"].is_string()) {
    return LiteralText(v["number"], true, path + ".number");
  }
  if (v.is_number()) return ErrorAt(path, "numbers are not negative");
  return ErrorAt(path, "expected a string, a number or {\"number\": \"10ms\"}, got " +
                           std::string(v.type_name()));
}

// `conjunctive`: on every path from the root only "and" was passed, so a comparison on the value
// is allowed here.
Result<std::string> ToText(const json& j, const std::string& path, size_t depth, bool conjunctive) {
  if (depth > kMaxPredicateJsonDepth) {
    return ErrorAt(path,
                   "nested deeper than " + std::to_string(kMaxPredicateJsonDepth) + " levels");
  }
  if (!j.is_object()) return ErrorAt(path, "expected an object, got " + std::string(j.type_name()));
  for (const char* joiner : {"and", "or"}) {
    if (!j.contains(joiner)) continue;
    if (j.size() != 1) return ErrorAt(path, std::string("\"") + joiner + "\" takes no other keys");
    const json& list = j[joiner];
    const std::string at = path + "." + joiner;
    if (!list.is_array() || list.empty()) return ErrorAt(at, "expected a non-empty list");
    std::string out;
    for (size_t i = 0; i < list.size(); ++i) {
      Result<std::string> part = ToText(list[i], at + "[" + std::to_string(i) + "]", depth + 1,
                                        conjunctive && joiner[0] == 'a');
      if (!part.ok()) return part;
      if (i > 0) out += std::string(" ") + joiner + " ";
      out += "(" + *part + ")";
    }
    return out;
  }
  if (j.contains("not")) {
    if (j.size() != 1) return ErrorAt(path, "\"not\" takes no other keys");
    Result<std::string> inner = ToText(j["not"], path + ".not", depth + 1, false);
    if (!inner.ok()) return inner;
    return "not (" + *inner + ")";
  }
  // A comparison: {"field": NAME, "op": OP, "value": LITERAL} or, for "in", "value": [LITERAL...].
  for (const auto& [key, unused] : j.items()) {
    if (key != "field" && key != "op" && key != "value") {
      return ErrorAt(path, "unknown key \"" + key +
                               "\"; a predicate is {\"and\": [...]}, {\"or\": [...]}, {\"not\": "
                               "{...}} or {\"field\": ..., \"op\": ..., \"value\": ...}");
    }
  }
  for (const char* key : {"field", "op", "value"}) {
    if (!j.contains(key)) return ErrorAt(path, std::string("missing \"") + key + "\"");
  }
  if (!j["field"].is_string()) return ErrorAt(path + ".field", "expected a string");
  if (!j["op"].is_string()) return ErrorAt(path + ".op", "expected a string");
  const std::string& field = j["field"].get_ref<const std::string&>();
  const std::string& op = j["op"].get_ref<const std::string&>();
  const bool value_name = IsValueName(field);
  if (value_name && !conjunctive) {
    return ErrorAt(path, "a comparison on '" + field +
                             "' selects buckets and may only be joined with \"and\"");
  }
  std::string text = field + " " + op + " ";
  const json& value = j["value"];
  if (op == "in") {
    if (!value.is_array() || value.empty())
      return ErrorAt(path + ".value", "\"in\" takes a non-empty list");
    if (value.size() > kMaxInList) {
      return ErrorAt(path + ".value",
                     "more than " + std::to_string(kMaxInList) + " values in the list");
    }
    text += "(";
    for (size_t i = 0; i < value.size(); ++i) {
      Result<std::string> lit =
          LiteralText(value[i], value_name, path + ".value[" + std::to_string(i) + "]");
      if (!lit.ok()) return lit;
      text += (i > 0 ? ", " : "") + *lit;
    }
    text += ")";
  } else {
    Result<std::string> lit = LiteralText(value, value_name, path + ".value");
    if (!lit.ok()) return lit;
    text += *lit;
  }
  // Each comparison is checked alone, so its error can name this path.
  Result<Predicate> alone = Predicate::Parse(text);
  if (!alone.ok()) return ErrorAt(path, WithoutColumn(alone.status().message()));
  return text;
}

}  // namespace

Result<std::string> PredicateJsonToText(std::string_view json_text) {
  if (json_text.size() > kMaxPredicateJson) {
    return Status::InvalidArgument("JSON predicate longer than " +
                                   std::to_string(kMaxPredicateJson) + " bytes");
  }
  json j = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    // Parse again for the position: the exception carries the byte offset.
    try {
      const json again = json::parse(json_text);
      static_cast<void>(again);
    } catch (const json::parse_error& e) {
      return Status::InvalidArgument("JSON predicate does not parse at byte " +
                                     std::to_string(e.byte) + ": " + e.what());
    } catch (const json::exception& e) {
      // Not only parse_error: a number past a double is out_of_range 406 ("9e9992"), which
      // escaped and ended the process (found by fuzz/predicate_json_fuzz).
      return Status::InvalidArgument(std::string("JSON predicate does not parse: ") + e.what());
    }
    return Status::InvalidArgument("JSON predicate does not parse");
  }
  return ToText(j, "$", 1, true);
}

}  // namespace trailmap
