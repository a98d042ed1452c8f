#include "cli/keygen_command.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "cli/testing_cli.h"
#include "net/curve_keys.h"

namespace trailmap {
namespace {

mode_t Mode(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 0777;
}

TEST(Keygen, WritesAPairThatLoadsAndNeverOverwrites) {
  const std::string dir = ::testing::TempDir() + "/keygen_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  testing::CliHarness h;
  KeygenFlags flags{"web-1", dir};
  ASSERT_EQ(RunKeygen(flags, h.context), kExitOk) << h.err.str();
  EXPECT_EQ(Mode(dir + "/web-1.key"), 0600u);
  EXPECT_EQ(Mode(dir + "/web-1.pub"), 0644u);
  Result<CurveKeyFile> key = LoadCurveKeyFile(dir + "/web-1.key", /*need_secret=*/true);
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  Result<CurveKeyFile> pub = LoadCurveKeyFile(dir + "/web-1.pub", /*need_secret=*/false);
  ASSERT_TRUE(pub.ok()) << pub.status().ToString();
  EXPECT_EQ(key->name, "web-1");
  EXPECT_EQ(pub->name, "web-1");
  EXPECT_EQ(pub->public_key, key->public_key);
  EXPECT_EQ(pub->secret_key, "");
  EXPECT_NE(key->secret_key, key->public_key);
  // The printed clients line parses as one.
  const std::string out = h.out.str();
  const std::string line = out.substr(out.rfind('\n', out.size() - 2) + 1);
  EXPECT_EQ(line, "web-1 " + key->public_key + " ingest web-1\n");
  Result<std::vector<ClientKey>> clients = ParseClientKeys(line, "printed");
  ASSERT_TRUE(clients.ok()) << clients.status().ToString();
  EXPECT_TRUE((*clients)[0].MayWrite("web-1"));

  testing::CliHarness again;
  EXPECT_EQ(RunKeygen(flags, again.context), kExitError);
  EXPECT_EQ(again.err.str(), "trailmap keygen: " + dir +
                                 "/web-1.key exists; keygen never overwrites a key (move it "
                                 "away, or pick another NAME)\n");
  Result<CurveKeyFile> still = LoadCurveKeyFile(dir + "/web-1.key", true);
  ASSERT_TRUE(still.ok());
  EXPECT_EQ(still->secret_key, key->secret_key);

  testing::CliHarness bad;
  EXPECT_EQ(RunKeygen({"a/b", dir}, bad.context), kExitUsage);
  EXPECT_EQ(bad.err.str(),
            "trailmap keygen: NAME \"a/b\": use 1-64 letters, digits, '.', '_' or '-'\n");
}

// The pair is written whole or not at all: an existing NAME.pub is refused before NAME.key is
// written, so no orphan secret is left beside a public key it does not match.
TEST(Keygen, AnExistingPubLeavesNoOrphanKey) {
  const std::string dir = ::testing::TempDir() + "/keygen_pub_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/ops.pub") << "kept\n";
  testing::CliHarness h;
  EXPECT_EQ(RunKeygen({"ops", dir}, h.context), kExitError);
  EXPECT_EQ(h.err.str(), "trailmap keygen: " + dir +
                             "/ops.pub exists; keygen never overwrites a key (move it away, or "
                             "pick another NAME)\n");
  EXPECT_FALSE(std::filesystem::exists(dir + "/ops.key"));
  std::ifstream pub(dir + "/ops.pub");
  std::string kept;
  std::getline(pub, kept);
  EXPECT_EQ(kept, "kept");
}

// A missing --dir is made, with its missing parents, mode 0700.
TEST(Keygen, MakesAMissingDirPrivate) {
  const std::string root = ::testing::TempDir() + "/keygen_dir_test";
  std::filesystem::remove_all(root);
  const std::string dir = root + "/keys/agents";
  testing::CliHarness h;
  ASSERT_EQ(RunKeygen({"web-2", dir}, h.context), kExitOk) << h.err.str();
  EXPECT_EQ(Mode(root + "/keys"), 0700u);
  EXPECT_EQ(Mode(dir), 0700u);
  EXPECT_EQ(Mode(dir + "/web-2.key"), 0600u);
  EXPECT_TRUE(LoadCurveKeyFile(dir + "/web-2.pub", /*need_secret=*/false).ok());

  std::ofstream(root + "/file") << "x";
  testing::CliHarness not_dir;
  EXPECT_EQ(RunKeygen({"web-3", root + "/file"}, not_dir.context), kExitError);
  EXPECT_EQ(not_dir.err.str(),
            "trailmap keygen: --dir " + root + "/file exists and is not a directory\n");
}

}  // namespace
}  // namespace trailmap
