// The words the views' renderers write alike: counts with thousands separators, spans of time,
// what a view counts and its rate, ordinals. The heat map's own words are render/heatmap_text.h.
// Pure functions; no state.
#pragma once

#include <cstdint>
#include <string>

#include "core/batch.h"

namespace trailmap {

// 1234567 → "1,234,567".
std::string FormatCount(uint64_t n);
// A duration in whole seconds for people: 45 → "45s", 300 → "5m", 5400 → "1h30m", 90000 → "1d1h".
std::string FormatSpan(int64_t seconds);

// What a view counts: "events" of a latency or size metric, "host-seconds" of a scalar (each
// stored host-second is one sample, aggregator/scan/scalar_query.h); singular when n == 1.
std::string CountNoun(MetricKind kind, uint64_t n);
// The side panel's heading: "events/s", or "hosts" for a scalar (host-seconds per second).
const char* RateHeading(MetricKind kind);
// After a rate: "/s", or " hosts" for a scalar.
const char* RateSuffix(MetricKind kind);

// An average rate for the side panel: "0.03", "4.5", "2,006" (events per second).
std::string FormatRate(double per_second);
// "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", ...
std::string Ordinal(uint64_t n);

}  // namespace trailmap
