// RFC 6298 arithmetic of RttEstimator: first and later samples, clamping, back-off.
#include "arq/rtt_estimator.h"

#include <catch2/catch.hpp>

using namespace std::chrono_literals;
using lp::ArqConfig;
using lp::ArqDuration;
using lp::RttEstimator;

TEST_CASE("before any sample the RTO is initial_rto", "[rtt]") {
  RttEstimator rtt{ArqConfig{}};
  CHECK_FALSE(rtt.has_sample());
  CHECK(rtt.rto() == 1s);
}

TEST_CASE("first sample: SRTT = R, RTTVAR = R/2, RTO = SRTT + 4 RTTVAR", "[rtt]") {
  RttEstimator rtt{ArqConfig{}};
  rtt.add_sample(100ms);
  CHECK(rtt.srtt() == 100ms);
  CHECK(rtt.rttvar() == 50ms);
  CHECK(rtt.rto() == 300ms);
}

TEST_CASE("later samples: RTTVAR and SRTT move with gains 1/4 and 1/8", "[rtt]") {
  RttEstimator rtt{ArqConfig{}};
  rtt.add_sample(100ms);
  rtt.add_sample(200ms);
  // RTTVAR = 3/4 * 50 + 1/4 * |100 - 200| = 62.5 ms; SRTT = 7/8 * 100 + 1/8 * 200 = 112.5 ms.
  CHECK(rtt.rttvar() == 62500us);
  CHECK(rtt.srtt() == 112500us);
  CHECK(rtt.rto() == 112500us + 4 * 62500us);
  CHECK(rtt.samples() == 2);
}

TEST_CASE("the RTO never goes below min_rto", "[rtt]") {
  RttEstimator rtt{ArqConfig{}};
  rtt.add_sample(1ms);  // 1 + 4 * 0.5 = 3 ms
  CHECK(rtt.rto() == 200ms);
}

TEST_CASE("the RTO never goes above max_rto", "[rtt]") {
  RttEstimator rtt{ArqConfig{}};
  rtt.add_sample(100s);
  CHECK(rtt.rto() == 60s);
}

TEST_CASE("with a steady RTT the variance term shrinks to the clock granularity", "[rtt]") {
  ArqConfig config;
  config.min_rto = 1ms;
  RttEstimator rtt{config};
  for (int i = 0; i < 100; ++i) rtt.add_sample(100ms);
  CHECK(rtt.srtt() == 100ms);
  CHECK(rtt.rto() == 100ms + config.clock_granularity);
}

TEST_CASE("back-off multiplies the RTO by the factor, bounded by max_rto, and resets", "[rtt]") {
  RttEstimator rtt{ArqConfig{}};
  rtt.back_off();
  CHECK(rtt.rto() == 2s);
  rtt.back_off();
  CHECK(rtt.rto() == 4s);
  for (int i = 0; i < 1000; ++i) rtt.back_off();  // must neither overflow nor pass the ceiling
  CHECK(rtt.rto() == 60s);
  rtt.reset_back_off();
  CHECK(rtt.rto() == 1s);
}

TEST_CASE("back-off uses the configured factor", "[rtt]") {
  ArqConfig config;
  config.backoff_factor = 1.5;
  RttEstimator rtt{config};
  rtt.add_sample(100ms);  // RTO 300 ms
  rtt.back_off();
  CHECK(rtt.rto() == 450ms);
}

TEST_CASE("a fresh sample ends the back-off", "[rtt]") {
  RttEstimator rtt{ArqConfig{}};
  rtt.back_off();
  rtt.back_off();
  rtt.add_sample(100ms);
  CHECK(rtt.rto() == 300ms);
}
