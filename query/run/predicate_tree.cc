#include "query/run/predicate_tree.h"

#include <nlohmann/json.hpp>

#include "core/predicate.h"

namespace trailmap {
namespace {

using nlohmann::json;

// Compact; a byte that is not UTF-8 (refused before a view gets here) would become U+FFFD.
std::string Dump(const json& tree) {
  return tree.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

Result<PredicateTree> PredicateTree::Parse(const std::string& where) {
  Result<Predicate> p = Predicate::Parse(where);
  if (!p.ok()) return p.status();
  return PredicateTree(p->ToJson());
}

PredicateTree PredicateTree::FieldEquals(const std::string& name, const std::string& value) {
  return PredicateTree(Dump({{"field", name}, {"op", "=="}, {"value", value}}));
}

PredicateTree PredicateTree::FieldIn(const std::string& name,
                                     const std::vector<std::string>& values) {
  return PredicateTree(Dump({{"field", name}, {"op", "in"}, {"value", values}}));
}

Result<PredicateTree> PredicateTree::ValueBetween(const std::string& low, const std::string& high) {
  const std::string text =
      Dump({{"and", json::array({{{"field", "value"}, {"op", ">="}, {"value", low}},
                                 {{"field", "value"}, {"op", "<="}, {"value", high}}})}});
  if (Result<Predicate> p = Predicate::Parse(text); !p.ok()) return p.status();
  return PredicateTree(text);
}

PredicateTree PredicateTree::And(const PredicateTree& a, const PredicateTree& b) {
  if (a.always_true()) return b;
  if (b.always_true()) return a;
  return PredicateTree(Dump({{"and", json::array({json::parse(a.json_), json::parse(b.json_)})}}));
}

Result<PredicateTree> PredicateTree::Not(const PredicateTree& p) {
  if (p.always_true()) {
    return Status::InvalidArgument("the negation of a predicate every event passes: none would");
  }
  Result<Predicate> parsed = Predicate::Parse(p.json_);
  if (!parsed.ok()) return parsed.status();
  if (!parsed->ValueLiterals().empty()) {
    return Status::InvalidArgument(
        "a comparison on the value selects buckets and may only be joined with \"and\": it "
        "cannot be negated");
  }
  return PredicateTree(Dump({{"not", json::parse(p.json_)}}));
}

}  // namespace trailmap
