#include "query/run/predicate_tree.h"

#include <gtest/gtest.h>

#include "core/predicate.h"

namespace trailmap {
namespace {

// A predicate's canonical text: what the tree means, whichever form it travels in.
std::string Meaning(const PredicateTree& tree) { return Predicate::Parse(tree.Json())->ToString(); }

TEST(PredicateTree, JoinsTheUsersPredicateWithoutChangingWhatEitherSideMeans) {
  // Pasted as `a or b and overflow == "true"`, "and" would bind to b alone.
  const PredicateTree user = PredicateTree::Parse("op == \"read\" or op == \"write\"").value();
  const PredicateTree joined =
      PredicateTree::And(user, PredicateTree::FieldEquals("overflow", "true"));
  EXPECT_EQ(joined.Json(), R"({"and":[{"or":[{"field":"op","op":"==","value":"read"},)"
                           R"({"field":"op","op":"==","value":"write"}]},)"
                           R"({"field":"overflow","op":"==","value":"true"}]})");
  EXPECT_EQ(Meaning(joined), "(op == \"read\" or op == \"write\") and overflow == \"true\"");
  // The JSON form of the user's predicate joins the same way.
  const PredicateTree json =
      PredicateTree::Parse(R"({"or": [{"field": "op", "op": "==", "value": "read"},
                                      {"field": "op", "op": "==", "value": "write"}]})")
          .value();
  EXPECT_EQ(PredicateTree::And(json, PredicateTree::FieldEquals("overflow", "true")).Json(),
            joined.Json());
}

TEST(PredicateTree, AnAlwaysTrueSideDropsOut) {
  const PredicateTree none = PredicateTree::Parse("  ").value();
  EXPECT_TRUE(none.always_true());
  EXPECT_EQ(none.Json(), "");
  const PredicateTree overflow = PredicateTree::FieldEquals("overflow", "true");
  EXPECT_EQ(PredicateTree::And(none, overflow).Json(), overflow.Json());
  EXPECT_EQ(PredicateTree::And(overflow, PredicateTree()).Json(), overflow.Json());
  EXPECT_EQ(PredicateTree::Not(none).status().code(), Status::Code::kInvalidArgument);
}

TEST(PredicateTree, ValuesStayValuesWhateverTheyHold) {
  // A host name with a quote, a backslash or predicate words is one value, not predicate text.
  const PredicateTree hosts =
      PredicateTree::FieldIn("host", {"web-1", "a\"b", "c\\d", "x\") or (host =~ \".*"});
  const PredicateTree rest = PredicateTree::Not(hosts).value();
  EXPECT_EQ(Meaning(rest), R"(not (host in ("web-1", "a\"b", "c\\d", "x\") or (host =~ \".*")))");
  EXPECT_EQ(Predicate::Parse(rest.Json())->Names(), std::vector<std::string>{"host"});
}

TEST(PredicateTree, AValueBandIsTwoComparisonsOnTheValue) {
  const PredicateTree band = PredicateTree::ValueBetween("50ms", "200ms").value();
  const Predicate p = Predicate::Parse(band.Json()).value();
  EXPECT_EQ(p.ValueRange(), std::make_pair(uint64_t{50'000'000}, uint64_t{200'000'000}));
  // What is not a number with a unit is refused, not pasted into the predicate.
  EXPECT_FALSE(PredicateTree::ValueBetween("50ms or host", "1s").ok());
  EXPECT_FALSE(PredicateTree::ValueBetween("", "1s").ok());
  // A value test cannot be negated (it selects buckets): refused as the parser refuses it.
  EXPECT_EQ(PredicateTree::Not(band).status().code(), Status::Code::kInvalidArgument);
  EXPECT_FALSE(Predicate::Parse("not (latency > 5ms)").ok());
}

TEST(PredicateTree, TheUsersMistakeIsTheParsersMessage) {
  EXPECT_EQ(PredicateTree::Parse("op ==").status().message(),
            Predicate::Parse("op ==").status().message());
}

}  // namespace
}  // namespace trailmap
