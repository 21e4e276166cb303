// PathEstimator: round trips from the handshake and TCP_INFO, the delivery-rate estimate and the
// full-pipe rule, buffer plans, warm-start validation, and the write-coalescing decision.
#include "path/path_estimator.h"

#include <catch2/catch.hpp>

using namespace std::chrono_literals;
using lp::BufferPlan;
using lp::PathEstimator;
using lp::PathSnapshot;
using lp::PathTuning;

namespace {
constexpr double kMbit = 1e6 / 8;  // bytes/s per Mbit/s
}

TEST_CASE("nothing measured: no RTT, no rate, buffers left to the kernel", "[path]") {
  PathEstimator path(std::nullopt, std::nullopt);
  CHECK_FALSE(path.rtt());
  CHECK(path.rate_bytes_per_second() == 0);
  const BufferPlan plan = path.buffers(0, 0);
  CHECK(plan.send == 0);
  CHECK(plan.receive == 0);
  CHECK_FALSE(path.snapshot(0, 0));
}

TEST_CASE("the handshake gives the first RTT; the smallest sample wins; TCP_INFO's minimum joins", "[path]") {
  PathEstimator path(540ms, std::nullopt);
  CHECK(path.rtt() == 540ms);  // the hint, before any sample
  path.on_handshake_rtt(103ms);
  path.on_handshake_rtt(101ms);
  path.on_handshake_rtt(150ms);
  CHECK(path.handshake_rtt() == 101ms);
  CHECK(path.rtt() == 101ms);
  path.on_rtt(120ms, 100ms);
  CHECK(path.min_rtt() == 100ms);
  CHECK(path.smoothed_rtt() == 120ms);
  path.on_handshake_rtt(1us);  // loopback: clamped to the floor
  CHECK(path.min_rtt() == PathTuning::kMinimumRtt);
}

TEST_CASE("rate: application-limited samples only raise it; the pipe is full after 3 queueing rounds without 25 % growth",
          "[path]") {
  PathEstimator path(std::nullopt, std::nullopt);
  path.on_handshake_rtt(100ms);
  path.on_rtt(130ms, 100ms);  // a queue: smoothed RTT 30 % above the minimum
  path.on_delivery_rate(10 * kMbit, true);
  CHECK(path.rate_bytes_per_second() == Approx(10 * kMbit));
  path.on_delivery_rate(5 * kMbit, true);  // lower and app-limited: ignored
  CHECK(path.rate_bytes_per_second() == Approx(10 * kMbit));
  for (double mbit : {20.0, 40.0, 80.0, 160.0}) path.on_delivery_rate(mbit * kMbit, false);  // slow start
  CHECK_FALSE(path.pipe_full());
  path.on_delivery_rate(170 * kMbit, false);
  path.on_delivery_rate(165 * kMbit, false);
  CHECK_FALSE(path.pipe_full());
  path.on_delivery_rate(168 * kMbit, false);
  CHECK(path.pipe_full());
  CHECK(path.rate_bytes_per_second() == Approx(170 * kMbit));
}

TEST_CASE("snapshot: the rate is a lower bound until the session judged its pipe full", "[path]") {
  PathEstimator path(std::nullopt, std::nullopt);
  path.on_handshake_rtt(100ms);
  path.on_rtt(101ms, 100ms);
  // Small bursts: app-limited, or not while they last but without a queue.
  path.on_delivery_rate(0.2 * kMbit, true);
  for (int i = 0; i < 10; ++i) path.on_delivery_rate(1.6 * kMbit, false);
  CHECK(path.snapshot(0, 0)->rate_is_lower_bound);
  path.on_rtt(140ms, 100ms);  // bulk: a queue stands, the rate stops growing
  for (int i = 0; i < 3; ++i) path.on_delivery_rate(1.6 * kMbit, false);
  REQUIRE(path.pipe_full());
  CHECK_FALSE(path.snapshot(0, 0)->rate_is_lower_bound);
}

TEST_CASE("a rate that stops growing without a queue is a burst that ended, not a full pipe", "[path]") {
  PathEstimator path(std::nullopt, std::nullopt);
  path.on_handshake_rtt(100ms);
  path.on_rtt(101ms, 100ms);
  for (int i = 0; i < 10; ++i) path.on_delivery_rate(4.8 * kMbit, false);
  CHECK_FALSE(path.pipe_full());
  path.on_rtt(140ms, 100ms);
  for (int i = 0; i < 3; ++i) path.on_delivery_rate(4.8 * kMbit, false);
  CHECK(path.pipe_full());
}

