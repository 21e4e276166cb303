// core.congestion_parts_test, continued: a seed's judgement (congestion/pacer_seed.h) on a fake
// clock: the span of busy ACKs it is judged over, and its verdicts. (The verdict's own rules are
// the "seed verdict" cases in congestion_parts_test.cpp.)
#include <catch2/catch.hpp>

#include "congestion/pacer_seed.h"

using namespace std::chrono_literals;
using lp::ArqDuration;
using lp::ArqTime;
using lp::PacerSeed;
using State = PacerSeed::State;

namespace {
ArqTime at(std::chrono::microseconds t) { return ArqTime{} + t; }
constexpr ArqDuration kRtt = 100ms;
}  // namespace

TEST_CASE("pacer seed: worth taking only above a cold start's first round trip") {
  // 96 datagrams of 1472 bytes in the first round trip; the seed paces at 85 % of the cached rate.
  const double first_window = 96 * 1472.0;
  CHECK(PacerSeed::worth_taking(first_window / 0.85 / 0.1 + 1, kRtt));
  CHECK_FALSE(PacerSeed::worth_taking(first_window / 0.85 / 0.1 - 100, kRtt));
  CHECK_FALSE(PacerSeed::worth_taking(1e9, ArqDuration::zero()));
}

TEST_CASE("pacer seed: judged over a round trip of busy ACKs from the first datagram sent at its rate") {
  PacerSeed seed;
  CHECK(seed.state() == State::kNone);
  CHECK_FALSE(seed.judge(at(1s), 1'000'000, 0, kRtt));  // no seed: nothing to judge
  seed.start(1e6, 10);
  CHECK(seed.state() == State::kSeeded);
  CHECK(seed.rate() == 1e6);
  // Datagrams sent before the seed, or while the application ran dry, start no span.
  seed.on_acked(at(0ms), 9, false, 0, 0);
  seed.on_acked(at(0ms), 12, true, 0, 0);
  CHECK_FALSE(seed.judge(at(500ms), 1'000'000, 0, kRtt));
  // The span starts at 10 ms with 5000 bytes delivered before it.
  seed.on_acked(at(10ms), 12, false, 5000, 0);
  seed.on_acked(at(20ms), 13, false, 9000, 0);  // the span is started once
  CHECK_FALSE(seed.judge(at(109ms), 5000 + 200'000, 0, kRtt));  // less than a round trip: too early
  SECTION("the path delivers 80 % of it: confirmed") {
    const auto verdict = seed.judge(at(110ms), 5000 + 80'000, 0, kRtt);
    REQUIRE(verdict);
    CHECK(verdict->state == State::kConfirmed);
    CHECK(verdict->rate == Approx(800'000));
    CHECK(seed.state() == State::kConfirmed);
    CHECK_FALSE(seed.judge(at(300ms), 0, 0, kRtt));  // judged once
  }
  SECTION("less: rejected at what it delivered") {
    const auto verdict = seed.judge(at(110ms), 5000 + 79'000, 0, kRtt);
    REQUIRE(verdict);
    CHECK(verdict->state == State::kRejected);
    CHECK(verdict->rate == Approx(790'000));
    CHECK(seed.state() == State::kRejected);
  }
  SECTION("heavy loss within the span rejects at once") {
    const auto verdict = seed.judge(at(30ms), 5000 + 30 * 1472, 1000 + 10 * 1472, kRtt);
    REQUIRE(verdict);
    CHECK(verdict->state == State::kRejected);
  }
  SECTION("an application that ran dry says nothing: the next busy span is judged") {
    seed.on_application_limited();
    CHECK_FALSE(seed.judge(at(110ms), 5000 + 10'000, 0, kRtt));
    CHECK(seed.state() == State::kSeeded);
    seed.on_acked(at(200ms), 20, false, 50'000, 0);
    CHECK_FALSE(seed.judge(at(299ms), 50'000 + 100'000, 0, kRtt));
    const auto verdict = seed.judge(at(300ms), 50'000 + 100'000, 0, kRtt);
    REQUIRE(verdict);
    CHECK(verdict->state == State::kConfirmed);
    CHECK(verdict->rate == Approx(1e6));
  }
}
