// Linux's slow start after idle, predicted (pure). tcp_cwnd_restart() shrinks the congestion window
// of a connection whose last data left more than one RTO ago, on its next write, and TCP_INFO
// shows the old window until that write. The spill decision (stream_scheduler.h) judges a stream
// by the window its write will find: else an idle stream gets more than it sends in a round trip.
// Not for congestion controls with their own cong_control (bbr): the kernel skips them.
#pragma once

#include <cstdint>
#include <string>

#include "carrier/carrier.h"  // StreamWindow
#include "congestion/congestion_controller.h"  // CongestionKind

namespace lp {

// Linux's initial congestion window (TCP_INIT_CWND, segments): the floor of an idle restart.
inline constexpr std::uint32_t kLinuxInitialWindow = 10;

// The window tcp_cwnd_restart() leaves after `idle_ms` without data sent, RTO `rto_ms`: unchanged
// up to one RTO, then halved once per RTO past the first, never below the initial window (a
// smaller window stays as it is).
std::uint32_t window_after_idle(std::uint32_t cwnd, std::uint64_t idle_ms, std::uint64_t rto_ms);

// TCP_INFO's fields that decide the window of a stream's next write.
struct TcpWindowSample {
  std::uint32_t cwnd_segments = 0;      // tcpi_snd_cwnd
  std::uint32_t mss = 0;                // tcpi_snd_mss
  std::uint32_t unacked_segments = 0;   // tcpi_unacked (the kernel's packets_out)
  std::uint32_t not_sent_bytes = 0;     // tcpi_notsent_bytes
  std::uint32_t last_data_sent_ms = 0;  // tcpi_last_data_sent
  std::uint32_t rto_us = 0;             // tcpi_rto
  // A congestion control that paces every write itself (bbr), on a stream of small frames (stream 0,
  // a spill stream): what it sends soon is what its pacing rate allows, whatever room the window shows.
  bool paced = false;
  std::uint64_t pacing_rate = 0;        // tcpi_pacing_rate, bytes/s (0 or ~0: not paced)
  std::uint32_t srtt_us = 0;            // tcpi_rtt
};

// The share of a round trip within which a paced stream's room is counted: the rest of a burst
// waits for its pacing, up to a round trip (bbr paces an application-limited burst at the rate it
// measured from earlier bursts of the same size), so a whole window's room would give a stream
// more than it sends while spill streams stay unused. What leaves within 1/32 of a round trip adds
// at most 3 % to a one-round-trip batch; the rest goes to spill streams while they have room.
inline constexpr double kPacedRoomRttShare = 1.0 / 32;

// The window the stream's next write will find: TCP_INFO's, or the restarted one when that write
// will restart it (`restarts_after_idle`: the host's tcp_slow_start_after_idle is on and the
// congestion control has no cong_control; nothing in flight; idle for more than an RTO). On a
// paced stream, no more than what is in flight plus what its pacing rate sends within
// kPacedRoomRttShare of the smoothed round trip (round_trip_window keeps the window: a large
// frame queued behind it goes within round trips, whatever it waits for in the next one).
StreamWindow window_for_next_write(const TcpWindowSample& sample, bool restarts_after_idle);

// Whether a socket on congestion control `congestion` restarts its window after idle when the host
// does: bbr implements cong_control, which the kernel's check skips (PLATFORM.md).
bool congestion_restarts_after_idle(const std::string& congestion);
// The pacing rate Linux's bbr starts from when it is set up on a live connection (bbr_init:
// bbr_high_gain x cwnd / smoothed RTT), bytes/s: what a switch to it paces the next write at.
std::uint64_t bbr_initial_pacing_rate(std::uint32_t cwnd_segments, std::uint32_t mss, std::uint32_t srtt_us);
// Whether congestion control `congestion` paces every write itself (bbr asks the kernel to).
bool congestion_paces_itself(const std::string& congestion);

// LONGPIPE_CONGESTION's "auto" (the large-message stream's default) on this host: cubic when the
// host keeps a window across idle (tcp_slow_start_after_idle = 0) and the engine fixes the send
// buffer (so the buffer, not a loss, bounds cubic's flight: about 1.4 x the stand-in's BDP); bbr
// otherwise (cubic would restart slow start after every pause, or fill the queue until it loses).
// Not bbr always: its ProbeRTT (4 segments for 200 ms and a round trip, every 10 s) delays the
// batch it falls in (docs/engine/tcp-carrier.md, "Large messages on paced cubic"). Other names stand.
inline constexpr const char* kAutoCongestion = "auto";
std::string resolve_congestion(const std::string& configured, bool host_restarts_idle, bool send_buffer_fixed);
// Whether a stream of large frames on `congestion` needs the kernel's pacing (SO_MAX_PACING_RATE):
// one that does not pace itself sends a whole window at once when a burst follows a pause, and a
// window of one BDP overflows a one-BDP bottleneck queue; paced, it loses nothing. Small frames
// stay unpaced: a burst that fits the window should leave at once (config.h).
bool large_frames_need_pacing(const std::string& congestion, bool small_frames);

}  // namespace lp
