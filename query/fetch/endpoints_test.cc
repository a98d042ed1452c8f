#include "query/fetch/endpoints.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

namespace trailmap {
namespace {

using List = std::vector<std::string>;

TEST(Endpoints, FlagThenEnvironmentThenConfigThenDefault) {
  const std::string path = testing::TempDir() + "/trailmap_endpoints_test.toml";
  {
    std::ofstream f(path);
    f << "aggregators = [\"q1:7401\", \"q2:7401\"]\ningest = [\"i1\", \"i2\"]\n";
  }
  EndpointSources s;
  s.config_path = path;
  EXPECT_EQ(*ResolveEndpoints(EndpointKind::kQuery, s), (List{"tcp://q1:7401", "tcp://q2:7401"}));
  EXPECT_EQ(*ResolveEndpoints(EndpointKind::kIngest, s), (List{"tcp://i1:7400", "tcp://i2:7400"}));
  s.env_list = "env:1";
  EXPECT_EQ(*ResolveEndpoints(EndpointKind::kQuery, s), List{"tcp://env:1"});
  s.flag = "flag";
  EXPECT_EQ(*ResolveEndpoints(EndpointKind::kQuery, s), List{"tcp://flag:7401"});

  EndpointSources none;
  none.home = "/nonexistent-home";
  EXPECT_EQ(*ResolveEndpoints(EndpointKind::kQuery, none), List{"tcp://127.0.0.1:7401"});
  EXPECT_EQ(*ResolveEndpoints(EndpointKind::kIngest, none), List{"tcp://127.0.0.1:7400"});

  EndpointSources missing;
  missing.config_path = "/nonexistent/trailmap.toml";
  EXPECT_FALSE(ResolveEndpoints(EndpointKind::kQuery, missing).ok());
  std::remove(path.c_str());
}

}  // namespace
}  // namespace trailmap
