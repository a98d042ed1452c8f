// StoredEvents: how many events of a latency or size metric one aggregator holds over the last
// `seconds`, asked directly on its query socket (one histogram query, one column), without the
// CLI. For system tests that talk to a single aggregator. Not thread-safe; blocks up to 30 s.
#pragma once

#include <cstdint>
#include <string>

namespace trailmap::test {

// 0 when the aggregator does not answer (and a gtest failure when it answers with an error).
uint64_t StoredEvents(const std::string& query_endpoint, const std::string& metric,
                      int64_t seconds);

}  // namespace trailmap::test
