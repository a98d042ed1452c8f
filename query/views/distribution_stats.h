// Distribution statistics of a histogram that describe its shape rather than its position:
// coefficient of variation, skewness, kurtosis and the bimodality coefficient. The trails and
// columns views sort hosts by them, and stats can show them; they are defined once, here.
//
// Every moment is taken over the bucket midpoints (core/histogram.h), each weighted by its
// bucket's count: exact below 128, within 0.8% of every value in the bucket above. Moments are
// population moments (divided by n, not n - 1), centred on the midpoint mean:
//
//   mean       = Σ c·m / n
//   variance   = Σ c·(m - mean)² / n                 stddev = √variance
//   cov        = stddev / mean                        (0 when mean is 0)
//   skewness   = (Σ c·(m - mean)³ / n) / stddev³
//   kurtosis   = (Σ c·(m - mean)⁴ / n) / stddev⁴      (not excess: a normal distribution has 3)
//   bimodality = (skewness² + 1) / kurtosis           (Sarle's bimodality coefficient)
//
// The bimodality coefficient is 1/3 for a normal distribution, 5/9 (0.556) for a uniform one and
// reaches 1 for two equal spikes; above 5/9 suggests two modes. It is the population form: the
// sample-size correction matters below ~100 values, and a host with so few events in a trail is
// not worth ranking by shape.
//
// Degenerate cases: an empty histogram has every field 0; a histogram whose events all fall in
// one bucket has stddev 0, and then cov, skewness, kurtosis and bimodality are all 0 (a spike
// has no shape to rank by; 0 sorts it last among the "largest first" orders).
//
// Pure functions; value types.
#pragma once

#include <cstdint>

#include "core/histogram.h"

namespace trailmap {

struct DistributionStats {
  uint64_t count = 0;
  double mean = 0;  // of the bucket midpoints; within 0.8% of the exact mean
  double stddev = 0;
  double cov = 0;
  double skewness = 0;
  double kurtosis = 0;
  double bimodality = 0;
};

DistributionStats ComputeDistributionStats(const Histogram& histogram);

}  // namespace trailmap
