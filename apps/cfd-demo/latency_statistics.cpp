#include "latency_statistics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace lp::cfd {

double LatencyStatistics::mean() const {
  return samples_.empty() ? 0.0 : std::accumulate(samples_.begin(), samples_.end(), 0.0) / samples_.size();
}

double LatencyStatistics::min() const {
  return samples_.empty() ? 0.0 : *std::min_element(samples_.begin(), samples_.end());
}

double LatencyStatistics::max() const {
  return samples_.empty() ? 0.0 : *std::max_element(samples_.begin(), samples_.end());
}

double LatencyStatistics::quantile(double q) const {
  if (samples_.empty()) return 0.0;
  std::vector<double> sorted = samples_;
  std::sort(sorted.begin(), sorted.end());
  const double rank = std::ceil(std::clamp(q, 0.0, 1.0) * sorted.size());
  return sorted[static_cast<size_t>(std::max(1.0, rank)) - 1];
}

}  // namespace lp::cfd
