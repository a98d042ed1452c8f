#include "core/predicate.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include <re2/re2.h>
#include <nlohmann/json.hpp>

#include "core/units.h"

namespace trailmap {

struct Literal {
  std::string text;  // the string's content, or the number as written ("10ms")
  bool is_string = false;
  bool numeric = false;  // a number, or a string that reads as one
  uint64_t number = 0;   // in base units (ns, bytes) when numeric
  double real = 0;       // the same as a double; "12.5" and "50%" keep their fraction (scalars)
};

struct Predicate::Node {
  Op op = Op::kTrue;
  std::string name;                                   // comparisons
  std::vector<Literal> literals;                      // one, or the "in" list
  std::shared_ptr<const re2::RE2> regex;              // compiled once; RE2 matching is thread-safe
  std::vector<std::shared_ptr<const Node>> children;  // and, or, not
};

namespace {

enum class Tok {
  kName,
  kString,
  kNumber,
  kOp,
  kLParen,
  kRParen,
  kComma,
  kAnd,
  kOr,
  kNot,
  kIn,
  kEnd
};

struct Token {
  Tok kind = Tok::kEnd;
  std::string text;   // a string's unescaped content; otherwise as written
  size_t column = 0;  // 1-based
};

Status ErrorAt(size_t column, const std::string& what) {
  return Status::InvalidArgument("column " + std::to_string(column) + ": " + what);
}

bool NameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool NameChar(char c) { return NameStart(c) || (c >= '0' && c <= '9') || c == '.' || c == '-'; }

Result<std::vector<Token>> Lex(std::string_view in) {
  std::vector<Token> out;
  size_t i = 0;
  while (true) {
    while (i < in.size() && (in[i] == ' ' || in[i] == '\t' || in[i] == '\n' || in[i] == '\r')) ++i;
    Token t;
    t.column = i + 1;
    if (i == in.size()) {
      out.push_back(t);
      return out;
    }
    const char c = in[i];
    if (c == '(' || c == ')' || c == ',') {
      t.kind = c == '(' ? Tok::kLParen : c == ')' ? Tok::kRParen : Tok::kComma;
      t.text = std::string(1, c);
      ++i;
    } else if (c == '"') {
      t.kind = Tok::kString;
      ++i;
      while (true) {
        if (i == in.size()) return ErrorAt(t.column, "string is not closed with '\"'");
        if (in[i] == '"') break;
        if (in[i] == '\\') {
          if (i + 1 == in.size() || (in[i + 1] != '"' && in[i + 1] != '\\')) {
            return ErrorAt(i + 1, "only \\\" and \\\\ are escapes in a string");
          }
          ++i;
        }
        t.text += in[i++];
        if (t.text.size() > kMaxLiteral) {
          return ErrorAt(t.column, "string longer than " + std::to_string(kMaxLiteral) + " bytes");
        }
      }
      ++i;
    } else if (c >= '0' && c <= '9') {
      t.kind = Tok::kNumber;
      size_t j = i;
      while (j < in.size() && (NameChar(in[j]) || in[j] == '%' || in[j] == '/' ||
                               static_cast<unsigned char>(in[j]) >= 0x80)) {
        ++j;
      }
      t.text = std::string(in.substr(i, j - i));  // digits, a point, a unit ("1.5ms", "4KiB", "µs")
      if (t.text.size() > kMaxLiteral) return ErrorAt(t.column, "number too long");
      i = j;
    } else if (NameStart(c)) {
      size_t j = i;
      while (j < in.size() && NameChar(in[j])) ++j;
      t.text = std::string(in.substr(i, j - i));
      if (t.text.size() > kMaxLiteral) return ErrorAt(t.column, "name too long");
      t.kind = t.text == "and"   ? Tok::kAnd
               : t.text == "or"  ? Tok::kOr
               : t.text == "not" ? Tok::kNot
               : t.text == "in"  ? Tok::kIn
                                 : Tok::kName;
      i = j;
    } else {
      static constexpr std::string_view kOps[] = {"==", "!=", "<=", ">=", "=~", "!~", "<", ">"};
      for (std::string_view op : kOps) {
        if (in.substr(i, op.size()) == op) {
          t.kind = Tok::kOp;
          t.text = std::string(op);
          break;
        }
      }
      if (t.kind != Tok::kOp) {
        if (c == '=') return ErrorAt(t.column, "'=' is not an operator; use '=='");
        if (c == '&' || c == '|' || c == '!') return ErrorAt(t.column, "use 'and', 'or', 'not'");
        if (c == '\'') return ErrorAt(t.column, "strings are written in double quotes");
        return ErrorAt(t.column, std::string("unexpected character '") + c + "'");
      }
      i += t.text.size();
    }
    out.push_back(std::move(t));
  }
}

// True when `text` is one NUMBER token of the grammar (as Lex reads one): it prints unquoted.
bool LexesAsNumber(std::string_view text) {
  return !text.empty() && text[0] >= '0' && text[0] <= '9' &&
         std::all_of(text.begin(), text.end(), [](char c) {
           return NameChar(c) || c == '%' || c == '/' || static_cast<unsigned char>(c) >= 0x80;
         });
}

Predicate::Op OpOf(std::string_view text) {
  using Op = Predicate::Op;
  if (text == "==") return Op::kEq;
  if (text == "!=") return Op::kNe;
  if (text == "<") return Op::kLt;
  if (text == "<=") return Op::kLe;
  if (text == ">") return Op::kGt;
  if (text == ">=") return Op::kGe;
  if (text == "=~") return Op::kMatch;
  return Op::kNotMatch;
}

const char* OpText(Predicate::Op op) {
  using Op = Predicate::Op;
  switch (op) {
    case Op::kEq:
      return "==";
    case Op::kNe:
      return "!=";
    case Op::kLt:
      return "<";
    case Op::kLe:
      return "<=";
    case Op::kGt:
      return ">";
    case Op::kGe:
      return ">=";
    case Op::kMatch:
      return "=~";
    case Op::kNotMatch:
      return "!~";
    case Op::kIn:
      return "in";
    case Op::kAnd:
      return "and";
    case Op::kOr:
      return "or";
    case Op::kNot:
      return "not";
    case Op::kTrue:
      return "true";
  }
  return "?";
}

// A number as typed: a bare number, a duration or a size, in base units; a decimal ("12.5"), a
// percentage ("50%") or a byte rate ("4MiB/s") for scalars. `real` (if given) gets the value
// with its fraction; `out` the value rounded to an integer.
bool ReadNumber(std::string_view text, uint64_t* out, double* real = nullptr) {
  auto give = [out, real](double v) {
    if (!(v >= 0) || v >= 18446744073709551616.0) return false;
    *out = static_cast<uint64_t>(std::llround(std::min(v, 9.2e18)));
    if (real) *real = v;
    return true;
  };
  uint64_t n = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec == std::errc() && ptr == text.data() + text.size()) {
    *out = n;
    if (real) *real = static_cast<double>(n);
    return true;
  }
  if (Result<uint64_t> d = ParseDuration(text); d.ok()) return give(static_cast<double>(*d));
  if (Result<uint64_t> s = ParseSize(text); s.ok()) return give(static_cast<double>(*s));
  std::string_view t = text;
  if (t.ends_with("/s")) {
    if (Result<uint64_t> s = ParseSize(t.substr(0, t.size() - 2)); s.ok())
      return give(static_cast<double>(*s));
  }
  if (t.ends_with("%")) t.remove_suffix(1);
  double d = 0;
  const auto [p2, e2] = std::from_chars(t.data(), t.data() + t.size(), d, std::chars_format::fixed);
  if (e2 == std::errc() && p2 == t.data() + t.size() && !t.empty() && t[0] >= '0' && t[0] <= '9') {
    if (d >= 9.2e18) return false;
    return give(d);
  }
  return false;
}

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

bool IsValueName(std::string_view name) {
  return name == "value" || name == "latency" || name == "size";
}

// Recursive descent over the tokens; depth is bounded so nesting cannot exhaust the stack.
class PredicateParser {
 public:
  using Node = Predicate::Node;
  using Op = Predicate::Op;

