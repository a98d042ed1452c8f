// The options of a view, written once: a table per request (HeatmapParameters() beside
// HeatmapRequest, ...) whose rows say each option's name, the request member it fills, its range
// or choices, its help and an example. Both front ends walk the same table: the CLI registers a
// CLI11 option per row (cli/cli_options.h), trailmap-query reads the URL parameter of the same
// name (query/http/params.h), and the view runner checks the request against it before any shard
// is asked (OptionTable::Check), so the three agree on every value and every message.
//
// Adding an option to a view is one edit: a member in its request struct with the row beside it.
//
// Words (a time, a duration, a predicate, a value with a unit) are kText: the row carries them as
// typed and the view parses them (query/run/words.h), because their meaning may need the metric's
// unit or the clock. Numbers, flags and fixed sets of words are parsed and checked here.
//
// Messages name the option as the CLI writes it: "--rows 0: give a whole number from 1 to 2000".
// Value types: a table is built once (a function-local static) and only read after.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/status.h"

namespace trailmap {

enum class OptionKind : uint8_t {
  kText,    // words the view parses itself: "-10m", "20ms", "host == \"a\"", "p50,p99"
  kChoice,  // one of `choices`
  kFlag,    // on or off: --name (and --negation) on the CLI; name=true|false|1|0|yes|no|"" (on)
  kWhole,   // a whole number in [whole_low, whole_high]
  kNumber,  // a decimal number in [low, high]
};

// kCli: what only the CLI has (which shards to ask, files): the API's node has its own.
enum class OptionFront : uint8_t { kBoth, kCli };

struct OptionSpec {
  std::string name;  // "rows": --rows on the CLI, rows= in the API
  OptionKind kind = OptionKind::kText;
  std::string help;
  std::string example;               // a value both front ends accept ("100"); "" for a flag
  char short_name = 0;               // 'm' for -m
  std::vector<std::string> choices;  // kChoice
  bool empty_is_default = false;     // kChoice: "" (not given) passes, the view picks
  uint64_t whole_low = 0;            // kWhole
  uint64_t whole_high = std::numeric_limits<uint64_t>::max();
  bool zero_is_automatic = false;  // kWhole: 0 means "choose for me" and passes
  double low = -std::numeric_limits<double>::infinity();  // kNumber
  double high = std::numeric_limits<double>::infinity();
  bool above_low = false;              // kNumber: `low` itself is refused ("a number above 0")
  bool negative_is_automatic = false;  // kNumber: a negative value set by code means "choose"
  std::string negation;                // kFlag: the name that turns it off ("no-panel")
  std::string group;                   // the CLI's --help section ("" = Options)
  bool required = false;
  OptionFront front = OptionFront::kBoth;

