#include "query/draw/json_text.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "core/batch.h"
#include "core/timespec.h"

namespace trailmap {

void JsonObjectText::Key(std::string_view key) {
  if (pretty_) out_ += first_ ? "\n  " : ",\n  ";
  if (!pretty_ && !first_) out_ += ',';
  first_ = false;
  out_ += nlohmann::ordered_json(key).dump();
  out_ += pretty_ ? ": " : ":";
}

void JsonObjectText::Add(std::string_view key, const nlohmann::ordered_json& value) {
  Key(key);
  if (pretty_ && value.is_array() && !value.empty() &&
      (value.front().is_array() || value.front().is_object())) {
    out_ += "[\n";
    for (size_t i = 0; i < value.size(); ++i) {
      out_ += "    " + value[i].dump() + (i + 1 < value.size() ? ",\n" : "\n");
    }
    out_ += "  ]";
  } else {
    out_ += value.dump();
  }
}

void JsonObjectText::AddAll(const nlohmann::ordered_json& object) {
  for (const auto& [key, value] : object.items()) Add(key, value);
}

std::string JsonObjectText::Finish() && {
  out_ += pretty_ ? "\n}\n" : "}\n";
  return std::move(out_);
}

void AppendJsonNumber(uint64_t value, std::string* out) {
  char text[24];
  out->append(text, std::to_chars(text, text + sizeof text, value).ptr);
}

void AppendJsonNumber(double value, std::string* out) {
  if (!std::isfinite(value)) {
    *out += "null";
    return;
  }
  if (std::signbit(value)) {
    out->push_back('-');
    value = -value;
  }
  if (value == 0) {
    *out += "0.0";
    return;
  }
  // The shortest digits d.ddd and exponent e, then laid out as nlohmann's format_buffer does
  // with its bounds of 1e-4 and 1e15: n is where the decimal point falls after the k digits.
  char sci[32];
  const char* end = std::to_chars(sci, sci + sizeof sci, value, std::chars_format::scientific).ptr;
  char digits[24];
  int k = 0;
  const char* p = sci;
  for (; p < end && *p != 'e'; ++p) {
    if (*p != '.') digits[k++] = *p;
  }
  int e = 0;
  std::from_chars(p + (p[1] == '+' ? 2 : 1), end, e);
  const int n = e + 1;
  if (k <= n && n <= 15) {  // 1234500.0
    out->append(digits, k).append(n - k, '0').append(".0");
  } else if (0 < n && n <= 15) {  // 12.345
    out->append(digits, n).append(".").append(digits + n, k - n);
  } else if (-4 < n && n <= 0) {  // 0.0012345
    out->append("0.").append(-n, '0').append(digits, k);
  } else {  // 1.2345e-05, 1e+15
    out->push_back(digits[0]);
    if (k > 1) out->append(".").append(digits + 1, k - 1);
    const int x = n - 1;
    out->append(x < 0 ? "e-" : "e+");
    if (std::abs(x) < 10) out->push_back('0');
    out->append(std::to_string(std::abs(x)));
  }
}

void AddJsonHead(const JsonHead& head, nlohmann::ordered_json* j) {
  (*j)["view"] = head.view;
  (*j)["metric"] = head.metric;
  if (head.kind) (*j)["kind"] = MetricKindName(*head.kind);
  (*j)["unit"] = head.unit;
  if (head.group_by) (*j)["group_by"] = *head.group_by;
  (*j)["from"] = head.from;
  (*j)["to"] = head.to;
  if (head.rfc3339) {
    (*j)["from_rfc3339"] = FormatRfc3339(head.from);
    (*j)["to_rfc3339"] = FormatRfc3339(head.to);
  }
}

}  // namespace trailmap
