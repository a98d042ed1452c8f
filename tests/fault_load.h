// What the fault tests (tests/*fault*_system_test.cc) share: a statsd load whose every event is
// counted, the total the aggregators hold, and the counters an agent logged when it stopped.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/cluster.h"

namespace trailmap::test {

// Sends `n` statsd timings of `metric` to 127.0.0.1:port, 20 lines a packet.
void SendEvents(int port, const std::string& metric, size_t n);

// Sleeps until the wall clock is `ms` into a second (the next time it is).
void SleepUntilMsOfSecond(int ms);

// How many events of `metric` the aggregators hold (last hour); nullopt if the query failed.
std::optional<uint64_t> StoredCount(const std::vector<std::unique_ptr<Aggregator>>& aggregators,
                                    const std::string& metric);

// Waits (up to `timeout`) until StoredCount is `want`; returns the last count seen.
uint64_t WaitForCount(const std::vector<std::unique_ptr<Aggregator>>& aggregators,
                      const std::string& metric, uint64_t want, std::chrono::milliseconds timeout);

// The value of " NAME=" in the last line of `log` that has it (an agent's counters line);
// -1 when no line has it.
int64_t LoggedCounter(const std::string& log, const std::string& name);

}  // namespace trailmap::test
