#include "query/http/params.h"

#include <gtest/gtest.h>

namespace trailmap {
namespace {

TEST(Params, SplitsDecodesAndReadsTypes) {
  Result<Params> p = Params::Parse(
      "/api/heatmap?metric=disk.latency&where=host+%3D~+%22web.*%22&rows=25&per-column&panel=0");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->path(), "/api/heatmap");
  std::string metric, where, missing = "kept";
  p->Text("metric", &metric);
  p->Text("where", &where);
  p->Text("from", &missing);
  EXPECT_EQ(metric, "disk.latency");
  EXPECT_EQ(where, "host =~ \"web.*\"");
  EXPECT_EQ(missing, "kept");
  uint64_t rows = 50;
  ASSERT_TRUE(p->Unsigned("rows", 2000, &rows).ok());
  EXPECT_EQ(rows, 25u);
  bool per_column = false, panel = true;
  ASSERT_TRUE(p->Bool("per-column", &per_column).ok());
  ASSERT_TRUE(p->Bool("panel", &panel).ok());
  EXPECT_TRUE(per_column);
  EXPECT_FALSE(panel);
  EXPECT_TRUE(p->Unknown().ok());
}

TEST(Params, MistakesNameTheParameterAsTheCliNamesItsFlag) {
  Result<Params> p = Params::Parse("/api/heatmap?rows=many&colour=red&panel=maybe");
  ASSERT_TRUE(p.ok());
  uint64_t rows = 50;
  Status s = p->Unsigned("rows", 2000, &rows);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "--rows many: give a whole number from 0 to 2000");
  bool panel = true;
  EXPECT_EQ(p->Bool("panel", &panel).message(), "--panel maybe: give true or false");
  EXPECT_EQ(p->Unknown().message(), "unknown parameter colour for /api/heatmap");

  EXPECT_EQ(Params::Parse("/a?x=%zz").status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(Params::Parse("/a?x=1&x=2").status().message(), "--x is given twice");
  uint64_t big = 0;
  Result<Params> neg = Params::Parse("/a?n=-1");
  EXPECT_FALSE(neg->Unsigned("n", 10, &big).ok());
}

}  // namespace
}  // namespace trailmap
