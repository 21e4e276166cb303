// PathEstimator: what a session has measured about its path, and the socket buffer sizes that
// follow from it. Pure: the driver feeds it samples with the time (a fake clock in tests) and
// applies the sizes it asks for.
//
//   round trip: the handshake's frames (a sample before any data: connect, HELLO -> CHALLENGE,
//               CHALLENGE -> AUTH), then TCP_INFO's min_rtt / srtt and the ARQ's RFC 6298 SRTT.
//   rate:       delivery-rate samples (TCP_INFO tcpi_delivery_rate: bytes acknowledged over the
//               time they took). A sample taken while the sender was application-limited only
//               counts when it raises the estimate (it shows at least that much; BBR's rule).
//   buffers:    left to the kernel's autotuning until it would stop (tcp_wmem / tcp_rmem maximum);
//               beyond, sized from the measured BDP (buffers(), the constants below say why).
//   warm start: a cached entry (path_cache.h) is used only when the handshake's round trip agrees
//               with the cached minimum (validate_warm_start), and only until the first
//               full-pipe measurement replaces it.
// LONGPIPE_RTT / LONGPIPE_BANDWIDTH, when set, are hints and caps: the RTT before the first
// sample, and an upper bound of the rate.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace lp {

// Decision constants (each says why).
struct PathTuning {
  // A round trip under this is a loopback or LAN path: the buffer floor covers it.
  static constexpr std::chrono::microseconds kMinimumRtt{100};
  // Socket buffers are never sized below this (Linux's own receive default is 128 KiB).
  static constexpr std::size_t kMinimumBuffer = 64u << 10;
  // The kernel doubles a requested send buffer for bookkeeping: 0.7 BDP requested lets about one
  // BDP be in flight (config.cpp says why).
  static constexpr double kSendBufferBdps = 0.7;
  // The advertised window covers one BDP with room to spare (config.cpp).
  static constexpr double kReceiveBufferBdps = 2.0;
  // While the rate still grows, the send buffer allows this many times the BDP measured so far
  // (the window doubles per round trip in slow start, and samples come about once a round trip):
  // room to grow without letting a startup overshoot (bbr's 2.89 gain) fill a one-BDP queue many
  // times over, as a buffer sized from the congestion window does.
  // Below the stand-in rate (LONGPIPE_BANDWIDTH's default, 155 Mbit/s) the stand-in's BDP is used
  // instead: a collective's bursts both ways never make a queue that shows the pipe full, so the
  // growth size would stay and overfill a one-BDP queue (retransmissions, a switch to bbr).
  static constexpr double kGrowthHeadroom = 2.0;
  // By default (LONGPIPE_BANDWIDTH unset) the buffers are the stand-in rate's, set before connect,
  // and a measured rate raises them only once it exceeds the stand-in by this factor. A send buffer
  // of 0.7 x the stand-in's BDP lets about 1.4 BDP be in flight (the kernel doubles it, and bulk
  // skbs carry little overhead), so on a faster path its samples pass the stand-in while it limits
  // them, while a path at the stand-in's rate never shows it (samples count payload only). The
  // margin keeps samples a little above the stand-in from growing the buffer on a path no faster
  // than it, whose one-BDP queue a growth buffer could overfill.
  static constexpr double kStandInOvertake = 1.15;
  // BBR's full-pipe rule: the rate estimate grew by less than 25 % in 3 rounds of samples taken
  // while the sender was not application-limited.
  static constexpr double kFullPipeGrowth = 1.25;
  static constexpr int kFullPipeRounds = 3;
  // ... and only rounds in which a queue shows (smoothed RTT at least this much above the minimum)
  // count: a burst of small messages that ends is not application-limited while it lasts, yet its
  // rate stops growing for want of data, not of capacity. A bottleneck that is really full queues.
  static constexpr double kQueueRttFactor = 1.25;
  // On paths of at least kManagedSendRtt the send buffer is ours from the first sample on, never
  // below this: the engine hands a connection up to 1 MiB at once (StreamScheduler's output
  // high-water), and Linux's autotuning only grows a send buffer after a write finds it full, so a
  // burst larger than any before waits a round trip for it. Below kManagedSendRtt that costs
  // little and autotuning follows the window per ACK, faster than samples could.
  static constexpr std::size_t kBurstSendBuffer = 1u << 20;
  static constexpr std::chrono::milliseconds kManagedSendRtt{50};
  // A warm-start entry is trusted only if the handshake's round trip lies within this fraction of
  // the cached minimum (queueing on a busy path adds some; another route changes it by more) ...
  static constexpr double kWarmStartRttTolerance = 0.25;
  // ... or within this absolute slack (a few ms of scheduling on a loaded host at short RTTs).
  static constexpr std::chrono::microseconds kWarmStartRttSlack{3000};
  // While the rate still grows the driver samples a session every round trip (samples drive the
  // buffers), but not more often than kMinSampleInterval; otherwise every kSampleInterval (the
  // statistics' TCP_INFO refresh).
  static constexpr std::chrono::milliseconds kMinSampleInterval{50};
  static constexpr std::chrono::milliseconds kSampleInterval{500};
  // Small writes are held back at most this long to coalesce while a stream has data in flight
  // (coalesce_delay below), and never more than kCoalesceRttFraction of the path's RTT: on a LAN
  // the wait would cost more than the round trip it saves.
  static constexpr std::chrono::microseconds kMaxCoalesceDelay{1000};
  static constexpr double kCoalesceRttFraction = 0.01;
};