TEST_CASE("LONGPIPE_BANDWIDTH caps the measured rate and stands in for it before a sample", "[path]") {
  PathEstimator path(std::nullopt, 100 * kMbit);
  CHECK(path.rate_bytes_per_second() == Approx(100 * kMbit));
  path.on_delivery_rate(400 * kMbit, false);
  CHECK(path.rate_bytes_per_second() == Approx(100 * kMbit));
}

TEST_CASE("buffers on a long path: the burst floor at once, 2 x 0.7 BDP while growing, 0.7 BDP once full", "[path]") {
  PathEstimator path(std::nullopt, std::nullopt);
  path.on_handshake_rtt(100ms);
  path.on_congestion_window(100, 1448);
  CHECK(path.max_congestion_window() == 100);
  // No rate yet: the floor (a burst of the engine's largest output fits), autotuning or not.
  BufferPlan plan = path.buffers(0, 0, 2u << 20, 16u << 20);
  CHECK(plan.send == PathTuning::kBurstSendBuffer);
  CHECK(plan.receive == 0);  // receive autotuning carries on
  // Growing at 200 Mbit/s x 100 ms = 2.5 MB.
  path.on_delivery_rate(200 * kMbit, false);
  const double growing_bdp = 200 * kMbit * 0.1;
  plan = path.buffers(PathTuning::kBurstSendBuffer, 0);
  CHECK(plan.send == static_cast<std::size_t>(PathTuning::kGrowthHeadroom * PathTuning::kSendBufferBdps * growing_bdp));
  CHECK(plan.receive == static_cast<std::size_t>(PathTuning::kReceiveBufferBdps * growing_bdp));
  CHECK(path.buffers(0, 0, 4u << 20, 16u << 20).receive == 0);  // autotuning reaches as far
  CHECK(path.buffers(10u << 20, 0).send == 0);                  // never lowered while growing
  // Full at 400 Mbit/s (a queue shows): 5 MB; settles at 0.7 BDP, down as well.
  path.on_rtt(140ms, 100ms);
  for (int i = 0; i < 4; ++i) path.on_delivery_rate(400 * kMbit, false);
  REQUIRE(path.pipe_full());
  const double bdp = 400 * kMbit * 0.1;
  plan = path.buffers(10u << 20, 0, 1u << 20, 1u << 20);
  CHECK(plan.send == static_cast<std::size_t>(PathTuning::kSendBufferBdps * bdp));
  CHECK(plan.receive == static_cast<std::size_t>(PathTuning::kReceiveBufferBdps * bdp));
  CHECK(path.buffers(plan.send, plan.receive, 1u << 20, 1u << 20).send == 0);  // nothing to change
  CHECK(path.buffers(plan.send, plan.receive, 1u << 20, 1u << 20).receive == 0);
}

TEST_CASE("while growing below the stand-in rate, the send buffer is 0.7 x the stand-in's BDP", "[path]") {
  PathEstimator path(std::nullopt, std::nullopt);
  path.on_handshake_rtt(540ms);
  const double stand_in = 155 * kMbit;  // LONGPIPE_BANDWIDTH's default
  // Geo after collectives' bursts: the rate is near the link's, no queue shows, so the pipe is
  // not taken for full; the buffer stays at the stand-in's 0.7 BDP (one BDP in flight), not 1.4.
  for (int i = 0; i < 4; ++i) path.on_delivery_rate(149 * kMbit, true);
  REQUIRE_FALSE(path.pipe_full());
  CHECK(path.buffers(0, 0, 4u << 20, 32u << 20, stand_in).send ==
        static_cast<std::size_t>(PathTuning::kSendBufferBdps * stand_in * 0.54));
  // A path faster than the stand-in grows as before: 2 x 0.7 x the BDP measured so far.
  path.on_delivery_rate(400 * kMbit, false);
  CHECK(path.buffers(0, 0, 4u << 20, 32u << 20, stand_in).send ==
        static_cast<std::size_t>(PathTuning::kGrowthHeadroom * PathTuning::kSendBufferBdps * 400 * kMbit * 0.54));
}

