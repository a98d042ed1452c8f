#include "query/http/tokens.h"

#include <gtest/gtest.h>

namespace trailmap {
namespace {

TEST(Sha256, KnownDigests) {
  // FIPS 180-4 examples, and lengths around the padding's block edge (55, 56, 64 bytes).
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256Hex(std::string(55, 'a')),
            "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(Sha256Hex(std::string(56, 'a')),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(Sha256Hex(std::string(64, 'a')),
            "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
  EXPECT_EQ(Sha256Hex(std::string(1'000'000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(BearerTokens, AdmitsListedTokensOnly) {
  const std::string file = "# who  hash\n\n" + TokenFileLine("alice", "open-sesame") + "\n" +
                           TokenFileLine("bob", "s3cret") + "\r\n";
  Result<BearerTokens> tokens = BearerTokens::Parse(file, "tokens.txt");
  ASSERT_TRUE(tokens.ok()) << tokens.status().ToString();
  EXPECT_EQ(tokens->size(), 2u);
  std::string target = "/api/metrics";
  EXPECT_EQ(tokens->Admit("Bearer open-sesame", &target).value(), "alice");
  EXPECT_EQ(tokens->Admit("Bearer s3cret", &target).value(), "bob");
  EXPECT_EQ(target, "/api/metrics");
  EXPECT_EQ(tokens->Admit("Bearer s3cre", &target).status().message(),
            "the bearer token is not one this trailmap-query accepts");
  EXPECT_EQ(tokens->Admit("Basic YWxpY2U6eA==", &target).status().message(),
            "the Authorization header is not \"Bearer TOKEN\"");
  EXPECT_EQ(tokens->Admit("", &target).status().message(),
            "this API needs a bearer token: send the header \"Authorization: Bearer TOKEN\" with "
            "a token whose SHA-256 is in trailmap-query's --tokens file");
  // The live stream's EventSource sends it as a parameter, which is taken out of the target.
  target = "/api/heatmap/live?metric=m&access_token=open%2Dsesame&from=-5m";
  EXPECT_EQ(tokens->Admit("", &target).value(), "alice");
  EXPECT_EQ(target, "/api/heatmap/live?metric=m&from=-5m");
  target = "/api/heatmap/live?access_token=nope";
  EXPECT_FALSE(tokens->Admit("", &target).ok());
  EXPECT_EQ(target, "/api/heatmap/live");
}

// RFC 7235 2.1: the auth-scheme is case-insensitive; the spaces around the token are not part
// of it (a token may hold spaces inside).
TEST(BearerTokens, TheSchemeIsCaseInsensitive) {
  Result<BearerTokens> tokens =
      BearerTokens::Parse(TokenFileLine("alice", "open sesame") + "\n", "tokens.txt");
  ASSERT_TRUE(tokens.ok());
  std::string target = "/api/metrics";
  for (const char* header :
       {"Bearer open sesame", "bearer open sesame", "BEARER open sesame", "bEaReR open sesame",
        "Bearer   open sesame  ", "Bearer\topen sesame", "  Bearer open sesame"}) {
    const Result<std::string> who = tokens->Admit(header, &target);
    EXPECT_TRUE(who.ok()) << header << ": " << who.status().message();
  }
  for (const char* header : {"Bearer", "Bearer ", "Bearers open sesame", "Bear open sesame",
                             "Bearer open  sesame", "Bearer:open sesame", "Basic open sesame"}) {
    EXPECT_FALSE(tokens->Admit(header, &target).ok()) << header;
  }
}

// Only the page's own files are open; every other path needs a token, however it is spelt.
TEST(NeedsToken, OnlyThePagesFilesAreOpen) {
  for (const char* target : {"/", "/index.html", "/app.js", "/style.css", "/heatmap.js",
                             "/?access_token=x", "/app.js?v=2"}) {
    EXPECT_FALSE(NeedsToken(target)) << target;
  }
  for (const char* target : {"/api/heatmap?metric=m",
                             "/api/self",
                             "/metrics",
                             "/metrics?x",
                             "/%61pi/heatmap?metric=m",
                             "/api%2Fstats?metric=m",
                             "/api%2fstats",
                             "/%61pi/heatmap/live?metric=m",
                             "/%2561pi/x",
                             "//api/heatmap",
                             "/./api/heatmap",
                             "/x/../api/heatmap",
                             "/API/heatmap",
                             "/Api/self",
                             "http://127.0.0.1/api/heatmap",
                             "/%6detrics",
                             "/METRICS",
                             "/api/self;x",
                             "/api/self#x",
                             "/api\\self",
                             "/api/self%00",
                             "/%2e/app.js",
                             "/app.js/",
                             "/nothing.js",
                             "/index.htm",
                             "*",
                             ""}) {
    EXPECT_TRUE(NeedsToken(target)) << target;
  }
}

TEST(BearerTokens, FileErrorsNameTheLine) {
  EXPECT_EQ(BearerTokens::Parse("alice abc\n", "t").status().message(),
            "t:1: expected \"NAME SHA256HEX\" (64 hex digits; make one with trailmap-query "
            "--hash-token NAME)");
  const std::string line = TokenFileLine("alice", "x");
  EXPECT_EQ(BearerTokens::Parse(line + "\n#\n" + line + "\n", "t").status().message(),
            "t:3: the name alice is listed twice");
  EXPECT_EQ(BearerTokens::Parse("# nothing\n", "t").status().message(),
            "t: lists no token (one line each: NAME SHA256HEX)");
  EXPECT_EQ(BearerTokens::Load("/nonexistent/tokens").status().message(),
            "/nonexistent/tokens: cannot open the token file");
}

}  // namespace
}  // namespace trailmap