  explicit PredicateParser(std::vector<Token> tokens) : t_(std::move(tokens)) {}

  Result<std::shared_ptr<const Node>> Parse() {
    Result<std::shared_ptr<const Node>> root = Or(0);
    if (!root.ok()) return root;
    if (Peek().kind != Tok::kEnd) {
      return ErrorAt(Peek().column, "expected 'and', 'or' or the end, got '" + Peek().text + "'");
    }
    if (Status s = CheckValueComparisons(**root, true); !s.ok()) return s;
    return root;
  }

 private:
  const Token& Peek() const { return t_[pos_]; }
  const Token& Next() { return t_[pos_ < t_.size() - 1 ? pos_++ : pos_]; }

  Result<std::shared_ptr<const Node>> Or(size_t depth) {
    return Chain(depth, Tok::kOr, Op::kOr, [this](size_t d) { return And(d); });
  }
  Result<std::shared_ptr<const Node>> And(size_t depth) {
    return Chain(depth, Tok::kAnd, Op::kAnd, [this](size_t d) { return Unary(d); });
  }

  template <typename Sub>
  Result<std::shared_ptr<const Node>> Chain(size_t depth, Tok joiner, Op op, Sub sub) {
    Result<std::shared_ptr<const Node>> first = sub(depth);
    if (!first.ok() || Peek().kind != joiner) return first;
    auto node = std::make_shared<Node>();
    node->op = op;
    node->children.push_back(std::move(first).value());
    while (Peek().kind == joiner) {
      Next();
      Result<std::shared_ptr<const Node>> more = sub(depth);
      if (!more.ok()) return more;
      node->children.push_back(std::move(more).value());
    }
    return std::shared_ptr<const Node>(std::move(node));
  }

