// LatencyStatistics: summary of a set of durations (count, mean, median, 95th percentile, extremes).
#pragma once

#include <cstddef>
#include <vector>

namespace lp::cfd {

class LatencyStatistics {
 public:
  void add(double milliseconds) { samples_.push_back(milliseconds); }
  size_t count() const { return samples_.size(); }
  double mean() const;
  double min() const;
  double max() const;
  // q in [0, 1], nearest-rank; 0 when there are no samples.
  double quantile(double q) const;
  double median() const { return quantile(0.5); }

 private:
  std::vector<double> samples_;
};

}  // namespace lp::cfd
