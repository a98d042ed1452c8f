#include "net/endpoint.h"

#include <gtest/gtest.h>

namespace trailmap {
namespace {

using List = std::vector<std::string>;

TEST(Endpoint, ParsesListsWithDefaultPorts) {
  EXPECT_EQ(*ParseEndpointList("10.0.0.1:9000,db-2", 7401),
            (List{"tcp://10.0.0.1:9000", "tcp://db-2:7401"}));
  EXPECT_EQ(*ParseEndpointList("tcp://a:1", 7401), List{"tcp://a:1"});
  EXPECT_FALSE(ParseEndpointList("a:,b", 7401).ok());
  EXPECT_FALSE(ParseEndpointList("a:99999", 7401).ok());
  EXPECT_FALSE(ParseEndpointList("a,,b", 7401).ok());
  EXPECT_FALSE(ParseEndpointList(":7401", 7401).ok());
}

}  // namespace
}  // namespace trailmap
