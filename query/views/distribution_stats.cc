#include "query/views/distribution_stats.h"

#include <cmath>

#include "core/bucket_spans.h"

namespace trailmap {

DistributionStats ComputeDistributionStats(const Histogram& histogram) {
  DistributionStats s;
  s.count = histogram.count();
  if (s.count == 0) return s;
  const double n = static_cast<double>(s.count);

  // Two passes: the mean first, then the central moments, which keeps the sums well
  // conditioned when the values are large (ns) and the spread small.
  const BucketSpan* spans = BucketSpans();
  double sum = 0;
  histogram.ForEachBucket([&sum, spans](uint32_t index, uint64_t count) {
    sum += spans[index].midpoint * static_cast<double>(count);
  });
  s.mean = sum / n;

  double m2 = 0, m3 = 0, m4 = 0;
  const double mean = s.mean;
  histogram.ForEachBucket([&m2, &m3, &m4, mean, spans](uint32_t index, uint64_t count) {
    const double d = spans[index].midpoint - mean;
    const double c = static_cast<double>(count);
    const double d2 = d * d;
    m2 += c * d2;
    m3 += c * d2 * d;
    m4 += c * d2 * d2;
  });
  m2 /= n;
  m3 /= n;
  m4 /= n;
  if (!(m2 > 0)) return s;  // one bucket: a spike has no shape

  s.stddev = std::sqrt(m2);
  s.cov = s.mean > 0 ? s.stddev / s.mean : 0;
  s.skewness = m3 / (m2 * s.stddev);
  s.kurtosis = m4 / (m2 * m2);
  s.bimodality = s.kurtosis > 0 ? (s.skewness * s.skewness + 1) / s.kurtosis : 0;
  return s;
}

}  // namespace trailmap
