// OscillationMeter: the frequency of a periodic signal (e.g. the wake's transverse velocity),
// from its upward mean-crossings, interpolated linearly between samples.
#pragma once

#include <optional>
#include <vector>

namespace lp::cfd {

class OscillationMeter {
 public:
  struct Result {
    double frequency;       // cycles per unit of time
    double period_spread;   // (longest - shortest period) / mean period: 0 for a clean oscillation
    int periods;            // complete periods measured
    double amplitude;       // half the peak-to-peak swing
  };

  void add(double time, double value);
  // Frequency over all samples, or nothing if fewer than `min_periods` complete periods were seen.
  std::optional<Result> measure(int min_periods = 3) const;
  void clear();

 private:
  std::vector<double> times_;
  std::vector<double> values_;
};

}  // namespace lp::cfd
