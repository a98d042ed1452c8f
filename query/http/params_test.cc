#include "query/http/params.h"

#include <gtest/gtest.h>

namespace trailmap {
namespace {

OptionSpec Text(const std::string& name) { return {.name = name}; }
OptionSpec Flag(const std::string& name) { return {.name = name, .kind = OptionKind::kFlag}; }
OptionSpec Whole(const std::string& name, uint64_t high) {
  return {.name = name, .kind = OptionKind::kWhole, .whole_high = high};
}

TEST(Params, SplitsDecodesAndReadsTypes) {
  Result<Params> p = Params::Parse(
      "/api/heatmap?metric=disk.latency&where=host+%3D~+%22web.*%22&rows=25&per-column&panel=0");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->path(), "/api/heatmap");
  std::string metric, where, missing = "kept";
  ASSERT_TRUE(p->Read(Text("metric"), &metric).ok());
  ASSERT_TRUE(p->Read(Text("where"), &where).ok());
  ASSERT_TRUE(p->Read(Text("from"), &missing).ok());
  EXPECT_EQ(metric, "disk.latency");
  EXPECT_EQ(where, "host =~ \"web.*\"");
  EXPECT_EQ(missing, "kept");
  uint64_t rows = 50;
  ASSERT_TRUE(p->Read(Whole("rows", 2000), &rows).ok());
  EXPECT_EQ(rows, 25u);
  bool per_column = false, panel = true;
  ASSERT_TRUE(p->Read(Flag("per-column"), &per_column).ok());
  ASSERT_TRUE(p->Read(Flag("panel"), &panel).ok());
  EXPECT_TRUE(per_column);
  EXPECT_FALSE(panel);
  EXPECT_TRUE(p->Unknown().ok());
}

TEST(Params, MistakesNameTheParameterAsTheCliNamesItsFlag) {
  Result<Params> p = Params::Parse("/api/heatmap?rows=many&colour=red&panel=maybe");
  ASSERT_TRUE(p.ok());
  uint64_t rows = 50;
  Status s = p->Read(Whole("rows", 2000), &rows);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "--rows many: give a whole number from 0 to 2000");
  EXPECT_EQ(rows, 50u);
  bool panel = true;
  EXPECT_EQ(p->Read(Flag("panel"), &panel).message(), "--panel maybe: give true or false");
  EXPECT_EQ(p->Unknown().message(), "unknown parameter colour for /api/heatmap");

  EXPECT_EQ(Params::Parse("/a?x=%zz").status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(Params::Parse("/a?x=1&x=2").status().message(), "--x is given twice");
  uint64_t big = 0;
  Result<Params> neg = Params::Parse("/a?n=-1");
  EXPECT_FALSE(neg->Read(Whole("n", 10), &big).ok());
  // A row only the CLI has is no parameter: it stays unread, and so unknown.
  Result<Params> cli_only = Params::Parse("/a?aggregators=x");
  std::string aggregators;
  OptionSpec spec = Text("aggregators");
  spec.CliOnly();
  EXPECT_TRUE(cli_only->Read(spec, &aggregators).ok());
  EXPECT_EQ(aggregators, "");
  EXPECT_EQ(cli_only->Unknown().message(), "unknown parameter aggregators for /a");
}

TEST(Params, ANegationTurnsAFlagOff) {
  OptionSpec panel = Flag("panel");
  panel.Negation("no-panel");
  bool on = true;
  ASSERT_TRUE(Params::Parse("/a?no-panel")->Read(panel, &on).ok());
  EXPECT_FALSE(on);
  on = true;
  ASSERT_TRUE(Params::Parse("/a?no-panel=false")->Read(panel, &on).ok());
  EXPECT_TRUE(on);
  EXPECT_EQ(Params::Parse("/a?no-panel=2")->Read(panel, &on).message(),
            "--no-panel 2: give true or false");
}

// The path is taken in one form only, never decoded: the token check and the router read the
// same bytes, so no spelling of /api/ or /metrics can be one thing to one and another to the
// other.
TEST(RequestPath, TakesTheOneFormTheRouterServesAndRefusesEveryOtherSpelling) {
  for (const char* target : {"/", "/api/heatmap", "/api/heatmap?metric=m", "/api/heatmap/live",
                             "/app.js", "/metrics", "/API/heatmap", "/a~b/c_d.e-f"}) {
    const std::string path(std::string_view(target).substr(0, std::string_view(target).find('?')));
    EXPECT_EQ(RequestPath(target).value(), path) << target;
  }
  for (const char* target : {"/%61pi/heatmap",
                             "/api%2Fstats",
                             "/api%2fstats",
                             "/%2561pi/heatmap",
                             "//api/heatmap",
                             "/./api/heatmap",
                             "/x/../api/heatmap",
                             "/api/./heatmap",
                             "/api/heatmap/",
                             "/api//heatmap",
                             "http://127.0.0.1/api/heatmap",
                             "127.0.0.1/api/heatmap",
                             "*",
                             "",
                             "?metric=m",
                             "/%6detrics",
                             "/api/self;x",
                             "/api/heatmap#x",
                             "/api\\heatmap",
                             "/api/heatmap%00",
                             "/api/heat map",
                             "/api/\xff",
                             "/..",
                             "/.",
                             "/api/heatmap\r\n"}) {
    const Result<std::string> path = RequestPath(target);
    EXPECT_EQ(path.status().code(), Status::Code::kInvalidArgument) << target;
  }
  EXPECT_EQ(RequestPath("/%61pi/x?a=1").status().message(),
            "the path \"/%61pi/x\" is not one trailmap-query serves: a path is /SEGMENT/... of "
            "letters, digits and - . _ ~, without percent escapes and without empty, \".\" or "
            "\"..\" segments");
  EXPECT_EQ(RequestPath(std::string_view("/a\0b\xff", 5)).status().message().substr(0, 22),
            "the path \"/a\\x00b\\xff\"");
  // Params reads its path so too.
  EXPECT_EQ(Params::Parse("/%61pi/heatmap?metric=m").status().code(),
            Status::Code::kInvalidArgument);
}

// JSON holds only UTF-8, and every answer is JSON: a name or value that is not UTF-8 once
// decoded is refused here, naming the parameter, with the bytes escaped.
TEST(Params, NamesAndValuesMustBeUtf8) {
  EXPECT_EQ(Params::Parse("/api/heatmap?by=%ff").status().message(),
            "--by \"\\xff\": not valid UTF-8");
  EXPECT_EQ(Params::Parse("/api/heatmap?palette=he%c3").status().message(),
            "--palette \"he\\xc3\": not valid UTF-8");
  EXPECT_EQ(Params::Parse("/api/heatmap?metric=m&%ff=1").status().message(),
            "the parameter name \"\\xff\" is not valid UTF-8");
  EXPECT_EQ(Params::Parse("/api/heatmap?where=host%3D%3D%22%ed%a0%80%22").status().message(),
            "--where \"host==\\\"\\xed\\xa0\\x80\\\"\": not valid UTF-8");
  Result<Params> ok = Params::Parse("/api/heatmap?where=host%3D%3D%22%c3%a9%22");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  std::string where;
  ASSERT_TRUE(ok->Read(Text("where"), &where).ok());
  EXPECT_EQ(where, "host==\"\xc3\xa9\"");
  EXPECT_EQ(Params::Parse("/a?x=%f").status().message(),
            "malformed percent escape in \"%f\": write %XX with two hex digits");
}

}  // namespace
}  // namespace trailmap
