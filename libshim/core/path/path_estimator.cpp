#include "path/path_estimator.h"

#include <algorithm>
#include <cmath>

namespace lp {

using std::chrono::microseconds;

PathEstimator::PathEstimator(std::optional<Duration> rtt_hint, std::optional<double> rate_cap_bytes_per_second)
    : rtt_hint_(rtt_hint), rate_cap_(rate_cap_bytes_per_second) {}

void PathEstimator::on_handshake_rtt(Duration rtt) {
  rtt = std::max(rtt, PathTuning::kMinimumRtt);
  handshake_rtt_ = handshake_rtt_ ? std::min(*handshake_rtt_, rtt) : rtt;
}

void PathEstimator::on_rtt(Duration smoothed, Duration minimum) {
  if (smoothed.count() > 0) smoothed_rtt_ = smoothed;
  if (minimum.count() > 0) kernel_min_rtt_ = kernel_min_rtt_ ? std::min(*kernel_min_rtt_, minimum) : minimum;
}

void PathEstimator::on_delivery_rate(double bytes_per_second, bool app_limited) {
  if (!(bytes_per_second > 0) || !std::isfinite(bytes_per_second)) return;
  if (bytes_per_second > max_rate_) max_rate_ = bytes_per_second;
  if (app_limited || pipe_full_) return;  // only a sender with more to send can show the pipe is full
  const auto minimum = min_rtt();
  const bool queueing = smoothed_rtt_ && minimum &&
                        static_cast<double>(smoothed_rtt_->count()) >=
                            PathTuning::kQueueRttFactor * static_cast<double>(minimum->count());
  if (max_rate_ >= full_pipe_baseline_ * PathTuning::kFullPipeGrowth) {
    full_pipe_baseline_ = max_rate_;
    rounds_without_growth_ = 0;
    return;
  }
  if (queueing && ++rounds_without_growth_ >= PathTuning::kFullPipeRounds) pipe_full_ = true;
}

void PathEstimator::on_congestion_window(std::uint32_t segments, std::uint32_t mss) {
  max_cwnd_ = std::max(max_cwnd_, segments);
  (void)mss;  // kept in the interface: a window in bytes is what a datagram carrier would report
}

std::chrono::milliseconds PathEstimator::sample_interval() const {
  const auto round_trip = rtt();
  if (pipe_full_ || !round_trip) return PathTuning::kSampleInterval;
  return std::clamp(std::chrono::duration_cast<std::chrono::milliseconds>(*round_trip), PathTuning::kMinSampleInterval,
                    PathTuning::kSampleInterval);
}

bool validate_warm_start(const PathSnapshot& cached, microseconds handshake_rtt) {
  if (cached.min_rtt.count() <= 0 || handshake_rtt.count() <= 0) return false;
  const double cached_us = static_cast<double>(cached.min_rtt.count());
  const double slack = std::max(cached_us * PathTuning::kWarmStartRttTolerance,
                                static_cast<double>(PathTuning::kWarmStartRttSlack.count()));
  return std::abs(static_cast<double>(handshake_rtt.count()) - cached_us) <= slack;
}

bool PathEstimator::offer_warm_start(const PathSnapshot& cached) {
  if (!handshake_rtt_ || !validate_warm_start(cached, *handshake_rtt_)) return false;
  warm_start_ = cached;
  return true;
}

std::optional<PathEstimator::Duration> PathEstimator::min_rtt() const {
  if (kernel_min_rtt_ && handshake_rtt_) return std::min(*kernel_min_rtt_, *handshake_rtt_);
  return kernel_min_rtt_ ? kernel_min_rtt_ : handshake_rtt_;
}

std::optional<PathEstimator::Duration> PathEstimator::rtt() const {
  if (auto measured = min_rtt()) return measured;
  return rtt_hint_;
}

double PathEstimator::rate_bytes_per_second() const {
  double rate = max_rate_;
  // Until this session has filled the pipe itself, a validated warm start knows better.
  if (warm_start_ && !pipe_full_) rate = std::max(rate, warm_start_->rate_bytes_per_second);
  if (rate_cap_) rate = rate > 0 ? std::min(rate, *rate_cap_) : *rate_cap_;
  return rate;
}

double PathEstimator::bdp_bytes() const {
  const auto round_trip = rtt();
  if (!round_trip) return 0;
  return rate_bytes_per_second() * static_cast<double>(round_trip->count()) / 1e6;
}

BufferPlan PathEstimator::buffers(std::size_t current_send, std::size_t current_receive, std::size_t autotune_send,
                                  std::size_t autotune_receive, double stand_in_rate_bytes_per_second) const {
  BufferPlan plan;
  auto at_least_floor = [](double bytes) {
    return std::max(static_cast<std::size_t>(bytes), PathTuning::kMinimumBuffer);
  };
  const double bdp = bdp_bytes();
  const auto round_trip = rtt();
  // A long path's send buffer is ours from the first RTT sample on (kBurstSendBuffer says why).
  const bool managed = round_trip && *round_trip >= PathTuning::kManagedSendRtt;
  const double floor = managed ? static_cast<double>(PathTuning::kBurstSendBuffer) : 0.0;
  if (!pipe_full_) {
    // Growing: kGrowthHeadroom x the BDP measured so far lets the window double before the next
    // sample; raised only, and on a short path only where autotuning stops.
    const double seconds = round_trip ? static_cast<double>(round_trip->count()) / 1e6 : 0.0;
    const double growth_bdp = rate_bytes_per_second() > stand_in_rate_bytes_per_second
                                  ? PathTuning::kGrowthHeadroom * bdp
                                  : stand_in_rate_bytes_per_second * seconds;
    const std::size_t wanted = at_least_floor(std::max(floor, PathTuning::kSendBufferBdps * growth_bdp));
    if ((managed || bdp > 0) && wanted > std::max(current_send, managed ? 0 : autotune_send)) plan.send = wanted;
  } else {
    // Full: about one BDP in flight, so that no sender overfills the bottleneck's queue; on a short
    // path below the autotuning limit that is the kernel's own business unless we set it before.
    const std::size_t wanted =
        std::max(at_least_floor(std::max(floor, PathTuning::kSendBufferBdps * bdp)), managed ? 0 : autotune_send);
    if (current_send != 0 ? wanted != current_send : (managed || wanted > autotune_send)) plan.send = wanted;
  }
  if (!(bdp > 0)) return plan;  // no rate yet: receive autotuning carries on
  const std::size_t wanted_receive = at_least_floor(PathTuning::kReceiveBufferBdps * bdp);
  if (wanted_receive > std::max(current_receive, autotune_receive)) plan.receive = wanted_receive;
  return plan;
}

BufferPlan PathEstimator::buffers_above_stand_in(std::size_t current_send, std::size_t current_receive,
                                                 std::size_t stand_in_send, std::size_t stand_in_receive,
                                                 double stand_in_rate_bytes_per_second) const {
  BufferPlan plan;
  const auto round_trip = rtt();
  if (!round_trip) return plan;
  // No faster than the stand-in: its buffers carry the path.
  const double overtaking_rate = PathTuning::kStandInOvertake * stand_in_rate_bytes_per_second;
  if (rate_bytes_per_second() > overtaking_rate) {
    const double send_bdps =
        pipe_full_ ? PathTuning::kSendBufferBdps : PathTuning::kGrowthHeadroom * PathTuning::kSendBufferBdps;
    const std::size_t wanted_send = std::max(stand_in_send, static_cast<std::size_t>(send_bdps * bdp_bytes()));
    // Growing: raised only; full: settles, down as well, but never below the stand-in's.
    if (pipe_full_ ? wanted_send != current_send : wanted_send > current_send) plan.send = wanted_send;
  }
  // The window bounds what arrives per round trip; a buffer of kReceiveBufferBdps x that lets it grow.
  const double received = static_cast<double>(max_received_per_rtt_);
  if (received > overtaking_rate * static_cast<double>(round_trip->count()) / 1e6) {
    const std::size_t wanted_receive =
        std::max(stand_in_receive, static_cast<std::size_t>(PathTuning::kReceiveBufferBdps * received));
    if (wanted_receive > current_receive) plan.receive = wanted_receive;
  }
  return plan;
}

double PathEstimator::judged_bdp_bytes(double stand_in_rate_bytes_per_second, Duration stand_in_rtt) const {
  const double seconds = static_cast<double>(rtt().value_or(stand_in_rtt).count()) / 1e6;
  const double rate = pipe_full_ ? rate_bytes_per_second()
                                 : std::max(rate_bytes_per_second(), stand_in_rate_bytes_per_second);
  return rate * seconds;
}

void PathEstimator::on_segments(std::uint64_t sent, std::uint64_t retransmitted, bool queue_standing) {
  if (queue_standing) return;
  clean_segments_ += sent;
  clean_retransmits_ += retransmitted;
}

std::int64_t PathEstimator::loss_ppm() const {
  if (clean_segments_ < kMinLossSegments) return -1;
  return static_cast<std::int64_t>(clean_retransmits_ * 1'000'000 / clean_segments_);
}

std::optional<PathSnapshot> PathEstimator::snapshot(std::size_t send_buffer, std::size_t receive_buffer) const {
  const auto minimum = min_rtt();
  if (!minimum) return std::nullopt;
  PathSnapshot out;
  out.min_rtt = *minimum;
  // Only what this session measured itself goes back into the cache: a warm start's rate is
  // passed on only while nothing contradicts it.
  out.rate_bytes_per_second = max_rate_ > 0 ? max_rate_ : (warm_start_ ? warm_start_->rate_bytes_per_second : 0);
  if (rate_cap_ && out.rate_bytes_per_second > *rate_cap_) out.rate_bytes_per_second = *rate_cap_;
  out.congestion_window = max_cwnd_;
  out.send_buffer = send_buffer;
  out.receive_buffer = receive_buffer;
  out.loss_ppm = loss_ppm();
  out.rate_is_lower_bound = !pipe_full_;
  return out;
}

microseconds coalesce_delay(std::size_t pending_bytes, std::uint32_t mss, std::uint32_t unacked,
                            std::uint32_t congestion_window, std::optional<microseconds> rtt) {
  if (!rtt || mss == 0 || congestion_window == 0 || pending_bytes >= mss) return microseconds(0);
  // Nothing in flight: the first message of a burst goes at once (no latency for a lone message).
  // A full window: the kernel queues and coalesces the write itself.
  if (unacked == 0 || unacked >= congestion_window) return microseconds(0);
  const auto fraction = microseconds(static_cast<std::int64_t>(static_cast<double>(rtt->count()) *
                                                               PathTuning::kCoalesceRttFraction));
  return std::min(PathTuning::kMaxCoalesceDelay, fraction);
}

}  // namespace lp
