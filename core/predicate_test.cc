#include "core/predicate.h"

#include <gtest/gtest.h>

#include <map>

namespace trailmap {
namespace {

class Fields : public FieldLookup {
 public:
  using Map = std::map<std::string, std::string>;
  Fields(std::initializer_list<Map::value_type> values) : values_(values) {}
  const std::string* Find(std::string_view name) const override {
    auto it = values_.find(std::string(name));
    return it == values_.end() ? nullptr : &it->second;
  }

 private:
  std::map<std::string, std::string> values_;
};

Predicate Must(std::string_view text) {
  Result<Predicate> p = Predicate::Parse(text);
  EXPECT_TRUE(p.ok()) << text << ": " << p.status().ToString();
  return p.ok() ? *p : Predicate();
}

TEST(Predicate, TheDesignExample) {
  const Predicate p =
      Must(R"(host =~ "web.*" and op == "read" and not (disk in ("sdb", "sdc")) and latency > 10ms)");
  EXPECT_TRUE(p.Matches(Fields{{"host", "web-1"}, {"op", "read"}, {"disk", "sda"}}));
  EXPECT_FALSE(p.Matches(Fields{{"host", "web-1"}, {"op", "read"}, {"disk", "sdb"}}));
  EXPECT_FALSE(p.Matches(Fields{{"host", "db-1"}, {"op", "read"}, {"disk", "sda"}}));
  EXPECT_FALSE(p.Matches(Fields{{"host", "web-1"}, {"op", "write"}, {"disk", "sda"}}));
  EXPECT_EQ(p.ValueRange(), (std::pair<uint64_t, uint64_t>{10'000'001, UINT64_MAX}));
  EXPECT_EQ(p.Names(), (std::vector<std::string>{"host", "op", "disk"}));
  EXPECT_EQ(p.ToString(),
            R"(host =~ "web.*" and op == "read" and not (disk in ("sdb", "sdc")) and latency > 10ms)");
  // The canonical text parses back to the same predicate.
  EXPECT_EQ(Must(p.ToString()).ToString(), p.ToString());
}

TEST(Predicate, PrecedenceAndGrouping) {
  // "and" binds tighter than "or".
  const Predicate p = Must(R"(a == "1" or b == "2" and c == "3")");
  EXPECT_TRUE(p.Matches(Fields{{"a", "1"}}));
  EXPECT_FALSE(p.Matches(Fields{{"b", "2"}}));
  EXPECT_TRUE(p.Matches(Fields{{"b", "2"}, {"c", "3"}}));
  EXPECT_EQ(p.ToString(), R"(a == "1" or (b == "2" and c == "3"))");
  const Predicate q = Must(R"((a == "1" or b == "2") and c == "3")");
  EXPECT_FALSE(q.Matches(Fields{{"a", "1"}}));
  EXPECT_TRUE(q.Matches(Fields{{"a", "1"}, {"c", "3"}}));
}

TEST(Predicate, MissingFieldsAndNumbers) {
  EXPECT_FALSE(Must(R"(zone == "b")").Matches(Fields{}));
  EXPECT_TRUE(Must(R"(zone != "b")").Matches(Fields{}));
  EXPECT_TRUE(Must(R"(zone !~ "b.*")").Matches(Fields{}));
  EXPECT_TRUE(Must("pid > 100").Matches(Fields{{"pid", "4242"}}));
  EXPECT_FALSE(Must("pid > 100").Matches(Fields{{"pid", "42"}}));
  EXPECT_FALSE(Must("pid > 100").Matches(Fields{{"pid", "nginx"}}));  // not a number: false
  EXPECT_TRUE(Must("").always_true());
  EXPECT_TRUE(Must("  ").Matches(Fields{}));
  EXPECT_EQ(Must("size >= 4KiB and size < 1MiB").ValueRange(),
            (std::pair<uint64_t, uint64_t>{4096, 1048575}));
  EXPECT_EQ(Must("latency == 1.5s").ValueRange(),
            (std::pair<uint64_t, uint64_t>{1'500'000'000, 1'500'000'000}));
}

// Declarative: input, then the column and words of the error.
TEST(Predicate, ErrorsPointAtTheColumn) {
  struct Case {
    std::string text;
    std::string says;
  };
  const std::vector<Case> cases = {
      {R"(op = "read")", "column 4: '=' is not an operator; use '=='"},
      {R"(op == read)", "column 7: expected a value after \"==\"; write the string in quotes: \"read\""},
      {R"(op == "read)", "column 7: string is not closed"},
      {R"(op == "read" && a == "b")", "column 14: use 'and', 'or', 'not'"},
      {R"((op == "read")", "column 14: expected ')' to close the '(' at column 1"},
      {R"(op == "read" a == "b")", "column 14: expected 'and', 'or' or the end, got 'a'"},
      {R"(op ==)", "column 6: expected a value after \"==\""},
      {R"(op)", "column 3: expected an operator"},
      {R"(host =~ "web[")", "column 9: bad regular expression"},
      {R"(host =~ web)", "column 9: expected a value"},
      {R"(latency > 10parsecs)", "column 11: '10parsecs' is not a number with a unit"},
      {R"(latency > "slow")", "column 9: 'latency' is the metric's value"},
      {R"(op == 'read')", "column 7: strings are written in double quotes"},
      {R"(op == "a" or latency > 10ms)", "column 14: a comparison on 'latency' selects buckets"},
      {R"(not latency > 10ms)", "column 5: a comparison on 'latency'"},
      {R"(latency != 10ms)", "column 1: 'latency' takes < <= > >= or =="},
      {R"(disk in "sda")", "column 6: expected '(' after 'in'"},
      {R"(disk in ("sda" "sdb"))", "column 16: expected ',' or ')'"},
  };
  for (const Case& c : cases) {
    Result<Predicate> p = Predicate::Parse(c.text);
    ASSERT_FALSE(p.ok()) << c.text;
    EXPECT_NE(p.status().message().find(c.says), std::string::npos)
        << c.text << "\n  said: " << p.status().message() << "\n  want: " << c.says;
  }
}

TEST(Predicate, HostileInputIsRefusedCheaply) {
  // Deep nesting: refused at the limit, not a stack overflow.
  std::string deep(3000, '(');
  deep += R"(a == "b")" + std::string(3000, ')');
  EXPECT_NE(Predicate::Parse(deep).status().message().find("longer than"), std::string::npos);
  std::string nested(40, '(');
  nested += R"(a == "b")" + std::string(40, ')');
  EXPECT_NE(Predicate::Parse(nested).status().message().find("nested deeper than 32"), std::string::npos);
  std::string nots;
  for (int i = 0; i < 100; ++i) nots += "not ";
  EXPECT_FALSE(Predicate::Parse(nots + R"(a == "b")").ok());
  // Huge literals.
  EXPECT_NE(Predicate::Parse("a == \"" + std::string(1000, 'x') + "\"").status().message().find("string longer than"),
            std::string::npos);
  EXPECT_FALSE(Predicate::Parse("latency > " + std::string(300, '9')).ok());
  EXPECT_FALSE(Predicate::Parse("latency > 99999999999999999999999ms").ok());
  // A long regex.
  EXPECT_FALSE(Predicate::Parse("host =~ \"" + std::string(300, 'a') + "\"").ok());
  // Bytes that are not the language at all.
  EXPECT_FALSE(Predicate::Parse(std::string("\x00\xff\x01", 3)).ok());
  EXPECT_FALSE(Predicate::Parse("a == \"b\" \\").ok());
}

}  // namespace
}  // namespace trailmap
