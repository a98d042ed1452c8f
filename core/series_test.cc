#include "core/series.h"

#include <gtest/gtest.h>

namespace trailmap {
namespace {

TEST(Series, CanonicalFieldsSortsAndJoins) {
  Result<std::string> c = CanonicalFields({{"url", "/api"}, {"op", "read"}});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*c, "op=read,url=/api");
  EXPECT_EQ(*CanonicalFields({}), "");
  EXPECT_EQ(FieldValue("op=read,url=/api", "url"), "/api");
  EXPECT_EQ(FieldValue("op=read,url=/api", "u"), "");
  EXPECT_EQ(FieldValue("op=read,url=/api", "zone"), "");
}

TEST(Series, RejectsBadFieldsWithAReason) {
  EXPECT_NE(CanonicalFields({{"op", "a"}, {"op", "b"}}).status().message().find("given twice"),
            std::string::npos);
  EXPECT_NE(CanonicalFields({{"o p", "a"}}).status().message().find("outside"), std::string::npos);
  EXPECT_NE(CanonicalFields({{"op", "a,b"}}).status().message().find("','"), std::string::npos);
  EXPECT_FALSE(CanonicalFields({{"op", ""}}).ok());
  EXPECT_FALSE(ValidateMetricName("disk latency").ok());
  EXPECT_FALSE(ValidateMetricName("").ok());
  EXPECT_TRUE(ValidateMetricName("disk.latency").ok());
}

TEST(Series, ParseFieldsRoundTripsAndInsistsOnCanonicalForm) {
  Result<FieldSet> f = ParseFields("op=read,url=/a=b");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  ASSERT_EQ(f->size(), 2u);
  EXPECT_EQ((*f)[1].second, "/a=b");
  EXPECT_FALSE(ParseFields("url=/a,op=read").ok());
  EXPECT_FALSE(ParseFields("op").ok());
  EXPECT_FALSE(ParseFields("op=read,").ok());
}

}  // namespace
}  // namespace trailmap
