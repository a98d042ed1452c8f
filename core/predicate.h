// Predicate: the filter language shared by the CLI (--where), the HTTP API and the query
// protocol, parsed once, here.
//
//   host =~ "web.*" and op == "read" and not (disk in ("sdb", "sdc")) and latency > 10ms
//
// Grammar (keywords are lower case; whitespace separates tokens and is otherwise ignored):
//   predicate  := or
//   or         := and { "or" and }
//   and        := unary { "and" unary }
//   unary      := "not" unary | "(" or ")" | comparison
//   comparison := NAME op literal | NAME "in" "(" literal { "," literal } ")"
//   op         := "==" | "!=" | "<" | "<=" | ">" | ">=" | "=~" | "!~"
//   literal    := STRING | NUMBER [unit]
//   NAME       := [A-Za-z_][A-Za-z0-9_.-]*        a field, "host", a host label, or the metric's
//                                                  value name ("value", or "latency" / "size")
//   STRING     := '"' { any byte but '"' and '\', or '\' followed by '"' or '\' } '"'
//   NUMBER     := digits [ "." digits ] [unit]     units as in core/units.h: 10ms, 1.5s, 4KiB;
//                                                  for scalars also 50%, 12.5, 4MiB/s
//
// `=~` and `!~` take an RE2 regular expression (github.com/google/re2/wiki/Syntax: Perl-like,
// without back-references or lookaround) matched against the whole value. RE2 matches in time
// linear in the value whatever the pattern, so no predicate can make a query backtrack; a
// pattern RE2 refuses is a parse error that names the pattern and RE2's reason. A comparison on
// the metric's value (`latency > 10ms`) selects histogram buckets; every other comparison
// selects series by their fields. The limits below keep hostile input cheap: a parse costs time
// linear in the text, a regex is at most kMaxRegex bytes and kMaxRegexMemory of RE2 memory.
//
// Errors name the column (1-based) of the mistake: `column 14: expected a value after "=="`.
// Predicate is a value type; evaluation is thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace trailmap {

inline constexpr size_t kMaxPredicateText = 4096;     // bytes of predicate text
inline constexpr size_t kMaxPredicateDepth = 32;      // nested parentheses and "not"s
inline constexpr size_t kMaxLiteral = 256;            // bytes of one string literal
inline constexpr size_t kMaxRegex = 256;              // bytes of one regular expression
inline constexpr int64_t kMaxRegexMemory = 1 << 20;   // RE2 program and DFA memory of one regex
inline constexpr size_t kMaxInList = 256;             // values in one "in" list
inline constexpr size_t kMaxPredicateJson = 16384;    // bytes of a JSON predicate
inline constexpr size_t kMaxPredicateJsonDepth = 16;  // nested objects of a JSON predicate

// What a predicate is evaluated against: one series of one host.
class FieldLookup {
 public:
  virtual ~FieldLookup() = default;
  // The value of `name` (a field, "host", or a host label), or nullptr when it has none.
  virtual const std::string* Find(std::string_view name) const = 0;
};

class Predicate {
 public:
  enum class Op : uint8_t {
    kEq,
    kNe,
    kLt,
    kLe,
    kGt,
    kGe,
    kMatch,
    kNotMatch,
    kIn,
    kAnd,
    kOr,
    kNot,
    kTrue
  };

  // The empty text parses to a predicate that is always true. Text that starts with '{' (after
  // blanks) is the JSON form (docs/predicates.md); its errors name the JSON path of the mistake
  // ("at $.and[1].op: ..."), the text form's name the column.
  static Result<Predicate> Parse(std::string_view text);

  // True when a series with these fields passes. Comparisons on the value name (see
  // SetValueName) are treated as true here: they select buckets, not series.
  bool Matches(const FieldLookup& fields) const;
  // The [low, high] range of values (inclusive, base units) that every comparison on the value
  // name allows along every path: [0, UINT64_MAX] when there is none. A value comparison under
  // "or" or "not" is refused by Parse, so this is exact.
  std::pair<uint64_t, uint64_t> ValueRange() const;
  // True when `value` (a scalar in its metric's own unit: 12.5 for 12.5%, bytes for B/s) passes
  // every comparison on the value name; the scalar counterpart of ValueRange. Value comparisons
  // can only be joined by "and" (Parse refuses others), so this is exact.
  bool ValueMatches(double value) const;
  // The literals of the comparisons on the value name, as written ("50%", "10ms"), so a caller
  // that knows the metric's unit can refuse a literal in another ("value > 10ms" on a metric in %).
  std::vector<std::string> ValueLiterals() const;
  // The names the predicate reads, value name excluded, each once, in order of appearance.
  std::vector<std::string> Names() const;
  // Canonical text: parses back to the same predicate.
  std::string ToString() const;
  // The JSON form, compact: parses back to the same predicate ("" when always true). Bytes of a
  // literal that are not UTF-8 have no JSON form and become U+FFFD.
  std::string ToJson() const;
  bool always_true() const { return root_ == nullptr; }

  struct Node;  // the parsed tree, opaque outside predicate.cc

 private:
  friend class PredicateParser;
  static Result<Predicate> ParseText(std::string_view text);
  std::shared_ptr<const Node> root_;  // shared, immutable: a Predicate copies cheaply
};

// The JSON form turned into the text form (core/predicate_json.cc), checked comparison by
// comparison; errors name the JSON path. Predicate::Parse calls it.
Result<std::string> PredicateJsonToText(std::string_view json_text);

// The names that mean "the metric's value" in a comparison: "value", "latency" and "size".
bool IsValueName(std::string_view name);

}  // namespace trailmap