  Result<std::shared_ptr<const Node>> Unary(size_t depth) {
    if (depth >= kMaxPredicateDepth) {
      return ErrorAt(Peek().column,
                     "nested deeper than " + std::to_string(kMaxPredicateDepth) + " levels");
    }
    if (Peek().kind == Tok::kNot) {
      Next();
      Result<std::shared_ptr<const Node>> inner = Unary(depth + 1);
      if (!inner.ok()) return inner;
      auto node = std::make_shared<Node>();
      node->op = Op::kNot;
      node->children.push_back(std::move(inner).value());
      return std::shared_ptr<const Node>(std::move(node));
    }
    if (Peek().kind == Tok::kLParen) {
      const size_t column = Next().column;
      Result<std::shared_ptr<const Node>> inner = Or(depth + 1);
      if (!inner.ok()) return inner;
      if (Peek().kind != Tok::kRParen) {
        return ErrorAt(Peek().column,
                       "expected ')' to close the '(' at column " + std::to_string(column));
      }
      Next();
      return inner;
    }
    return Comparison();
  }

  Result<Literal> ReadLiteral(const std::string& after) {
    const Token& t = Next();
    Literal lit;
    lit.text = t.text;
    if (t.kind == Tok::kString) {
      lit.is_string = true;
      lit.numeric = ReadNumber(lit.text, &lit.number, &lit.real);
      return lit;
    }
    if (t.kind == Tok::kNumber) {
      if (!ReadNumber(lit.text, &lit.number, &lit.real)) {
        return ErrorAt(t.column,
                       "'" + t.text + "' is not a number with a unit (10ms, 1.5s, 4KiB, 50%)");
      }
      lit.numeric = true;
      return lit;
    }
    if (t.kind == Tok::kName) {
      return ErrorAt(t.column, "expected a value after " + after +
                                   "; write the string in quotes: \"" + t.text + "\"");
    }
    return ErrorAt(t.column, "expected a value after " + after);
  }

