// How the views write JSON: for people one key a line, and an array of arrays or objects one
// element a line, so a 50 × 1,000 grid stays readable and diffable without the one number a line
// that a plain pretty-print gives; for programs compact. Pure functions, and a writer
// (JsonObjectText) each caller owns.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "core/batch.h"

namespace trailmap {

// A JSON object written key by key: compact as nlohmann's dump(), or one key a line (above).
// Small values go in as JSON values; a large matrix of numbers is written
// straight into the text (AddRows): building and dumping a 50 × 1,000 grid's three matrices as
// 150,000 JSON values was a third of a columns view's time in the CLI (docs/benchmarks-log.md,
// "The views at fleet scale").
class JsonObjectText {
 public:
  explicit JsonObjectText(bool pretty) : pretty_(pretty) {}

  void Add(std::string_view key, const nlohmann::ordered_json& value);
  // Every key of `object`, in its order.
  void AddAll(const nlohmann::ordered_json& object);
  // key: [[row 0], [row 1], ...]: `rows` rows of `columns` numbers, cell(r, c, &text) appending
  // each (AppendJsonNumber); one row a line when pretty, as Add writes an array of arrays.
  template <typename Cell>
  void AddRows(std::string_view key, size_t rows, size_t columns, Cell&& cell) {
    Key(key);
    if (rows == 0) {
      out_ += "[]";
      return;
    }
    out_ += pretty_ ? "[\n" : "[";
    for (size_t r = 0; r < rows; ++r) {
      if (pretty_) out_ += "    ";
      out_ += '[';
      for (size_t c = 0; c < columns; ++c) {
        if (c > 0) out_ += ',';
        cell(r, c, &out_);
      }
      out_ += ']';
      if (r + 1 < rows) out_ += pretty_ ? ",\n" : ",";
    }
    out_ += pretty_ ? "\n  ]" : "]";
  }
  // The document, closed, with a line break after it.
  std::string Finish() &&;

 private:
  void Key(std::string_view key);

  const bool pretty_;
  std::string out_ = "{";
  bool first_ = true;
};

// A number as nlohmann's dump() writes it: integers plainly; a double in the shortest form that
// reads back as the same double, fixed between 1e-4 and 1e15 (with ".0" when whole) and
// exponential outside ("2e-05"), "null" when not finite. nlohmann's Grisu2 digits are not always
// the shortest or the closest (~0.1% of random doubles get a digit more or another last digit),
// so those few differ in text, never in value.
void AppendJsonNumber(uint64_t value, std::string* out);
void AppendJsonNumber(double value, std::string* out);

// The keys every view's document opens with (docs/json.md), written once so the views agree:
// "view", "metric", "kind" (when given), "unit", "group_by" (when given), "from", "to", and with
// `rfc3339` also "from_rfc3339" and "to_rfc3339".
struct JsonHead {
  const char* view = "";
  std::string metric;
  std::optional<MetricKind> kind;
  std::string unit;
  std::optional<std::string> group_by;
  int64_t from = 0;
  int64_t to = 0;
  bool rfc3339 = false;
};
void AddJsonHead(const JsonHead& head, nlohmann::ordered_json* j);

}  // namespace trailmap
