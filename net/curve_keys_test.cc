#include "net/curve_keys.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace trailmap {
namespace {

// From libzmq's documentation (zmq_curve): a real key pair.
constexpr char kPublic[] = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7";
constexpr char kSecret[] = "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6";
constexpr char kOther[] = "Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID";

TEST(Z85Test, RfcVector) {
  const std::string bytes("\x86\x4F\xD2\x6F\xB5\x59\xF7\x5B", 8);
  EXPECT_EQ(Z85Encode(bytes), "HelloWorld");
  ASSERT_TRUE(Z85Decode("HelloWorld").ok());
  EXPECT_EQ(*Z85Decode("HelloWorld"), bytes);
  Result<std::string> key = Z85Decode(kPublic);
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(key->size(), 32u);
  EXPECT_EQ(Z85Encode(*key), kPublic);
}

TEST(Z85Test, BadInput) {
  EXPECT_EQ(Z85Decode("Hello").status().ok(), true);
  EXPECT_EQ(Z85Decode("Hell").status().message(),
            "Z85 text of 4 characters; it comes in groups of 5");
  EXPECT_EQ(Z85Decode("Hel,o").status().message(), "character 4 is not in the Z85 alphabet");
  EXPECT_EQ(Z85Decode("#####").status().message(), "characters 1-5 are past 2^32: not Z85");
  EXPECT_TRUE(ValidateZ85Key(kPublic).ok());
  EXPECT_EQ(ValidateZ85Key("abc").message(), "a CURVE key is 40 Z85 characters; \"abc\" has 3");
}

TEST(CurveKeyFileTest, FormatsAndParsesBack) {
  const CurveKeyFile key{"web-1", kPublic, kSecret};
  const std::string text = FormatCurveKeyFile(key);
  EXPECT_EQ(text,
            "# trailmap CURVE key pair \"web-1\": keep this file secret (mode 0600); its .pub goes "
            "to the aggregators' clients list\n"
            "name = \"web-1\"\n"
            "public-key = \"rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7\"\n"
            "secret-key = \"JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6\"\n");
  Result<CurveKeyFile> back = ParseCurveKeyFile(text, "web-1.key");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->name, "web-1");
  EXPECT_EQ(back->public_key, kPublic);
  EXPECT_EQ(back->secret_key, kSecret);

  Result<CurveKeyFile> pub = ParseCurveKeyFile(FormatCurveKeyFile({"web-1", kPublic, ""}), "p");
  ASSERT_TRUE(pub.ok());
  EXPECT_EQ(pub->secret_key, "");
  // Bare values and CRLF line ends are read too.
  Result<CurveKeyFile> bare =
      ParseCurveKeyFile(std::string("public-key = ") + kPublic + "\r\n", "b");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->public_key, kPublic);
}

TEST(CurveKeyFileTest, ErrorsNameFileAndLine) {
  auto error = [](std::string_view text) {
    return ParseCurveKeyFile(text, "a.key").status().message();
  };
  EXPECT_EQ(error("# x\nnonsense\n"),
            "a.key:2: expected KEY = VALUE (name, public-key or secret-key); is this a trailmap "
            "key file (trailmap keygen)?");
  EXPECT_EQ(error("colour = \"red\""),
            "a.key:1: unknown key \"colour\"; a key file holds name, public-key and secret-key");
  EXPECT_EQ(error("\n\npublic-key = \"abc\""),
            "a.key:3: public-key: a CURVE key is 40 Z85 characters; \"abc\" has 3");
  EXPECT_EQ(
      error(std::string("public-key = \"") + kPublic + "\"\npublic-key = \"" + kPublic + "\""),
      "a.key:2: public-key given twice");
  EXPECT_EQ(error("name = \"a b\""),
            "a.key:1: name \"a b\": use 1-64 letters, digits, '.', '_' or '-'");
  EXPECT_EQ(error("name = \"x"), "a.key:1: unbalanced quote in the value of name");
  EXPECT_EQ(error("name = x"), "a.key: no public-key line; write key files with trailmap keygen");
}

TEST(CurveKeyFileTest, LoadChecksSecretAndMode) {
  const std::string dir = ::testing::TempDir() + "/curve_keys_test";
  std::filesystem::create_directories(dir);
  const std::string key_path = dir + "/a.key", pub_path = dir + "/a.pub";
  std::ofstream(key_path) << FormatCurveKeyFile({"a", kPublic, kSecret});
  std::ofstream(pub_path) << FormatCurveKeyFile({"a", kPublic, ""});
  ::chmod(key_path.c_str(), 0644);
  EXPECT_EQ(LoadCurveKeyFile(key_path, true).status().message(),
            key_path + ": a secret key readable by group or others; chmod 600 " + key_path);
  ::chmod(key_path.c_str(), 0600);
  EXPECT_TRUE(LoadCurveKeyFile(key_path, true).ok());
  EXPECT_EQ(LoadCurveKeyFile(pub_path, true).status().message(),
            pub_path +
                ": holds no secret-key (a .pub file?); give the .key file trailmap keygen "
                "wrote");
  EXPECT_TRUE(LoadCurveKeyFile(pub_path, false).ok());
  EXPECT_EQ(LoadCurveKeyFile(dir + "/none.key", true).status().code(), Status::Code::kNotFound);
}

