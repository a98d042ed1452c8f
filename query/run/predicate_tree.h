// Predicates a view builds from the user's --where and conditions of its own (the overflow
// series, a region's value band, the outlier hosts), joined as trees in the JSON form
// (docs/predicates.md), never by pasting text: pasted text re-read by the parser can change
// meaning (an "or" in the user's side binds looser than the "and" that joins it; a quote in a host
// name ends its string), while a tree keeps each side whole and each value quoted by the JSON
// writer. What travels to the aggregators is Json(), which core/predicate.h reads back into the
// same tree.
//
// Value type; pure functions.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"

namespace trailmap {

class PredicateTree {
 public:
  // Always true.
  PredicateTree() = default;
  // The user's predicate, text or JSON form; its error is Predicate::Parse's.
  static Result<PredicateTree> Parse(const std::string& where);
  // NAME == "VALUE" on a field (or host, or a host label).
  static PredicateTree FieldEquals(const std::string& name, const std::string& value);
  // NAME in ("A", "B", ...).
  static PredicateTree FieldIn(const std::string& name, const std::vector<std::string>& values);
  // value >= LOW and value <= HIGH, each a number with a unit as typed ("50ms").
  static Result<PredicateTree> ValueBetween(const std::string& low, const std::string& high);

  // Both pass; an always-true side drops out.
  static PredicateTree And(const PredicateTree& a, const PredicateTree& b);
  // `p` does not pass. InvalidArgument when `p` is always true (nothing would pass) or tests the
  // metric's value (a value test selects buckets: core/predicate.h refuses it under "not").
  static Result<PredicateTree> Not(const PredicateTree& p);

  bool always_true() const { return json_.empty(); }
  // The tree in the JSON form, compact; "" when always true (what --where "" means).
  const std::string& Json() const { return json_; }

 private:
  explicit PredicateTree(std::string json) : json_(std::move(json)) {}
  std::string json_;
};

}  // namespace trailmap