TEST_CASE("by default the stand-in's buffers are a floor; a path measured faster raises them", "[path]") {
  PathEstimator path(540ms, std::nullopt);  // LONGPIPE_BANDWIDTH unset: no cap
  path.on_handshake_rtt(540ms);
  const double stand_in = 155 * kMbit;
  const auto stand_in_send = static_cast<std::size_t>(PathTuning::kSendBufferBdps * stand_in * 0.54);
  const auto stand_in_receive = static_cast<std::size_t>(PathTuning::kReceiveBufferBdps * stand_in * 0.54);
  auto plan = [&](std::size_t send, std::size_t receive) {
    return path.buffers_above_stand_in(send, receive, stand_in_send, stand_in_receive, stand_in);
  };
  // Geo: payload samples at about 150 of 155 Mbit/s, and bytes per round trip to match: unchanged.
  path.on_delivery_rate(150 * kMbit, true);
  path.on_received_per_rtt(static_cast<std::size_t>(150 * kMbit * 0.54));
  CHECK(plan(stand_in_send, stand_in_receive).send == 0);
  CHECK(plan(stand_in_send, stand_in_receive).receive == 0);
  // 400 Mbit/s behind the stand-in's send buffer: its samples show 211 Mbit/s (app-limited, as a
  // send-buffer-limited sender's are). Growth: 2 x 0.7 x the BDP measured so far.
  path.on_delivery_rate(211 * kMbit, true);
  CHECK(static_cast<double>(plan(stand_in_send, stand_in_receive).send) ==
        Approx(PathTuning::kGrowthHeadroom * PathTuning::kSendBufferBdps * 211 * kMbit * 0.54));
  CHECK(plan(stand_in_send, stand_in_receive).receive == 0);  // this end receives no faster than before
  CHECK(plan(64u << 20, stand_in_receive).send == 0);         // raised only while growing
  // Full at 386 Mbit/s (a queue shows): settles at 0.7 BDP, down as well.
  path.on_rtt(700ms, 540ms);
  for (int i = 0; i < 4; ++i) path.on_delivery_rate(386 * kMbit, false);
  REQUIRE(path.pipe_full());
  CHECK(static_cast<double>(plan(64u << 20, stand_in_receive).send) ==
        Approx(PathTuning::kSendBufferBdps * 386 * kMbit * 0.54));
  // The receiving end: what arrives per round trip (bounded by the window) raises its buffer to 2 x.
  path.on_received_per_rtt(26'000'000);
  CHECK(static_cast<double>(plan(stand_in_send, stand_in_receive).receive) ==
        Approx(PathTuning::kReceiveBufferBdps * 26e6));
  CHECK(plan(stand_in_send, 64u << 20).receive == 0);  // raised only
}

TEST_CASE("by default nothing goes below the stand-in's buffers: collectives' rates, shorter paths", "[path]") {
  const double stand_in = 155 * kMbit;
  const auto stand_in_send = static_cast<std::size_t>(PathTuning::kSendBufferBdps * stand_in * 0.54);
  const auto stand_in_receive = static_cast<std::size_t>(PathTuning::kReceiveBufferBdps * stand_in * 0.54);
  SECTION("a pipe judged full at a low rate (bursts both ways) keeps the stand-in's buffers") {
    PathEstimator path(540ms, std::nullopt);
    path.on_handshake_rtt(540ms);
    path.on_rtt(700ms, 540ms);
    for (int i = 0; i < 4; ++i) path.on_delivery_rate(40 * kMbit, false);
    REQUIRE(path.pipe_full());
    const BufferPlan plan = path.buffers_above_stand_in(stand_in_send, stand_in_receive, stand_in_send,
                                                        stand_in_receive, stand_in);
    CHECK(plan.send == 0);
    CHECK(plan.receive == 0);
  }
  SECTION("400 Mbit/s at 100 ms: its BDP is below the stand-in's at 540 ms, which stays") {
    PathEstimator path(540ms, std::nullopt);
    path.on_handshake_rtt(100ms);
    path.on_delivery_rate(400 * kMbit, false);
    path.on_rtt(140ms, 100ms);
    for (int i = 0; i < 4; ++i) path.on_delivery_rate(400 * kMbit, false);
    REQUIRE(path.pipe_full());
    CHECK(path.buffers_above_stand_in(stand_in_send, stand_in_receive, stand_in_send, stand_in_receive, stand_in)
              .send == 0);
    // A buffer raised earlier (a faster sample) settles back at the stand-in's, not below it.
    CHECK(path.buffers_above_stand_in(32u << 20, stand_in_receive, stand_in_send, stand_in_receive, stand_in).send ==
          stand_in_send);
  }
}

