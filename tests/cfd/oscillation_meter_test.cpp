#include <catch2/catch.hpp>

#include <cmath>
#include <numbers>

#include "oscillation_meter.h"

using lp::cfd::OscillationMeter;

TEST_CASE("the frequency of a sampled sine is found between samples", "[cfd][meter]") {
  OscillationMeter meter;
  const double frequency = 1.0 / 37.3;  // not a whole number of samples per period
  for (int t = 0; t < 1000; ++t) meter.add(t, 0.3 + 2.0 * std::sin(2 * std::numbers::pi * frequency * t + 0.4));
  const auto result = meter.measure();
  REQUIRE(result);
  CHECK(result->frequency == Approx(frequency).epsilon(1e-3));
  CHECK(result->periods >= 25);
  CHECK(result->period_spread < 0.01);
  CHECK(result->amplitude == Approx(2.0).epsilon(0.01));
}

TEST_CASE("too few periods give no frequency", "[cfd][meter]") {
  OscillationMeter meter;
  for (int t = 0; t < 50; ++t) meter.add(t, std::sin(2 * std::numbers::pi * t / 40.0));
  CHECK_FALSE(meter.measure(3));
  meter.clear();
  for (int t = 0; t < 10; ++t) meter.add(t, 1.0);  // constant: no crossing at all
  CHECK_FALSE(meter.measure(1));
}
