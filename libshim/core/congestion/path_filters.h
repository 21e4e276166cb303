// The two filters a model-based controller keeps of its path (BBR's): the minimum RTT, with RFC
// 6298's smoothing beside it, and the bottleneck rate as the largest sample of the last rounds.
// Pure.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "arq/arq_types.h"

namespace lp {

class RttFilter {
 public:
  void on_sample(ArqTime now, ArqDuration rtt) {
    if (!smoothed_) {
      smoothed_ = rtt;
      deviation_ = rtt / 2;
    } else {
      const ArqDuration error = rtt > *smoothed_ ? rtt - *smoothed_ : *smoothed_ - rtt;
      deviation_ = (3 * deviation_ + error) / 4;
      smoothed_ = (7 * *smoothed_ + rtt) / 8;
    }
    if (!min_ || rtt <= *min_) {
      min_ = rtt;
      min_stamp_ = now;
    }
  }
  // At a round's end: a minimum not seen again for `window` gives way to the round's smallest
  // (the path itself got longer). Idle time does not count, since no round ends without ACKs.
  void expire(ArqTime now, std::optional<ArqDuration> round_min, ArqDuration window) {
    if (!min_ || !round_min || now - min_stamp_ <= window) return;
    min_ = round_min;
    min_stamp_ = now;
  }
  std::optional<ArqDuration> min() const { return min_; }
  std::optional<ArqDuration> smoothed() const { return smoothed_; }
  ArqDuration deviation() const { return deviation_; }

 private:
  std::optional<ArqDuration> min_, smoothed_;
  ArqDuration deviation_{0};
  ArqTime min_stamp_{};
};

// The largest rate sample of the last kRounds counted rounds (the caller decides which rounds count).
class MaxRateFilter {
 public:
  static constexpr std::size_t kRounds = 10;
  double max() const { return *std::max_element(ring_.begin(), ring_.end()); }
  double current() const { return ring_[round_ % kRounds]; }
  void offer(double rate) { ring_[round_ % kRounds] = std::max(current(), rate); }
  // A counted round ended: the oldest one's sample goes.
  void advance() { ring_[++round_ % kRounds] = 0; }
  // Forgets every sample; `rate` is this round's, or (next_round) the next one's until that ends.
  void reset(double rate, bool next_round = false) {
    ring_.fill(0);
    ring_[(round_ + next_round) % kRounds] = rate;
  }

 private:
  std::array<double, kRounds> ring_{};
  std::uint64_t round_ = 0;
};

}  // namespace lp
