// The CLI and the HTTP API read a view's options from one table (query/run/options.h): here one
// list of cases (view, option, value, and "" for accepted or the exact refusal) runs through
// both, the CLI's parser (the command's CLI11 options, then the view's check) and the API's
// reader (URL parameters, then the same check), and each must give the same answer.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cli/catalog_command.h"
#include "cli/columns_command.h"
#include "cli/flame_command.h"
#include "cli/heatmap_command.h"
#include "cli/line_command.h"
#include "cli/outliers_command.h"
#include "cli/stats_command.h"
#include "cli/subsecond_command.h"
#include "cli/trails_command.h"
#include "query/http/params.h"

namespace trailmap {
namespace {

// "" when accepted, else the message a user reads.
std::string Outcome(const Status& s) { return s.ok() ? "" : s.message(); }

std::string UrlEncode(const std::string& text) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

// One view as both front ends read it: `cli` parses argv after the command name, `api` the
// parameters of its path; both then check the request with the view's table.
struct Front {
  std::function<std::string(std::vector<std::string>)> cli;
  std::function<std::string(const std::string& query)> api;
  std::function<std::vector<OptionSpec>()> rows;  // every row both front ends have
  bool needs_metric = true;
};

template <typename Flags, typename Request>
Front MakeFront(const std::string& command, CLI::App* (*add)(CLI::App*, Flags*),
                const OptionTable<Request>& (*table)(), const std::string& path,
                bool needs_metric = true) {
  Front f;
  f.cli = [command, add, table](std::vector<std::string> args) -> std::string {
    CLI::App app{"trailmap"};
    Flags flags;
    add(&app, &flags);
    args.insert(args.begin(), command);
    std::reverse(args.begin(), args.end());  // CLI11 takes them last first
    try {
      app.parse(args);
    } catch (const CLI::ParseError& e) {
      return e.what();
    }
    return Outcome(table().Check(flags));
  };
  f.api = [path, table](const std::string& query) -> std::string {
    Result<Params> params = Params::Parse(path + "?" + query);
    if (!params.ok()) return params.status().message();
    Request request;
    if (Status s = ReadOptions(&*params, table(), &request); !s.ok()) return s.message();
    if (Status s = params->Unknown(); !s.ok()) return s.message();
    return Outcome(table().Check(request));
  };
  f.rows = [table] {
    std::vector<OptionSpec> rows;
    for (const auto& row : table().rows()) {
      if (row.spec.front == OptionFront::kBoth) rows.push_back(row.spec);
    }
    return rows;
  };
  f.needs_metric = needs_metric;
  return f;
}

const std::map<std::string, Front>& Fronts() {
  static const std::map<std::string, Front> fronts{
      {"heatmap", MakeFront("heatmap", AddHeatmapCommand, HeatmapParameters, "/api/heatmap")},
      {"columns", MakeFront("columns", AddColumnsCommand, ColumnsParameters, "/api/columns")},
      {"trails", MakeFront("trails", AddTrailsCommand, TrailsParameters, "/api/trails")},
      {"line", MakeFront("line", AddLineCommand, LineParameters, "/api/line")},
      {"stats", MakeFront("stats", AddStatsCommand, StatsParameters, "/api/stats")},
      {"flame", MakeFront("flame", AddFlameCommand, FlameParameters, "/api/flame", false)},
      {"outliers", MakeFront("outliers", AddOutliersCommand, OutliersParameters, "/api/outliers")},
      {"subsecond",
       MakeFront("subsecond", AddSubsecondCommand, SubsecondParameters, "/api/subsecond", false)},
      {"fields", MakeFront("fields", AddFieldsCommand, FieldsParameters, "/api/fields")},
      {"metrics",
       MakeFront("metrics", AddMetricsCommand, MetricsParameters, "/api/metrics", false)},
  };
  return fronts;
}

struct Case {
  std::string view;
  std::string option;
  std::string value;
  std::string outcome;  // "" = accepted
};

// What both front ends answer for `option` = `value` (with --metric m where the view needs one);
// a flag is given as --option and option=true.
std::pair<std::string, std::string> BothAnswer(const Front& f, const std::string& option,
                                               const std::string& value, bool flag = false) {
  std::vector<std::string> args = {flag ? "--" + option : "--" + option + "=" + value};
  std::string query = option + "=" + (flag ? "true" : UrlEncode(value));
  if (f.needs_metric && option != "metric") {
    args.insert(args.begin(), {"--metric", "m"});
    query = "metric=m&" + query;
  }
  return {f.cli(args), f.api(query)};
}

TEST(OptionParity, TheCliAndTheApiAcceptAndRefuseTheSameValuesWithTheSameWords) {
  const std::vector<Case> cases = {
      {"heatmap", "rows", "2000", ""},
      {"heatmap", "rows", "0", "--rows 0: give a whole number from 1 to 2000"},
      {"heatmap", "rows", "2001", "--rows 2001: give a whole number from 1 to 2000"},
      {"heatmap", "rows", "-1", "--rows -1: give a whole number from 1 to 2000"},
      {"heatmap", "rows", "many", "--rows many: give a whole number from 1 to 2000"},
      {"heatmap", "rows", "+5", "--rows +5: give a whole number from 1 to 2000"},
      {"heatmap", "rows", " 5", "--rows  5: give a whole number from 1 to 2000"},
      {"heatmap", "rows", "99999999999999999999999",
       "--rows 99999999999999999999999: give a whole number from 1 to 2000"},
      {"heatmap", "cols", "0", ""},  // automatic
      {"heatmap", "cols", "100001", "--cols 100001: give a whole number from 1 to 100000"},
      {"heatmap", "width", "99", "--width 99: give a whole number from 100 to 20000"},
      {"heatmap", "height", "20001", "--height 20001: give a whole number from 50 to 20000"},
      {"heatmap", "coloring", "linear", ""},
      {"heatmap", "coloring", "bogus", "--coloring bogus: give rank or linear"},
      {"heatmap", "palette", "blue", "--palette blue: give heat or false"},
      {"heatmap", "scale", "log", ""},
      {"heatmap", "scale", "LOG", "--scale LOG: give linear or log"},
      {"heatmap", "format", "gif", "--format gif: give ansi, svg, png or json"},
      {"heatmap", "format", "png", ""},
      {"heatmap", "max-keys", "-5",
       "--max-keys -5: give a whole number from 0 to 18446744073709551615"},
      {"heatmap", "max-cells", "18446744073709551615", ""},
      {"heatmap", "max-cells", "18446744073709551616",
       "--max-cells 18446744073709551616: give a whole number from 0 to 18446744073709551615"},
      {"columns", "sort", "p99", ""},
      {"columns", "sort", "p42",
       "--sort p42: give cov, p50, p90, p99, mean, max, count, bimodality or name"},
      {"columns", "shading", "flat", "--shading flat: give column, per-column or global"},
      {"columns", "limit", "1000001", "--limit 1000001: give a whole number from 0 to 1000000"},
      {"trails", "overlap", "0.95", ""},
      {"trails", "overlap", "0.96", "--overlap 0.96: give a number from 0 to 0.95"},
      {"trails", "overlap", "-0.5", "--overlap -0.5: give a number from 0 to 0.95"},
      {"trails", "overlap", "half", "--overlap half: give a number from 0 to 0.95"},
      {"trails", "overlap", "nan", "--overlap nan: give a number from 0 to 0.95"},
      {"trails", "points", "15", "--points 15: give a whole number from 16 to 65536"},
      {"trails", "height", "99", "--height 99: give a whole number from 100 to 100000"},
      {"trails", "sort", "median", ""},
      {"trails", "format", "ansi", "--format ansi: give svg, png or json"},
      {"line", "stat", "p99", "--stat p99: give avg, max, min or sum"},
      {"line", "step", "10s", "--step 10s: give a whole number from 0 to 4294967295"},
      {"line", "top", "0", ""},
      {"stats", "sort", "p42",
       "--sort p42: give name, count, mean, min, p50, p90, p99, p99.9, p999 or max"},
      {"stats", "format", "csv", ""},
      {"stats", "format", "ansi", "--format ansi: give table, json or csv"},
      {"stats", "top", "1000001", "--top 1000001: give a whole number from 0 to 1000000"},
      {"flame", "minwidth", "-1", "--minwidth -1: give a number, 0 or more"},
      {"flame", "minwidth", "0", ""},
      {"flame", "width", "99", "--width 99: give a whole number from 100 to 100000"},
      {"flame", "palette", "blue", "--palette blue: give hot, mem, io, java, js or self"},
      {"flame", "format", "png", "--format png: give svg, json or folded"},
      {"outliers", "threshold", "0", "--threshold 0: give a number above 0"},
      {"outliers", "threshold", "0.5", ""},
      {"outliers", "stat", "p42", "--stat p42: give p50, p90, p99, p99.9, mean or max"},
      {"subsecond", "rows", "1001", "--rows 1001: give a whole number from 1 to 1000"},
      {"subsecond", "rows", "1000", ""},
      {"subsecond", "format", "folded", ""},
      {"fields", "top", "x", "--top x: give a whole number from 0 to 1000000"},
      {"metrics", "format", "csv", "--format csv: give table or json"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.view + " --" + c.option + "=" + c.value);
    const auto [cli, api] = BothAnswer(Fronts().at(c.view), c.option, c.value);
    EXPECT_EQ(cli, c.outcome);
    EXPECT_EQ(api, c.outcome);
  }
}

// Every row's example is a value both front ends accept, and every row is both a CLI option and
// an API parameter (a row the API did not read would be "unknown parameter").
TEST(OptionParity, EveryExampleIsAcceptedByBoth) {
  for (const auto& [view, front] : Fronts()) {
    for (const OptionSpec& spec : front.rows()) {
      SCOPED_TRACE(view + " --" + spec.name);
      const bool flag = spec.kind == OptionKind::kFlag;
      EXPECT_TRUE(flag || !spec.example.empty());
      const auto [cli, api] = BothAnswer(front, spec.name, spec.example, flag);
      EXPECT_EQ(cli, "");
      EXPECT_EQ(api, "");
    }
  }
}

// An empty value ("--coloring=", "coloring=") is the one place the two differ: CLI11 refuses it
// while parsing, before any table is read; the API reads it and the table refuses it.
TEST(OptionParity, AnEmptyValueIsRefusedByBothInTheirOwnWords) {
  const Front& heatmap = Fronts().at("heatmap");
  EXPECT_EQ(heatmap.cli({"--metric", "m", "--coloring="}), "--coloring: 1 required TEXT missing");
  EXPECT_EQ(heatmap.api("metric=m&coloring="), "--coloring : give rank or linear");
  EXPECT_EQ(heatmap.cli({"--metric="}), "--metric: 1 required TEXT missing");
  EXPECT_EQ(heatmap.api("metric="), "--metric,-m is required");
}

// The API's flags take true or false; the heat map's panel also has its CLI negation.
TEST(OptionParity, FlagsAndTheirNegation) {
  const Front& heatmap = Fronts().at("heatmap");
  EXPECT_EQ(heatmap.api("metric=m&isolate=maybe"), "--isolate maybe: give true or false");
  EXPECT_EQ(heatmap.api("metric=m&no-panel=maybe"), "--no-panel maybe: give true or false");
  EXPECT_EQ(heatmap.api("metric=m&no-panel=1"), "");
  EXPECT_EQ(heatmap.cli({"--metric", "m", "--no-panel"}), "");
  // The first refusal wins over a parameter nobody reads.
  EXPECT_EQ(heatmap.api("metric=m&rows=0&colour=red"),
            "--rows 0: give a whole number from 1 to 2000");
  EXPECT_EQ(heatmap.api("metric=m&colour=red"), "unknown parameter colour for /api/heatmap");
}

}  // namespace
}  // namespace trailmap