  Result<std::shared_ptr<const Node>> Comparison() {
    const Token& name = Next();
    if (name.kind != Tok::kName) {
      return ErrorAt(name.column, name.kind == Tok::kEnd
                                      ? "expected a comparison, got the end"
                                      : "expected a field name, got '" + name.text + "'");
    }
    auto node = std::make_shared<Node>();
    node->name = name.text;
    const Token& op = Next();
    if (op.kind == Tok::kIn) {
      node->op = Op::kIn;
      if (Next().kind != Tok::kLParen) return ErrorAt(op.column, "expected '(' after 'in'");
      while (true) {
        Result<Literal> lit = ReadLiteral("'in ('");
        if (!lit.ok()) return lit.status();
        node->literals.push_back(std::move(lit).value());
        if (node->literals.size() > kMaxInList) {
          return ErrorAt(op.column,
                         "more than " + std::to_string(kMaxInList) + " values in the list");
        }
        const Token& sep = Next();
        if (sep.kind == Tok::kRParen) break;
        if (sep.kind != Tok::kComma) return ErrorAt(sep.column, "expected ',' or ')' in the list");
      }
      return std::shared_ptr<const Node>(std::move(node));
    }
    if (op.kind != Tok::kOp) {
      return ErrorAt(op.column,
                     "expected an operator (== != < <= > >= =~ !~ in) after '" + name.text + "'");
    }
    node->op = OpOf(op.text);
    Result<Literal> lit = ReadLiteral("\"" + op.text + "\"");
    if (!lit.ok()) return lit.status();
    node->literals.push_back(std::move(lit).value());
    const Literal& l = node->literals.back();
    if (node->op == Op::kMatch || node->op == Op::kNotMatch) {
      if (!l.is_string)
        return ErrorAt(op.column, "a regular expression is written as a string: \"web.*\"");
      if (l.text.size() > kMaxRegex) {
        return ErrorAt(op.column,
                       "regular expression longer than " + std::to_string(kMaxRegex) + " bytes");
      }
      // RE2 matches in time linear in the value, whatever the pattern: no pattern can make a
      // query backtrack for minutes ("(a+)+$" over "aaaa...a!"). What RE2 refuses (a
      // back-reference, a lookahead, a count past 1000, a program past max_mem) is an error here.
      re2::RE2::Options options;
      options.set_log_errors(false);
      options.set_max_mem(kMaxRegexMemory);
      auto regex = std::make_shared<const re2::RE2>(l.text, options);
      if (!regex->ok()) {
        return ErrorAt(op.column + 3, "bad regular expression \"" + l.text + "\": " +
                                          regex->error() + " (RE2 syntax, see docs/predicates.md)");
      }
      node->regex = std::move(regex);
    }
    if (IsValueName(node->name) && (!l.numeric || (l.is_string && !LexesAsNumber(l.text)))) {
      return ErrorAt(op.column, "'" + node->name +
                                    "' is the metric's value: compare it with a number, e.g. 10ms");
    }
    // On the value name a quoted number is that number: `value <= "2"` is `value <= 2`, and
    // prints so, as its JSON form does (found by fuzz/predicate_fuzz: the text printed "2"
    // quoted, the JSON form unquoted).
    if (IsValueName(node->name)) node->literals.back().is_string = false;
    node->name.shrink_to_fit();
    value_columns_.emplace_back(node.get(), name.column);
    return std::shared_ptr<const Node>(std::move(node));
  }

  // A comparison on the value selects buckets, so it must hold on every path: only under "and".
  Status CheckValueComparisons(const Node& n, bool conjunctive) const {
    if (!n.children.empty()) {
      for (const auto& c : n.children) {
        if (Status s = CheckValueComparisons(*c, conjunctive && n.op == Op::kAnd); !s.ok())
          return s;
      }
      return Status::Ok();
    }
    if (!IsValueName(n.name)) return Status::Ok();
    size_t column = 1;
    for (const auto& [node, col] : value_columns_) {
      if (node == &n) column = col;
    }
    if (!conjunctive) {
      return ErrorAt(column, "a comparison on '" + n.name +
                                 "' selects buckets and may only be joined with 'and'");
    }
    if (n.op != Op::kLt && n.op != Op::kLe && n.op != Op::kGt && n.op != Op::kGe &&
        n.op != Op::kEq) {
      return ErrorAt(column, "'" + n.name + "' takes < <= > >= or ==");
    }
    return Status::Ok();
  }

