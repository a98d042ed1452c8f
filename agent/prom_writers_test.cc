#include "agent/prom_writers.h"

#include <gtest/gtest.h>

namespace trailmap {
namespace {

TEST(PromWriters, ATokenWritesOnlyTheHostsItsLineAllows) {
  const std::string text = "# name sha256 hosts\n\nprom-eu " + Sha256Hex("s3cret") +
                           " eu-* lb-?\nprom-all " + Sha256Hex("other") + " *\n";
  Result<PromWriters> w = PromWriters::Parse(text, "writers.txt");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(w->size(), 2u);
  Result<const PromWriter*> eu = w->Admit("bearer  s3cret ");
  ASSERT_TRUE(eu.ok()) << eu.status().ToString();
  EXPECT_EQ((*eu)->name, "prom-eu");
  EXPECT_TRUE((*eu)->MayWrite("eu-web-1"));
  EXPECT_TRUE((*eu)->MayWrite("lb-7"));
  EXPECT_FALSE((*eu)->MayWrite("lb-17"));
  EXPECT_FALSE((*eu)->MayWrite("us-web-1"));
  EXPECT_TRUE((*w->Admit("Bearer other"))->MayWrite("anything"));
  EXPECT_EQ(w->Admit("Bearer s3cre").status().message(),
            "the bearer token is not one of the agent's writers");
  EXPECT_EQ(w->Admit("Basic czNjcmV0").status().message(),
            "the Authorization header is not \"Bearer TOKEN\"");
  EXPECT_TRUE(w->Admit("").status().message().starts_with("remote write needs a bearer token"));
}

TEST(PromWriters, MalformedFilesAreRefusedNamingTheLine) {
  EXPECT_EQ(PromWriters::Parse("a " + Sha256Hex("x") + "\n", "w").status().message(),
            "w:1: expected \"NAME SHA256HEX HOST...\" (64 hex digits: printf %s \"$TOKEN\" | "
            "sha256sum; hosts are names or patterns of * and ?)");
  EXPECT_EQ(PromWriters::Parse("a abc h\n", "w").status().code(), Status::Code::kInvalidArgument);
  const std::string line = "a " + Sha256Hex("x") + " h\n";
  EXPECT_EQ(PromWriters::Parse(line + line, "w").status().message(),
            "w:2: the name a is listed twice");
  EXPECT_EQ(PromWriters::Parse("# none\n", "w").status().message(),
            "w: lists no writer (one line each: NAME SHA256HEX HOST...)");
}

}  // namespace
}  // namespace trailmap
