#include "net/client_keys.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <utility>
#include <vector>

#include "net/command_line.h"

namespace trailmap {
namespace {

// From libzmq's documentation (zmq_curve): a real key pair, and another public key.
constexpr char kPublic[] = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7";
constexpr char kSecret[] = "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6";
constexpr char kServer[] = "Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID";

// The process's environment, as each test wants it, and as it was afterwards.
class ClientCurveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("TRAILMAP_KEY");
    unsetenv("TRAILMAP_SERVER_KEY");
    dir_ = ::testing::TempDir() + "/client_keys_test";
    mkdir(dir_.c_str(), 0700);
    key_ = dir_ + "/web-1.key";
    server_ = dir_ + "/agg.pub";
    std::ofstream(key_) << FormatCurveKeyFile({"web-1", kPublic, kSecret});
    chmod(key_.c_str(), 0600);
    std::ofstream(server_) << FormatCurveKeyFile({"agg", kServer, ""});
  }
  void TearDown() override {
    unsetenv("TRAILMAP_KEY");
    unsetenv("TRAILMAP_SERVER_KEY");
  }
  std::string dir_, key_, server_;
};

TEST_F(ClientCurveTest, TheFlagsParseIntoTheirFields) {
  CLI::App app;
  ClientKeyFlags flags;
  AddClientKeyFlags(&app, &flags, "this agent");
  const char* argv[] = {"prog", "--key", "a.key", "--server-key=s.pub", "--insecure-plaintext"};
  app.parse(5, const_cast<char**>(argv));
  EXPECT_EQ(flags.key, "a.key");
  EXPECT_EQ(flags.server_key, "s.pub");
  EXPECT_TRUE(flags.insecure_plaintext);
  EXPECT_NE(app.help().find("this agent's CURVE key, NAME.key from trailmap keygen"),
            std::string::npos);
}

TEST_F(ClientCurveTest, FlagsFirstThenTheEnvironment) {
  Result<CurveClient> curve = ClientCurve({key_, server_, false}, true);
  ASSERT_TRUE(curve.ok()) << curve.status().ToString();
  EXPECT_EQ(curve->name, "web-1");
  EXPECT_EQ(curve->public_key, kPublic);
  EXPECT_EQ(curve->server_key, kServer);
  setenv("TRAILMAP_KEY", key_.c_str(), 1);
  setenv("TRAILMAP_SERVER_KEY", server_.c_str(), 1);
  curve = ClientCurve({}, true);
  ASSERT_TRUE(curve.ok()) << curve.status().ToString();
  EXPECT_EQ(curve->server_key, kServer);
  // A flag wins over the environment: here a file that is not there.
  EXPECT_EQ(ClientCurve({"", dir_ + "/none.pub", false}, true)
                .status()
                .message()
                .rfind("--server-key: ", 0),
            0u);
}

TEST_F(ClientCurveTest, PlaintextIgnoresTheEnvironmentButNotFlagsAndWarns) {
  setenv("TRAILMAP_KEY", key_.c_str(), 1);
  setenv("TRAILMAP_SERVER_KEY", server_.c_str(), 1);
  testing::internal::CaptureStderr();
  Result<CurveClient> curve = ClientCurve({"", "", true}, true);
  EXPECT_NE(testing::internal::GetCapturedStderr().find(kPlaintextWarning), std::string::npos);
  ASSERT_TRUE(curve.ok()) << curve.status().ToString();
  EXPECT_TRUE(curve->plaintext);
  EXPECT_EQ(ClientCurve({key_, "", true}, true).status().message(),
            "--insecure-plaintext together with a key (--key/--server-key or TRAILMAP_KEY/"
            "TRAILMAP_SERVER_KEY): choose one");
}

TEST_F(ClientCurveTest, NoKeysAreAnErrorOnlyForProgramsThatConnectAtOnce) {
  Result<CurveClient> later = ClientCurve({}, false);
  ASSERT_TRUE(later.ok());
  EXPECT_FALSE(later->keyed());
  EXPECT_EQ(ClientCurve({}, true).status().message(), later->Usable().message());
  EXPECT_EQ(ClientCurve({key_, "", false}, false).status().message(),
            "--server-key is missing: a CURVE client needs its own .key and the aggregators' "
            ".pub");
}

// Every daemon answers --help and a flag CLI11 refuses alike: 0 and 2; -1 runs on.
TEST_F(ClientCurveTest, EveryDaemonParsesItsCommandLineAlike) {
  const auto parse = [](std::vector<const char*> argv) {
    CLI::App app{"test program"};
    ClientKeyFlags flags;
    AddClientKeyFlags(&app, &flags, "this test");
    testing::internal::CaptureStdout();
    testing::internal::CaptureStderr();
    const int code =
        ParseCommandLine(&app, static_cast<int>(argv.size()), const_cast<char**>(argv.data()));
    testing::internal::GetCapturedStdout();
    const std::string err = testing::internal::GetCapturedStderr();
    return std::make_pair(code, err);
  };
  EXPECT_EQ(parse({"prog", "--key", "a.key"}).first, -1);
  EXPECT_EQ(parse({"prog", "--help"}).first, 0);
  const auto [code, err] = parse({"prog", "--no-such-flag"});
  EXPECT_EQ(code, 2);
  EXPECT_NE(err.find("--no-such-flag"), std::string::npos) << err;
  EXPECT_EQ(parse({"prog", "--key"}).first, 2);
}

}  // namespace
}  // namespace trailmap