  OptionSpec& Short(char c) {
    short_name = c;
    return *this;
  }
  OptionSpec& Required() {
    required = true;
    return *this;
  }
  OptionSpec& CliOnly() {
    front = OptionFront::kCli;
    return *this;
  }
  OptionSpec& EmptyIsDefault() {
    empty_is_default = true;
    return *this;
  }
  OptionSpec& ZeroIsAutomatic() {
    zero_is_automatic = true;
    return *this;
  }
  OptionSpec& AboveLow() {
    above_low = true;
    return *this;
  }
  OptionSpec& NegativeIsAutomatic() {
    negative_is_automatic = true;
    return *this;
  }
  OptionSpec& Group(std::string name) {
    group = std::move(name);
    return *this;
  }
  OptionSpec& Help(std::string text) {
    help = std::move(text);
    return *this;
  }
  OptionSpec& Optional() {
    required = false;
    return *this;
  }
  OptionSpec& Negation(std::string name) {
    negation = std::move(name);
    return *this;
  }
};

// Where a row's value lives in a request (size_t is uint64_t on the platforms trailmap builds on).
using OptionTarget = std::variant<std::string*, bool*, uint32_t*, uint64_t*, int*, double*>;

// `text` (what the user typed, once) parsed and checked by `spec`, then stored at `target`; on
// error InvalidArgument naming the option and nothing is stored. Both front ends call this.
Status ReadOption(const OptionSpec& spec, std::string_view text, OptionTarget target);
// The value at `target` checked against `spec`'s range or choices (kText and kFlag always pass):
// what a request filled in by code (not typed) gets. Same messages as ReadOption.
Status CheckOption(const OptionSpec& spec, OptionTarget target);
// The value at `target` as a user would type it ("50", "rank", "5s", "0", "false").
std::string ValueText(OptionTarget target);
// ValueText, but "" for 0 and false, which are never shown as defaults.
std::string OptionText(OptionTarget target);

template <typename Request>
struct OptionRow {
  OptionSpec spec;
  std::function<OptionTarget(Request&)> member;
};

template <typename Request>
class OptionTable {
 public:
  // A row for `member`; the returned spec may be refined at once (.Short('m').Required()).
  template <typename T>
  OptionSpec& Add(OptionKind kind, std::string name, T Request::*member, std::string help,
                  std::string example) {
    rows_.push_back({OptionSpec{.name = std::move(name),
                                .kind = kind,
                                .help = std::move(help),
                                .example = std::move(example)},
                     [member](Request& r) -> OptionTarget { return &(r.*member); }});
    return rows_.back().spec;
  }
  template <typename T>
  OptionSpec& Text(std::string name, T Request::*member, std::string help, std::string example) {
    return Add(OptionKind::kText, std::move(name), member, std::move(help), std::move(example));
  }
  OptionSpec& Choice(std::string name, std::string Request::*member,
                     std::vector<std::string> choices, std::string help) {
    std::string example = choices.back();
    OptionSpec& spec = Add(OptionKind::kChoice, std::move(name), member, std::move(help), example);
    spec.choices = std::move(choices);
    return spec;
  }
  OptionSpec& Flag(std::string name, bool Request::*member, std::string help) {
    return Add(OptionKind::kFlag, std::move(name), member, std::move(help), "");
  }
  template <typename T>
  OptionSpec& Whole(std::string name, T Request::*member, uint64_t low, uint64_t high,
                    std::string help, std::string example) {
    OptionSpec& spec =
        Add(OptionKind::kWhole, std::move(name), member, std::move(help), std::move(example));
    spec.whole_low = low;
    spec.whole_high = high;
    return spec;
  }
  OptionSpec& Number(std::string name, double Request::*member, double low, double high,
                     std::string help, std::string example) {
    OptionSpec& spec =
        Add(OptionKind::kNumber, std::move(name), member, std::move(help), std::move(example));
    spec.low = low;
    spec.high = high;
    return spec;
  }

  // Every row of `other`, or one row, as they are.
  void Append(const OptionTable<Request>& other) {
    rows_.insert(rows_.end(), other.rows().begin(), other.rows().end());
  }
  void Append(const OptionRow<Request>& row) { rows_.push_back(row); }

  // Every row of `part`, reached through `member` (a ViewRequest inside a HeatmapRequest).
  template <typename Part>
  void Include(const OptionTable<Part>& part, Part Request::*member) {
    for (const OptionRow<Part>& row : part.rows()) {
      rows_.push_back({row.spec, [inner = row.member, member](Request& r) -> OptionTarget {
                         return inner(r.*member);
                       }});
    }
  }

  // The row named `name`, to refine an included row (its help in this view); it must exist.
  OptionSpec& Find(std::string_view name) {
    for (OptionRow<Request>& row : rows_) {
      if (row.spec.name == name) return row.spec;
    }
    std::abort();  // a table names an option it does not have: a bug in the table
  }

  const std::vector<OptionRow<Request>>& rows() const { return rows_; }

  // Every row's CheckOption, in order: the first refusal, else Ok.
  Status Check(const Request& request) const {
    // The members are only read; OptionTarget holds non-const pointers so one type serves both.
    Request& r = const_cast<Request&>(request);
    for (const OptionRow<Request>& row : rows_) {
      if (Status s = CheckOption(row.spec, row.member(r)); !s.ok()) return s;
    }
    return Status::Ok();
  }

 private:
  std::vector<OptionRow<Request>> rows_;
};

struct ViewRequest;
// The options every histogram view shares (metric, range, by, hosts, where, the shards to ask,
// timeout and budgets), for HeatmapParameters() and the rest to Include.
const OptionTable<ViewRequest>& ViewRequestParameters();
// The shard options alone (aggregators, config, cluster, timeout, budgets): views of no metric.
const OptionTable<ViewRequest>& ShardParameters();

}  // namespace trailmap