// What a session learnt about its path, as the warm-start cache stores it.
struct PathSnapshot {
  std::chrono::microseconds min_rtt{0};
  double rate_bytes_per_second = 0;  // 0 = not measured
  std::uint32_t congestion_window = 0;  // segments, the largest seen on a stream
  std::size_t send_buffer = 0;          // bytes requested
  std::size_t receive_buffer = 0;
  // TCP segments retransmitted per million sent while no queue stood (loss that congestion does
  // not explain: the carrier choice of LONGPIPE_CARRIER=auto, carrier_choice.h); -1 = not known.
  std::int64_t loss_ppm = -1;
  // The peer's LONGPIPE_CARRIER=auto verdict on this path, heard in a handshake (its carrier
  // offer): 1 datagrams, 0 tcp, -1 not heard (the peer was set to tcp or udp, or offered before
  // judging). The end that sends the bulk measures the path's rate; the other end only its replies'.
  int peer_verdict = -1;
  // The session never judged its pipe full (pipe_full()): its rate shows what it sent, a lower
  // bound of the path's (keep_known_rate in path_cache.h). Not stored in the file.
  bool rate_is_lower_bound = false;
};

// Socket buffer sizes wanted now (0 = leave the socket as it is).
struct BufferPlan {
  std::size_t send = 0;
  std::size_t receive = 0;
};

class PathEstimator {
 public:
  using Clock = std::chrono::steady_clock;
  using Duration = std::chrono::microseconds;

  // `rtt_hint` / `rate_cap`: LONGPIPE_RTT / LONGPIPE_BANDWIDTH (bytes/s) when set.
  PathEstimator(std::optional<Duration> rtt_hint, std::optional<double> rate_cap_bytes_per_second);

  // --- inputs ---
  // One round trip of a handshake (dial to connected, HELLO to CHALLENGE, CHALLENGE to AUTH).
  void on_handshake_rtt(Duration rtt);
  // A smoothed round trip (TCP_INFO srtt, the ARQ's SRTT) and the kernel's minimum (min_rtt).
  void on_rtt(Duration smoothed, Duration minimum);
  // A delivery-rate sample of one stream; `app_limited`: the sender had less to send than it may.
  void on_delivery_rate(double bytes_per_second, bool app_limited);
  // TCP segments a stream sent and retransmitted since the last sample, and whether a queue stood
  // then (smoothed RTT at least kQueueRttRatio x the minimum): only samples without one count
  // towards loss_ppm() (a full queue's drops are congestion, which every flow answers alike).
  void on_segments(std::uint64_t sent, std::uint64_t retransmitted, bool queue_standing);
  // Retransmitted per million sent without a queue, once kMinLossSegments were sent so; -1 before.
  std::int64_t loss_ppm() const;
  static constexpr std::uint64_t kMinLossSegments = 5000;  // a 1 % estimate within about 0.3 %
  static constexpr double kQueueRttRatio = 1.25;           // the full-pipe rule's queue test (above)
  // The most bytes a stream's receiving end took in one round trip (TCP_INFO tcpi_rcv_space): the
  // peer's sending rate as this end sees it; the receive buffer follows it (buffers_above_stand_in).
  void on_received_per_rtt(std::size_t bytes) { max_received_per_rtt_ = std::max(max_received_per_rtt_, bytes); }
  std::size_t max_received_per_rtt() const { return max_received_per_rtt_; }
  // A stream's congestion window (segments of `mss` bytes): reported and cached.
  void on_congestion_window(std::uint32_t segments, std::uint32_t mss);
  // A cached entry for this path: kept if the handshake's RTT agrees (see validate_warm_start).
  // Returns whether it is used. Call after the first handshake sample.
  bool offer_warm_start(const PathSnapshot& cached);

