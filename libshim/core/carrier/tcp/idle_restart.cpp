#include "carrier/tcp/idle_restart.h"

#include <algorithm>

namespace lp {
namespace {

// TCP_INFO's idle time is in milliseconds counted in jiffies (up to 10 ms at HZ = 100), and the
// write follows the read by microseconds: a pause within this margin of the RTO is taken for one
// past it. Predicting a restart that does not happen only spills a little more; missing one costs
// a round trip.
constexpr std::uint64_t kRestartPredictionMarginMs = 10;
// bbr_high_gain (2/ln 2, net/ipv4/tcp_bbr.c) less its 1 % pacing margin (bbr_pacing_margin_percent).
constexpr double kBbrInitialPacingGain = 2.885 * 0.99;

}  // namespace

std::uint32_t window_after_idle(std::uint32_t cwnd, std::uint64_t idle_ms, std::uint64_t rto_ms) {
  rto_ms = std::max<std::uint64_t>(rto_ms, 1);
  const std::uint32_t restart_window = std::min(kLinuxInitialWindow, cwnd);
  std::uint32_t window = cwnd;
  // As tcp_cwnd_restart(): while ((delta -= rto) > 0 && cwnd > restart_cwnd) cwnd >>= 1;
  for (std::uint64_t left = idle_ms; left > rto_ms && window > restart_window; left -= rto_ms) window /= 2;
  return std::max(window, restart_window);
}

StreamWindow window_for_next_write(const TcpWindowSample& sample, bool restarts_after_idle) {
  std::uint32_t cwnd = sample.cwnd_segments;
  if (restarts_after_idle && sample.unacked_segments == 0) {
    cwnd = window_after_idle(cwnd, std::uint64_t{sample.last_data_sent_ms} + kRestartPredictionMarginMs,
                             sample.rto_us / 1000);
  }
  StreamWindow out;
  out.known = true;
  out.window = std::size_t{cwnd} * sample.mss;
  out.round_trip_window = out.window;
  const bool pacing_known = sample.pacing_rate != 0 && sample.pacing_rate != ~std::uint64_t{0} && sample.srtt_us != 0;
  if (sample.paced && pacing_known) {
    const double soon = static_cast<double>(sample.pacing_rate) * sample.srtt_us / 1e6 * kPacedRoomRttShare;
    const std::size_t in_flight = std::size_t{sample.unacked_segments} * sample.mss;
    out.window = std::min(out.window, in_flight + static_cast<std::size_t>(soon));
  }
  out.in_flight = std::size_t{sample.unacked_segments} * sample.mss;
  out.not_sent = sample.not_sent_bytes;
  return out;
}

bool congestion_restarts_after_idle(const std::string& congestion) { return !congestion_paces_itself(congestion); }

std::uint64_t bbr_initial_pacing_rate(std::uint32_t cwnd_segments, std::uint32_t mss, std::uint32_t srtt_us) {
  if (srtt_us == 0) return 0;
  return static_cast<std::uint64_t>(kBbrInitialPacingGain * cwnd_segments * mss * 1e6 / srtt_us);
}

bool congestion_paces_itself(const std::string& congestion) {
  return kernel_congestion_kind(congestion) == CongestionKind::kKernelBbr;
}

std::string resolve_congestion(const std::string& configured, bool host_restarts_idle, bool send_buffer_fixed) {
  if (configured != kAutoCongestion) return configured;
  return kernel_congestion_name(!host_restarts_idle && send_buffer_fixed ? CongestionKind::kKernelCubic
                                                                          : CongestionKind::kKernelBbr);
}

bool large_frames_need_pacing(const std::string& congestion, bool small_frames) {
  return !small_frames && !congestion_paces_itself(congestion);
}

}  // namespace lp
