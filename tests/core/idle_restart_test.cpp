// Linux's idle restart as the spill decision predicts it (idle_restart.h): the window a stream's
// next write will find, from TCP_INFO's fields. Pure: no sockets.
#include <catch2/catch.hpp>

#include "idle_restart.h"

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