TEST(GlobTest, Matches) {
  EXPECT_TRUE(GlobMatch("web-*", "web-12"));
  EXPECT_TRUE(GlobMatch("web-*", "web-"));
  EXPECT_FALSE(GlobMatch("web-*", "db-1"));
  EXPECT_TRUE(GlobMatch("web-?", "web-1"));
  EXPECT_FALSE(GlobMatch("web-?", "web-12"));
  EXPECT_TRUE(GlobMatch("*", ""));
  EXPECT_TRUE(GlobMatch("*a*b", "xxaxxab"));
  EXPECT_FALSE(GlobMatch("*a*b", "xxaxxa"));
  EXPECT_TRUE(GlobMatch("db-7", "db-7"));
  EXPECT_FALSE(GlobMatch("db-7", "db-70"));
  // Many stars on a long non-matching text stay fast (no exponential backtracking).
  EXPECT_FALSE(GlobMatch("*a*a*a*a*a*a*a*a*a*b", std::string(5000, 'a')));
}

TEST(ClientKeysTest, ParsesRightsAndHosts) {
  const std::string text = std::string("# NAME KEY RIGHTS HOSTS\n") + "web-1 " + kPublic +
                           " ingest web-1\n\n" + "ops\t" + kOther + "  ingest,query  sim-* db-?\n";
  Result<std::vector<ClientKey>> keys = ParseClientKeys(text, "clients");
  ASSERT_TRUE(keys.ok()) << keys.status().ToString();
  ASSERT_EQ(keys->size(), 2u);
  const ClientKey& web = (*keys)[0];
  EXPECT_EQ(web.name, "web-1");
  EXPECT_EQ(web.public_key, kPublic);
  EXPECT_TRUE(web.ingest);
  EXPECT_FALSE(web.query);
  EXPECT_TRUE(web.MayWrite("web-1"));
  EXPECT_FALSE(web.MayWrite("web-2"));
  const ClientKey& ops = (*keys)[1];
  EXPECT_TRUE(ops.query);
  EXPECT_EQ(ops.hosts, (std::vector<std::string>{"sim-*", "db-?"}));
  EXPECT_TRUE(ops.MayWrite("sim-40"));
  EXPECT_TRUE(ops.MayWrite("db-3"));
  EXPECT_FALSE(ops.MayWrite("db-30"));
  ClientKey query_only{"q", kPublic, false, true, {}};
  EXPECT_FALSE(query_only.MayWrite("web-1"));
}

TEST(ClientKeysTest, ErrorsNameFileAndLine) {
  auto error = [](const std::string& text) {
    return ParseClientKeys(text, "clients").status().message();
  };
  const std::string k(kPublic);
  EXPECT_EQ(error("web-1 " + k),
            "clients:1: expected NAME PUBLIC-KEY RIGHTS [HOSTS...], e.g. \"web-1 <40 Z85 "
            "characters of web-1.pub> ingest web-1\"");
  EXPECT_EQ(error("web/1 " + k + " ingest web-1"),
            "clients:1: name \"web/1\": use 1-64 letters, digits, '.', '_' or '-'");
  EXPECT_EQ(error("\nweb-1 abc ingest web-1"),
            "clients:2: public key of web-1: a CURVE key is 40 Z85 characters; \"abc\" has 3");
  EXPECT_EQ(error("a " + k + " ingest a\nb " + k + " query"),
            "clients:2: the public key of b is listed twice; list each key once");
  EXPECT_EQ(error("a " + k + " write a"),
            "clients:1: right \"write\" of a: use ingest, query or ingest,query");
  EXPECT_EQ(error("a " + k + " ingest"),
            "clients:1: a may ingest but lists no hosts; add the hosts it may write (names or "
            "patterns like web-*, or * for any)");
  EXPECT_EQ(error("a " + k + " query web-1"),
            "clients:1: a lists hosts but may not ingest; add the ingest right or drop the hosts");
  EXPECT_EQ(error("a " + k + " ingest a\na " + kOther + " ingest b"),
            "clients:2: a is listed before with other rights or hosts; the keys of one name share "
            "them");
  EXPECT_TRUE(ParseClientKeys("a " + k + " ingest a\na " + kOther + " ingest a", "c").ok());
  EXPECT_EQ(error("a " + k + " ,"),
            "clients:1: a has no rights: use ingest, query or ingest,query");
}

TEST(ClientKeyPathsTest, TheEnvironmentFillsOnlyWhatNoFlagGaveAndNothingWithPlaintext) {
  ASSERT_EQ(setenv("TRAILMAP_KEY", "env.key", 1), 0);
  ASSERT_EQ(setenv("TRAILMAP_SERVER_KEY", "env.pub", 1), 0);
  std::string key = "flag.key", server_key;
  ClientKeyPathsFromEnvironment(false, &key, &server_key);
  EXPECT_EQ(key, "flag.key");
  EXPECT_EQ(server_key, "env.pub");
  std::string none, none_server;
  ClientKeyPathsFromEnvironment(true, &none, &none_server);
  EXPECT_EQ(none, "");
  EXPECT_EQ(none_server, "");
  ASSERT_EQ(unsetenv("TRAILMAP_KEY"), 0);
  ASSERT_EQ(unsetenv("TRAILMAP_SERVER_KEY"), 0);
}

}  // namespace
}  // namespace trailmap
