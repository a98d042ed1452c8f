// The aggregator's TOML config (aggregator/server/aggregator_config.h ParseAggregatorConfig, then
// ValidateAggregatorConfig): any text. Property: a refusal says why; a retention that parses
// formats back to the same number of seconds.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "aggregator/server/aggregator_config.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  trailmap::aggregator::AggregatorConfig config;
  trailmap::Status s = trailmap::aggregator::ParseAggregatorConfig(text, "fuzz.toml", &config);
  if (s.ok()) s = trailmap::aggregator::ValidateAggregatorConfig(config);
  FUZZ_CHECK(s.ok() || !s.message().empty());
  // The retention syntax alone, on the text as one value.
  trailmap::Result<int64_t> seconds = trailmap::aggregator::ParseRetention(text);
  if (seconds.ok()) {
    trailmap::Result<int64_t> back =
        trailmap::aggregator::ParseRetention(trailmap::aggregator::FormatRetention(*seconds));
    FUZZ_CHECK(back.ok() && *back == *seconds, "retention %lld does not format back",
               static_cast<long long>(*seconds));
  }
  return 0;
}