  std::vector<Token> t_;
  size_t pos_ = 0;
  std::vector<std::pair<const Node*, size_t>> value_columns_;
};

Result<Predicate> Predicate::Parse(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  const bool json = first != std::string_view::npos && text[first] == '{';
  if (!json && text.size() > kMaxPredicateText) {
    return Status::InvalidArgument("predicate longer than " + std::to_string(kMaxPredicateText) +
                                   " bytes");
  }
  Result<std::string> converted = json ? PredicateJsonToText(text) : std::string();
  if (!converted.ok()) return converted.status();
  Result<Predicate> p = ParseText(json ? std::string_view(*converted) : text);
  // What is accepted is accepted again as its canonical text (ToString), which can be longer
  // than what was typed: every odd field name quoted, every string escaped, a JSON predicate of
  // up to 16 KiB written as text. Found by the predicate fuzz target.
  if (p.ok()) {
    const size_t written = p->ToString().size();
    if (written > kMaxPredicateText) {
      return Status::InvalidArgument("predicate longer than " + std::to_string(kMaxPredicateText) +
                                     " bytes once written out (" + std::to_string(written) +
                                     " bytes): use fewer or shorter conditions");
    }
  }
  return p;
}

Result<Predicate> Predicate::ParseText(std::string_view text) {
  Result<std::vector<Token>> tokens = Lex(text);
  if (!tokens.ok()) return tokens.status();
  Predicate p;
  if (tokens->size() == 1) return p;  // only the end: always true
  PredicateParser parser(std::move(tokens).value());
  Result<std::shared_ptr<const Node>> root = parser.Parse();
  if (!root.ok()) return root.status();
  p.root_ = std::move(root).value();
  return p;
}

namespace {

bool Compare(Predicate::Op op, const std::string& value, const Literal& lit) {
  using Op = Predicate::Op;
  if (op == Op::kEq) return value == lit.text;
  if (op == Op::kNe) return value != lit.text;
  uint64_t v = 0;
  if (!lit.numeric || !ReadNumber(value, &v)) return false;  // ordering needs numbers on both sides
  switch (op) {
    case Op::kLt:
      return v < lit.number;
    case Op::kLe:
      return v <= lit.number;
    case Op::kGt:
      return v > lit.number;
    case Op::kGe:
      return v >= lit.number;
    default:
      return false;
  }
}

bool Eval(const Predicate::Node& n, const FieldLookup& fields) {
  using Op = Predicate::Op;
  switch (n.op) {
    case Op::kTrue:
      return true;
    case Op::kAnd:
      return std::all_of(n.children.begin(), n.children.end(),
                         [&fields](const auto& c) { return Eval(*c, fields); });
    case Op::kOr:
      return std::any_of(n.children.begin(), n.children.end(),
                         [&fields](const auto& c) { return Eval(*c, fields); });
    case Op::kNot:
      return !Eval(*n.children[0], fields);
    default:
      break;
  }
  if (IsValueName(n.name)) return true;  // selects buckets, not series
  const std::string* value = fields.Find(n.name);
  switch (n.op) {
    case Op::kIn:
      return value && std::any_of(n.literals.begin(), n.literals.end(),
                                  [value](const Literal& l) { return *value == l.text; });
    case Op::kMatch:
      return value && re2::RE2::FullMatch(*value, *n.regex);
    case Op::kNotMatch:
      return !value || !re2::RE2::FullMatch(*value, *n.regex);
    case Op::kNe:
      return !value || Compare(n.op, *value, n.literals[0]);
    default:
      return value && Compare(n.op, *value, n.literals[0]);
  }
}

void Range(const Predicate::Node& n, uint64_t* low, uint64_t* high) {
  using Op = Predicate::Op;
  for (const auto& c : n.children) Range(*c, low, high);
  if (!n.children.empty() || !IsValueName(n.name)) return;
  const Literal& lit = n.literals[0];
  const uint64_t v = lit.number;
  // A fraction ("latency > 12.5", in ns) bounds the integers on its side of it.
  if (lit.real != std::floor(lit.real) && lit.real < 9.0e18) {
    const uint64_t below = static_cast<uint64_t>(std::floor(lit.real));  // the integer under it
    switch (n.op) {
      case Op::kGt:
      case Op::kGe:
        *low = std::max(*low, below + 1);
        break;
      case Op::kLt:
      case Op::kLe:
        *high = std::min(*high, below);
        break;
      case Op::kEq:
        *low = 1;
        *high = 0;
        break;  // no integer equals it
      default:
        break;
    }
    return;
  }
  switch (n.op) {
    case Op::kGt:
      *low = std::max(*low, v == UINT64_MAX ? v : v + 1);
      if (v == UINT64_MAX) *high = 0;
      break;
    case Op::kGe:
      *low = std::max(*low, v);
      break;
    case Op::kLt:
      if (v == 0) {
        *low = 1;
        *high = 0;
      } else {
        *high = std::min(*high, v - 1);
      }
      break;
    case Op::kLe:
      *high = std::min(*high, v);
      break;
    case Op::kEq:
      *low = std::max(*low, v);
      *high = std::min(*high, v);
      break;
    default:
      break;
  }
}

void Print(const Predicate::Node& n, std::string* out) {
  using Op = Predicate::Op;
  if (n.op == Op::kAnd || n.op == Op::kOr) {
    for (size_t i = 0; i < n.children.size(); ++i) {
      if (i > 0) *out += std::string(" ") + OpText(n.op) + " ";
      const bool group = !n.children[i]->children.empty() && n.children[i]->op != Op::kNot;
      if (group) *out += "(";
      Print(*n.children[i], out);
      if (group) *out += ")";
    }
    return;
  }
  if (n.op == Op::kNot) {
    *out += "not (";
    Print(*n.children[0], out);
    *out += ")";
    return;
  }
  *out += n.name + " " + OpText(n.op) + " ";
  if (n.op == Op::kIn) *out += "(";
  for (size_t i = 0; i < n.literals.size(); ++i) {
    if (i > 0) *out += ", ";
    *out += n.literals[i].is_string ? Quote(n.literals[i].text) : n.literals[i].text;
  }
  if (n.op == Op::kIn) *out += ")";
}

void CollectNames(const Predicate::Node& n, std::vector<std::string>* out) {
  for (const auto& c : n.children) CollectNames(*c, out);
  if (n.children.empty() && !n.name.empty() && !IsValueName(n.name) &&
      std::find(out->begin(), out->end(), n.name) == out->end()) {
    out->push_back(n.name);
  }
}

}  // namespace

bool Predicate::Matches(const FieldLookup& fields) const { return !root_ || Eval(*root_, fields); }

namespace {

bool ValueHolds(const Predicate::Node& n, double v) {
  using Op = Predicate::Op;
  for (const auto& c : n.children) {
    if (!ValueHolds(*c, v)) return false;
  }
  if (!n.children.empty() || !IsValueName(n.name)) return true;
  const double x = n.literals[0].real;
  switch (n.op) {
    case Op::kGt:
      return v > x;
    case Op::kGe:
      return v >= x;
    case Op::kLt:
      return v < x;
    case Op::kLe:
      return v <= x;
    case Op::kEq:
      return v == x;
    default:
      return true;
  }
}

}  // namespace

bool Predicate::ValueMatches(double value) const { return !root_ || ValueHolds(*root_, value); }

std::pair<uint64_t, uint64_t> Predicate::ValueRange() const {
  uint64_t low = 0, high = std::numeric_limits<uint64_t>::max();
  if (root_) Range(*root_, &low, &high);
  return {low, high};
}

namespace {

void CollectValueLiterals(const Predicate::Node& n, std::vector<std::string>* out) {
  for (const auto& c : n.children) CollectValueLiterals(*c, out);
  if (n.children.empty() && IsValueName(n.name)) out->push_back(n.literals[0].text);
}

}  // namespace

std::vector<std::string> Predicate::ValueLiterals() const {
  std::vector<std::string> out;
  if (root_) CollectValueLiterals(*root_, &out);
  return out;
}

std::vector<std::string> Predicate::Names() const {
  std::vector<std::string> names;
  if (root_) CollectNames(*root_, &names);
  return names;
}

namespace {

// True when `l` is a bare number written as JSON writes it: digits, no leading zero. Only then
// is it a JSON number; "06" is not, since `host == 06` compares the text "06" and `host == 6`
// the text "6" (found by fuzz/predicate_fuzz: 06 became 6 in the JSON form).
bool IsJsonInteger(const Literal& l) { return l.numeric && std::to_string(l.number) == l.text; }

nlohmann::json LiteralJson(const Literal& l, bool value_name) {
  if (l.is_string) return l.text;
  if (value_name) return l.text;  // "10ms": on the value name a string is a number with a unit
  if (IsJsonInteger(l)) return l.number;
  return nlohmann::json{{"number", l.text}};
}

nlohmann::json NodeJson(const Predicate::Node& n) {
  using Op = Predicate::Op;
  if (n.op == Op::kAnd || n.op == Op::kOr) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& c : n.children) list.push_back(NodeJson(*c));
    return nlohmann::json{{n.op == Op::kAnd ? "and" : "or", std::move(list)}};
  }
  if (n.op == Op::kNot) return nlohmann::json{{"not", NodeJson(*n.children[0])}};
  const bool value_name = IsValueName(n.name);
  nlohmann::json value;
  if (n.op == Op::kIn) {
    value = nlohmann::json::array();
    for (const Literal& l : n.literals) value.push_back(LiteralJson(l, value_name));
  } else {
    value = LiteralJson(n.literals[0], value_name);
  }
  nlohmann::json out = nlohmann::json::object();
  out["field"] = n.name;
  out["op"] = OpText(n.op);
  out["value"] = std::move(value);
  return out;
}

}  // namespace

std::string Predicate::ToJson() const {
  if (!root_) return "";
  // A literal that is not UTF-8 has no JSON form: its bad bytes become U+FFFD instead of
  // nlohmann throwing type_error 316 (found by fuzz/predicate_fuzz).
  return NodeJson(*root_).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string Predicate::ToString() const {
  std::string out;
  if (root_) Print(*root_, &out);
  return out;
}

}  // namespace trailmap
