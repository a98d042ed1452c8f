// Reading one sample of a Prometheus text exposition, for system tests that scrape /metrics.
#pragma once

#include <string>

namespace trailmap::test {

// The value of the sample `series` (name and labels, exactly as exposed) in `text`; -1 if absent.
inline double PrometheusSample(const std::string& text, const std::string& series) {
  const std::string prefix = "\n" + series + " ";
  const size_t at = ("\n" + text).find(prefix);
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + prefix.size() - 1));
}

}  // namespace trailmap::test
