// RttEstimator: RFC 6298 smoothed round-trip time and retransmission timeout, with exponential
// back-off. Pure arithmetic on the samples it is given; Karn's rule (no samples from retransmitted
// messages) is the caller's job.
#pragma once

#include "arq/arq_types.h"

namespace lp {

class RttEstimator {
 public:
  explicit RttEstimator(const ArqConfig& config);

  // One round-trip measurement. Also ends any back-off (Karn: a fresh sample means the path works).
  void add_sample(ArqDuration rtt);
  // A retransmission timer expired: RTO *= backoff_factor, up to max_rto.
  void back_off();
  // Something new was acknowledged: back to the un-backed-off RTO.
  void reset_back_off() { backoff_multiplier_ = 1.0; }

  bool has_sample() const { return samples_ > 0; }
  std::uint64_t samples() const { return samples_; }
  ArqDuration srtt() const { return srtt_; }
  ArqDuration rttvar() const { return rttvar_; }
  // The timeout to arm now: base RTO times the back-off, within [min_rto, max_rto].
  ArqDuration rto() const;

 private:
  // RFC 6298 (2.3) gains: alpha = 1/8, beta = 1/4, K = 4.
  static constexpr double kSrttGain = 1.0 / 8;
  static constexpr double kRttvarGain = 1.0 / 4;
  static constexpr int kRttvarFactor = 4;

  ArqDuration base_rto() const;

  ArqDuration initial_rto_, min_rto_, max_rto_, granularity_, margin_;
  double backoff_factor_;
  double backoff_multiplier_ = 1.0;
  std::uint64_t samples_ = 0;
  ArqDuration srtt_{0};
  ArqDuration rttvar_{0};
};

}  // namespace lp
