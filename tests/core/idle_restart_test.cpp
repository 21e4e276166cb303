// Linux's idle restart as the spill decision predicts it (idle_restart.h): the window a stream's
// next write will find, from TCP_INFO's fields. Pure: no sockets.
#include <catch2/catch.hpp>

#include "carrier/tcp/idle_restart.h"

using namespace lp;

namespace {

constexpr std::uint32_t kMss = 1448;

// A stream as TCP_INFO shows it between bursts: nothing in flight unless said.
TcpWindowSample idle_stream(std::uint32_t cwnd, std::uint32_t idle_ms, std::uint32_t rto_ms,
                            std::uint32_t unacked = 0) {
  TcpWindowSample sample;
  sample.cwnd_segments = cwnd;
  sample.mss = kMss;
  sample.unacked_segments = unacked;
  sample.last_data_sent_ms = idle_ms;
  sample.rto_us = rto_ms * 1000;
  return sample;
}

}  // namespace

TEST_CASE("idle restart: the window halves once per RTO past the first, down to the initial one") {
  CHECK(window_after_idle(20, 300, 304) == 20);   // within one RTO: kept
  CHECK(window_after_idle(20, 305, 304) == 10);   // past it: halved
  CHECK(window_after_idle(80, 448, 304) == 40);
  CHECK(window_after_idle(80, 700, 304) == 20);   // past two RTOs: halved twice
  CHECK(window_after_idle(80, 5000, 304) == 10);  // never below the initial window
  CHECK(window_after_idle(14, 5000, 304) == 10);
  CHECK(window_after_idle(6, 5000, 304) == 6);    // a smaller window (after a loss) stays
  CHECK(window_after_idle(20, 5000, 0) == 10);    // no RTO reported: taken as 1 ms
}

TEST_CASE("idle restart: the next write's window is the restarted one only when a restart is due") {
  // The 50 ms / 155 Mbit/s trace: a spill stream idle 448 ms through lp-perf's pings, RTO 304 ms.
  const StreamWindow restarted = window_for_next_write(idle_stream(20, 448, 304), true);
  CHECK(restarted.known);
  CHECK(restarted.window == 10 * kMss);
  CHECK(restarted.in_flight == 0);
  // Within the RTO (and its margin for TCP_INFO's jiffies), or with data in flight: TCP_INFO's window.
  CHECK(window_for_next_write(idle_stream(20, 100, 304), true).window == 20 * kMss);
  CHECK(window_for_next_write(idle_stream(20, 296, 304), true).window == 10 * kMss);  // within the margin
  const StreamWindow busy = window_for_next_write(idle_stream(20, 448, 304, 3), true);
  CHECK(busy.window == 20 * kMss);
  CHECK(busy.in_flight == 3 * kMss);
  // A host with tcp_slow_start_after_idle = 0, or bbr: no restart.
  CHECK(window_for_next_write(idle_stream(20, 448, 304), false).window == 20 * kMss);
  CHECK(congestion_restarts_after_idle("cubic"));
  CHECK(congestion_restarts_after_idle("reno"));
  CHECK_FALSE(congestion_restarts_after_idle("bbr"));
}

TEST_CASE("a paced stream's room is what its pacing rate sends within 1/32 of a round trip") {
  TcpWindowSample sample = idle_stream(45, 1600, 1012);
  sample.paced = true;
  sample.pacing_rate = 200'000;  // bytes/s
  sample.srtt_us = 540'000;
  const auto soon = static_cast<std::size_t>(200'000 * 0.540 * kPacedRoomRttShare);
  CHECK(window_for_next_write(sample, false).window == soon);  // 3375 bytes, not 45 segments
  sample.unacked_segments = 30;  // mid-burst: what is in flight plus what it sends soon
  CHECK(window_for_next_write(sample, false).window == 30 * kMss + soon);
  sample.pacing_rate = 20'000'000;  // a bulk stream paced near the link: the window binds
  CHECK(window_for_next_write(sample, false).window == 45 * kMss);
  sample.pacing_rate = ~std::uint64_t{0};  // not paced (the kernel's "unlimited")
  sample.unacked_segments = 0;
  CHECK(window_for_next_write(sample, false).window == 45 * kMss);
  sample.pacing_rate = 200'000;
  sample.paced = false;  // cubic: its pacing rate is computed but not applied
  CHECK(window_for_next_write(sample, false).window == 45 * kMss);
}

TEST_CASE("a switch to bbr paces the next write from bbr's initial rate: 2.885 x cwnd / smoothed RTT, less 1 %") {
  // geo, stream 0 switched at 20 segments: ss showed pacing_rate 1223400bps (152.9 KB/s).
  CHECK(bbr_initial_pacing_rate(20, 1448, 540'000) == Approx(152'900).epsilon(0.01));
  CHECK(bbr_initial_pacing_rate(20, 1448, 0) == 0);  // no RTT yet: not judged
}

TEST_CASE("auto: paced cubic for large messages where the host keeps windows across idle and the send buffer is fixed") {
  // The goal's case: netem/wan --tune-hosts (tcp_slow_start_after_idle = 0), stand-in buffers.
  CHECK(resolve_congestion("auto", false, true) == "cubic");
  // A stock host restarts cubic's window after every pause longer than an RTO: bbr keeps it.
  CHECK(resolve_congestion("auto", true, true) == "bbr");
  // Autotuned or measured send buffers: nothing but a loss would bound cubic's flight.
  CHECK(resolve_congestion("auto", false, false) == "bbr");
  CHECK(resolve_congestion("auto", true, false) == "bbr");
  // A named congestion control stands, whatever the host.
  CHECK(resolve_congestion("bbr", false, true) == "bbr");
  CHECK(resolve_congestion("cubic", true, false) == "cubic");
  CHECK(resolve_congestion("system", false, true) == "system");
}

TEST_CASE("large frames on a congestion control that does not pace itself get the kernel's pacing; small frames never") {
  CHECK(large_frames_need_pacing("cubic", false));
  CHECK(large_frames_need_pacing("reno", false));
  CHECK_FALSE(large_frames_need_pacing("bbr", false));  // paces itself
  CHECK_FALSE(large_frames_need_pacing("cubic", true));  // stream 0, spill streams: a burst leaves at once
  CHECK_FALSE(large_frames_need_pacing("bbr", true));
}