TEST_CASE("buffers on a short path: the kernel's autotuning, except beyond its limit", "[path]") {
  PathEstimator path(std::nullopt, std::nullopt);
  path.on_handshake_rtt(20ms);
  CHECK(path.buffers(0, 0, 2u << 20, 16u << 20).send == 0);  // no rate: nothing to do
  path.on_delivery_rate(400 * kMbit, false);                 // 1 MB BDP
  CHECK(path.buffers(0, 0, 2u << 20, 16u << 20).send == 0);  // 1.4 MB: autotuning reaches it
  CHECK(path.buffers(0, 0, 1u << 20, 16u << 20).send ==
        static_cast<std::size_t>(PathTuning::kGrowthHeadroom * PathTuning::kSendBufferBdps * 400 * kMbit * 0.02));
  path.on_rtt(30ms, 20ms);
  for (int i = 0; i < 4; ++i) path.on_delivery_rate(400 * kMbit, false);
  REQUIRE(path.pipe_full());
  CHECK(path.buffers(0, 0, 2u << 20, 16u << 20).send == 0);          // the kernel's business
  CHECK(path.buffers(10u << 20, 0, 2u << 20, 16u << 20).send == (2u << 20));  // we set it: settle
}

TEST_CASE("buffers never below the floor", "[path]") {
  PathEstimator path(std::nullopt, std::nullopt);
  path.on_handshake_rtt(200us);
  path.on_delivery_rate(1 * kMbit, false);
  const BufferPlan plan = path.buffers(0, 0);
  CHECK(plan.send == PathTuning::kMinimumBuffer);
  CHECK(plan.receive == PathTuning::kMinimumBuffer);
}

TEST_CASE("warm start: validated against the handshake's RTT, used until the session fills the pipe", "[path]") {
  PathSnapshot cached;
  cached.min_rtt = 540ms;
  cached.rate_bytes_per_second = 155 * kMbit;
  cached.send_buffer = 7u << 20;
  cached.receive_buffer = 20u << 20;
  SECTION("agreeing RTT: used") {
    PathEstimator path(std::nullopt, std::nullopt);
    path.on_handshake_rtt(560ms);
    REQUIRE(path.offer_warm_start(cached));
    CHECK(path.warm_start_used());
    CHECK(path.rate_bytes_per_second() == Approx(155 * kMbit));
    const BufferPlan plan = path.buffers(0, 0);  // from the lent rate: 155 Mbit/s x 560 ms
    CHECK(static_cast<double>(plan.send) ==
          Approx(PathTuning::kGrowthHeadroom * PathTuning::kSendBufferBdps * 155 * kMbit * 0.56).epsilon(1e-6));
    CHECK(static_cast<double>(plan.receive) == Approx(PathTuning::kReceiveBufferBdps * 155 * kMbit * 0.56).epsilon(1e-6));
    // The session's own full-pipe measurement replaces the cached rate, also when lower.
    path.on_rtt(700ms, 540ms);
    for (int i = 0; i < 4; ++i) path.on_delivery_rate(50 * kMbit, false);
    REQUIRE(path.pipe_full());
    CHECK(path.rate_bytes_per_second() == Approx(50 * kMbit));
    CHECK(path.snapshot(1, 2)->rate_bytes_per_second == Approx(50 * kMbit));
  }
  SECTION("no handshake sample yet: refused") {
    PathEstimator path(std::nullopt, std::nullopt);
    CHECK_FALSE(path.offer_warm_start(cached));
  }
  SECTION("a shorter path (another route, another host behind the address): refused") {
    PathEstimator path(std::nullopt, std::nullopt);
    path.on_handshake_rtt(100ms);
    CHECK_FALSE(path.offer_warm_start(cached));
    CHECK_FALSE(path.warm_start_used());
    CHECK(path.rate_bytes_per_second() == 0);
    PathEstimator cold(std::nullopt, std::nullopt);  // exactly a cold start
    cold.on_handshake_rtt(100ms);
    CHECK(path.buffers(0, 0).send == cold.buffers(0, 0).send);
    CHECK(path.buffers(0, 0).receive == cold.buffers(0, 0).receive);
  }
  SECTION("a much longer round trip (a queue, another route): refused") {
    PathEstimator path(std::nullopt, std::nullopt);
    path.on_handshake_rtt(700ms);
    CHECK_FALSE(path.offer_warm_start(cached));
  }
}

