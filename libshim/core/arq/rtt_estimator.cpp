#include "arq/rtt_estimator.h"

#include <algorithm>
#include <cmath>

namespace lp {

RttEstimator::RttEstimator(const ArqConfig& config)
    : initial_rto_(config.initial_rto),
      min_rto_(config.min_rto),
      max_rto_(config.max_rto),
      granularity_(config.clock_granularity),
      margin_(config.min_rto_margin),
      backoff_factor_(config.backoff_factor) {}

void RttEstimator::add_sample(ArqDuration rtt) {
  rtt = std::max(rtt, ArqDuration::zero());
  if (samples_ == 0) {  // RFC 6298 (2.2)
    srtt_ = rtt;
    rttvar_ = rtt / 2;
  } else {  // RFC 6298 (2.3): RTTVAR first, with the old SRTT
    const auto deviation = srtt_ > rtt ? srtt_ - rtt : rtt - srtt_;
    rttvar_ = ArqDuration(std::llround((1 - kRttvarGain) * rttvar_.count() + kRttvarGain * deviation.count()));
    srtt_ = ArqDuration(std::llround((1 - kSrttGain) * srtt_.count() + kSrttGain * rtt.count()));
  }
  ++samples_;
  reset_back_off();
}

void RttEstimator::back_off() {
  // Stop growing once at the ceiling so the multiplier cannot overflow after many expiries.
  if (rto() < max_rto_) backoff_multiplier_ *= backoff_factor_;
}

ArqDuration RttEstimator::base_rto() const {
  if (samples_ == 0) return initial_rto_;
  return srtt_ + std::max({granularity_, kRttvarFactor * rttvar_, margin_});
}

ArqDuration RttEstimator::rto() const {
  const double backed_off = static_cast<double>(base_rto().count()) * backoff_multiplier_;
  const double ceiling = static_cast<double>(max_rto_.count());
  const auto rto = ArqDuration(static_cast<ArqDuration::rep>(std::min(backed_off, ceiling)));
  return std::clamp(rto, min_rto_, max_rto_);
}

}  // namespace lp