  // --- outputs ---
  std::optional<Duration> handshake_rtt() const { return handshake_rtt_; }
  std::optional<Duration> min_rtt() const;
  std::optional<Duration> smoothed_rtt() const { return smoothed_rtt_; }
  // The round trip to plan with: measured minimum, else the handshake's, else the hint.
  std::optional<Duration> rtt() const;
  // Measured rate (capped by LONGPIPE_BANDWIDTH), else the validated warm start's; 0 = unknown.
  double rate_bytes_per_second() const;
  bool measured_rate() const { return max_rate_ > 0; }
  bool pipe_full() const { return pipe_full_; }
  bool warm_start_used() const { return warm_start_.has_value(); }
  const std::optional<PathSnapshot>& warm_start() const { return warm_start_; }
  std::uint32_t max_congestion_window() const { return max_cwnd_; }
  // How soon the driver should sample again (kMinSampleInterval .. kSampleInterval).
  std::chrono::milliseconds sample_interval() const;
  // Buffers wanted now: `current_send` / `current_receive` are the sizes requested so far (0 =
  // kernel autotuning), `autotune_send` / `autotune_receive` what autotuning reaches on its own
  // (tcp_wmem / tcp_rmem maximum, in requested units). While the rate still grows a plan only
  // raises a buffer beyond both (autotuning follows the window more closely than 500 ms samples
  // can); once the pipe is full the send buffer settles at kSendBufferBdps x BDP. While the rate
  // grows below `stand_in_rate_bytes_per_second` (LONGPIPE_BANDWIDTH or its default; 0 = none)
  // the send buffer is kSendBufferBdps x the stand-in at the measured round trip (kGrowthHeadroom).
  BufferPlan buffers(std::size_t current_send, std::size_t current_receive, std::size_t autotune_send = 0,
                     std::size_t autotune_receive = 0, double stand_in_rate_bytes_per_second = 0) const;
  // The default mode's plan (LONGPIPE_BANDWIDTH unset): the stand-in's buffers (`stand_in_send` /
  // `stand_in_receive`, set before connect) stay a floor. The send buffer is raised as buffers()
  // raises it only once the measured sending rate passes kStandInOvertake x the stand-in's rate;
  // the receive buffer, to kReceiveBufferBdps x the bytes received per round trip, only once those
  // pass kStandInOvertake x the stand-in's BDP (both raised only). A rate below the stand-in (MPI
  // collectives' bursts) changes nothing.
  BufferPlan buffers_above_stand_in(std::size_t current_send, std::size_t current_receive, std::size_t stand_in_send,
                                    std::size_t stand_in_receive, double stand_in_rate_bytes_per_second) const;
  // The BDP the congestion fallback judges a slow-start exit by (tcp_socket.h): the measured one
  // once the pipe was full; before, at least the stand-in (LONGPIPE_BANDWIDTH or its default) at
  // the measured round trip, since a rate measured while growing or app-limited is a lower bound.
  double judged_bdp_bytes(double stand_in_rate_bytes_per_second, Duration stand_in_rtt) const;
  // What to save in the warm-start cache (nothing worth saving without a measured RTT).
  std::optional<PathSnapshot> snapshot(std::size_t send_buffer, std::size_t receive_buffer) const;

 private:
  double bdp_bytes() const;

  std::optional<Duration> rtt_hint_;
  std::optional<double> rate_cap_;
  std::optional<Duration> handshake_rtt_;
  std::optional<Duration> kernel_min_rtt_;
  std::optional<Duration> smoothed_rtt_;
  double max_rate_ = 0;              // largest sample that counts (bytes/s)
  double full_pipe_baseline_ = 0;    // rate at the last 25 % growth
  int rounds_without_growth_ = 0;
  bool pipe_full_ = false;
  std::uint32_t max_cwnd_ = 0;
  std::size_t max_received_per_rtt_ = 0;
  std::uint64_t clean_segments_ = 0;     // sent while no queue stood
  std::uint64_t clean_retransmits_ = 0;
  std::optional<PathSnapshot> warm_start_;
};

// A warm-start entry is usable for a session whose handshake measured `handshake_rtt`: the round
// trip must not be shorter than the cached minimum by more than the tolerance (then the path is
// another one and the cached rate means nothing) nor longer by more (another route, or a queue
// the cached rate would only deepen). Pure, for tests.
bool validate_warm_start(const PathSnapshot& cached, std::chrono::microseconds handshake_rtt);

// How long to hold a small write back so that more of a burst joins it in one segment: Linux
// counts its congestion window in packets, so small messages written one by one fill one slot
// each, and a burst of them can take several round trips. A write is
// held only while data is in flight and the window is not full (Nagle's rule with a timer of 1 %
// of the round trip instead of a whole round trip); nothing is held when nothing is in flight (a
// lone message goes at once), when a full segment is waiting, or when the round trip is unknown.
// Pure, for tests.
std::chrono::microseconds coalesce_delay(std::size_t pending_bytes, std::uint32_t mss, std::uint32_t unacked,
                                         std::uint32_t congestion_window, std::optional<std::chrono::microseconds> rtt);

}  // namespace lp
