#include "oscillation_meter.h"

#include <algorithm>
#include <numeric>

namespace lp::cfd {

void OscillationMeter::add(double time, double value) {
  times_.push_back(time);
  values_.push_back(value);
}

void OscillationMeter::clear() {
  times_.clear();
  values_.clear();
}

std::optional<OscillationMeter::Result> OscillationMeter::measure(int min_periods) const {
  if (values_.size() < 3) return std::nullopt;
  const double mean = std::accumulate(values_.begin(), values_.end(), 0.0) / values_.size();
  std::vector<double> crossings;  // times of upward crossings of the mean
  for (size_t i = 1; i < values_.size(); ++i) {
    const double a = values_[i - 1] - mean, b = values_[i] - mean;
    if (a < 0.0 && b >= 0.0) crossings.push_back(times_[i - 1] + (times_[i] - times_[i - 1]) * (-a / (b - a)));
  }
  const int periods = static_cast<int>(crossings.size()) - 1;
  if (periods < std::max(1, min_periods)) return std::nullopt;
  double shortest = crossings[1] - crossings[0], longest = shortest;
  for (size_t i = 2; i < crossings.size(); ++i) {
    shortest = std::min(shortest, crossings[i] - crossings[i - 1]);
    longest = std::max(longest, crossings[i] - crossings[i - 1]);
  }
  const double mean_period = (crossings.back() - crossings.front()) / periods;
  const auto [low, high] = std::minmax_element(values_.begin(), values_.end());
  return Result{1.0 / mean_period, (longest - shortest) / mean_period, periods, 0.5 * (*high - *low)};
}

}  // namespace lp::cfd
