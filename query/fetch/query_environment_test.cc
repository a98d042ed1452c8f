#include "query/fetch/query_environment.h"

#include <gtest/gtest.h>
#include <stdlib.h>

namespace trailmap {
namespace {

TEST(SetUpQueryContext, ReadsTheEnvironmentOnceAndKeepsTheRest) {
  setenv("TRAILMAP_AGGREGATORS", "a:7401,b", 1);
  setenv("TRAILMAP_CLUSTER", "/etc/trailmap/cluster.toml", 1);
  setenv("TRAILMAP_INGEST", "a:7400", 1);
  setenv("TRAILMAP_CONFIG", "/etc/trailmap/trailmap.toml", 1);
  setenv("HOME", "/home/ops", 1);
  unsetenv("TRAILMAP_KEY");
  unsetenv("TRAILMAP_SERVER_KEY");
  zmq::context_t zmq(1);
  QueryContext context;
  context.empty_when_none_answer = true;  // the CLI's: left as it is
  context.now = 1234;
  testing::internal::CaptureStderr();
  ASSERT_TRUE(SetUpQueryContext({"", "", true}, true, &zmq, &context).ok());
  testing::internal::GetCapturedStderr();
  EXPECT_EQ(context.zmq, &zmq);
  EXPECT_EQ(context.env_aggregators, "a:7401,b");
  EXPECT_EQ(context.env_cluster, "/etc/trailmap/cluster.toml");
  EXPECT_EQ(context.env_ingest, "a:7400");
  EXPECT_EQ(context.env_config, "/etc/trailmap/trailmap.toml");
  EXPECT_EQ(context.home, "/home/ops");
  EXPECT_TRUE(context.curve.plaintext);
  EXPECT_TRUE(context.empty_when_none_answer);
  EXPECT_EQ(context.now, 1234);
  unsetenv("TRAILMAP_AGGREGATORS");
  unsetenv("TRAILMAP_CLUSTER");
  unsetenv("TRAILMAP_INGEST");
  unsetenv("TRAILMAP_CONFIG");
}

// trailmap-query needs keys at once; the CLI only when a command queries.
TEST(SetUpQueryContext, NoKeysAreRefusedOnlyWhenNeeded) {
  unsetenv("TRAILMAP_KEY");
  unsetenv("TRAILMAP_SERVER_KEY");
  zmq::context_t zmq(1);
  QueryContext context;
  const Status refused = SetUpQueryContext({}, true, &zmq, &context);
  EXPECT_EQ(refused.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(refused.message().rfind("no CURVE key: give --key FILE", 0), 0u) << refused.message();
  ASSERT_TRUE(SetUpQueryContext({}, false, &zmq, &context).ok());
  EXPECT_FALSE(context.curve.keyed());
  EXPECT_EQ(SetUpQueryContext({"a.key", "", false}, false, &zmq, &context).message(),
            "--server-key is missing: a CURVE client needs its own .key and the aggregators' "
            ".pub");
}

}  // namespace
}  // namespace trailmap