TEST_CASE("validate_warm_start: the tolerance and the absolute slack at short RTTs", "[path]") {
  PathSnapshot cached;
  cached.min_rtt = 400ms;
  CHECK(lp::validate_warm_start(cached, 400ms));
  CHECK(lp::validate_warm_start(cached, 499ms));
  CHECK(lp::validate_warm_start(cached, 301ms));
  CHECK_FALSE(lp::validate_warm_start(cached, 501ms));
  CHECK_FALSE(lp::validate_warm_start(cached, 299ms));
  cached.min_rtt = 2ms;  // 25 % of 2 ms is less than the 3 ms slack
  CHECK(lp::validate_warm_start(cached, 5ms));
  CHECK_FALSE(lp::validate_warm_start(cached, 6ms));
  cached.min_rtt = 0us;
  CHECK_FALSE(lp::validate_warm_start(cached, 1ms));
}

TEST_CASE("coalesce_delay: small writes wait only while data is in flight and the window is not full", "[path]") {
  using lp::coalesce_delay;
  const auto rtt = std::optional<std::chrono::microseconds>(100ms);
  CHECK(coalesce_delay(100, 1448, 0, 27, rtt) == 0us);      // nothing in flight: a lone message goes at once
  CHECK(coalesce_delay(100, 1448, 1, 27, rtt) == 1000us);   // in flight: wait 1 % of the RTT, <= 1 ms
  CHECK(coalesce_delay(100, 1448, 14, 27, rtt) == 1000us);
  CHECK(coalesce_delay(100, 1448, 27, 27, rtt) == 0us);     // full: the kernel queues and coalesces
  CHECK(coalesce_delay(1448, 1448, 14, 27, rtt) == 0us);    // a full segment is waiting
  CHECK(coalesce_delay(100, 1448, 14, 27, std::nullopt) == 0us);
  CHECK(coalesce_delay(100, 1448, 14, 27, std::optional<std::chrono::microseconds>(20ms)) == 200us);
  CHECK(coalesce_delay(100, 0, 14, 27, rtt) == 0us);
}

TEST_CASE("sampling: every round trip while the rate grows (50-500 ms), every 500 ms once full", "[path]") {
  PathEstimator path(std::nullopt, std::nullopt);
  CHECK(path.sample_interval() == PathTuning::kSampleInterval);
  path.on_handshake_rtt(100ms);
  CHECK(path.sample_interval() == 100ms);
  PathEstimator short_path(std::nullopt, std::nullopt);
  short_path.on_handshake_rtt(2ms);
  CHECK(short_path.sample_interval() == PathTuning::kMinSampleInterval);
  path.on_rtt(150ms, 100ms);
  for (int i = 0; i < 4; ++i) path.on_delivery_rate(400 * kMbit, false);
  CHECK(path.sample_interval() == PathTuning::kSampleInterval);
}

TEST_CASE("the BDP the congestion fallback judges by: the stand-in until the pipe was full", "[path]") {
  PathEstimator path(std::nullopt, std::nullopt);
  const double geo_rate = 155 * kMbit;
  CHECK(path.judged_bdp_bytes(geo_rate, 540ms) == Approx(geo_rate * 0.54));  // nothing measured
  path.on_handshake_rtt(20ms);
  CHECK(path.judged_bdp_bytes(geo_rate, 540ms) == Approx(geo_rate * 0.02));  // the measured RTT
  path.on_delivery_rate(1 * kMbit, true);  // a low, app-limited sample is a lower bound only
  CHECK(path.judged_bdp_bytes(geo_rate, 540ms) == Approx(geo_rate * 0.02));
  path.on_rtt(30ms, 20ms);
  for (int i = 0; i < 4; ++i) path.on_delivery_rate(10 * kMbit, false);
  REQUIRE(path.pipe_full());
  CHECK(path.judged_bdp_bytes(geo_rate, 540ms) == Approx(10 * kMbit * 0.02));
}

TEST_CASE("loss without a queue: counted from TCP's segments only while no queue stands, known after enough",
          "[path][loss]") {
  PathEstimator path(std::nullopt, std::nullopt);
  path.on_handshake_rtt(540ms);
  CHECK(path.loss_ppm() == -1);
  path.on_segments(PathEstimator::kMinLossSegments - 1, 50, false);
  CHECK(path.loss_ppm() == -1);  // too few segments to tell
  // A standing queue's drops are congestion: not counted, however many.
  path.on_segments(100'000, 5'000, true);
  CHECK(path.loss_ppm() == -1);
  path.on_segments(PathEstimator::kMinLossSegments + 1, 50, false);
  CHECK(path.loss_ppm() == 10'000);  // 100 of 10 000: 1 %
  const auto saved = path.snapshot(0, 0);
  REQUIRE(saved);
  CHECK(saved->loss_ppm == 10'000);
}
