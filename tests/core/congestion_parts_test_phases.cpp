// core.congestion_parts_test, continued: the datagram pacer's phase machine
// (congestion/pacer_phases.h) on facts alone: each transition and its guard, round by round. Its
// time is rounds and the RTTs the facts carry (a fake clock).
#include <catch2/catch.hpp>

#include "congestion/pacer_phases.h"

using namespace std::chrono_literals;
using lp::ArqDuration;
using lp::PacerPhases;
using Phase = PacerPhases::Phase;
using Action = PacerPhases::Action;

namespace {

constexpr double kRate = 1e6;  // bytes per second
constexpr ArqDuration kMinRtt = 100ms;

// A round on a 100 ms path: `rate` delivered, nothing lost, no queue, unless the facts say so.
struct Round {
  double rate = kRate;
  double lost_fraction = 0;
  std::uint64_t lost_datagrams = 0;
  ArqDuration smallest_rtt = kMinRtt;
  bool busy = true;
  bool seeded = false;
  double in_flight = 0;  // within one bandwidth-delay product: a drain ends
  double estimate = 0;   // the estimate after the round (0: `rate`)
};

PacerPhases::Decision run(PacerPhases& phases, const Round& r) {
  const double total = 100'000;
  phases.measure_round({r.rate, total * (1 - r.lost_fraction), total * r.lost_fraction, r.lost_datagrams, kMinRtt,
                        r.smallest_rtt});
  return phases.end_round({r.estimate > 0 ? r.estimate : r.rate, r.in_flight, kMinRtt, r.busy, r.seeded});
}

// Start-up at a flat rate ends after kStartupFlatRounds busy rounds, then one round drains.
void reach_cruise(PacerPhases& phases) {
  for (int i = 0; i < 4; ++i) run(phases, {});
  REQUIRE(phases.phase() == Phase::kDrain);
  run(phases, {});
  REQUIRE(phases.phase() == Phase::kCruise);
}

}  // namespace

TEST_CASE("pacer phases: start-up doubles until the rate is flat for three busy rounds") {
  PacerPhases phases;
  CHECK(phases.phase() == Phase::kStartup);
  CHECK(phases.pacing_gain() == Approx(2.885));
  CHECK(phases.window_gain() == Approx(2.885));
  double rate = kRate;
  for (int i = 0; i < 6; ++i, rate *= 1.25) CHECK(run(phases, {.rate = rate}).action == Action::kNone);
  CHECK(phases.phase() == Phase::kStartup);  // growing by a quarter a round: not flat
  rate /= 1.25;
  run(phases, {.rate = rate});
  run(phases, {.rate = rate});
  // Rounds in which the application ran dry say nothing of the path.
  for (int i = 0; i < 5; ++i) run(phases, {.rate = rate, .busy = false});
  CHECK(phases.phase() == Phase::kStartup);
  run(phases, {.rate = rate});
  CHECK(phases.phase() == Phase::kDrain);
  CHECK(phases.pacing_gain() == Approx(1 / 2.885));
  CHECK(phases.window_gain() == Approx(2.885));
}

TEST_CASE("pacer phases: start-up leaves on a busy round's heavy loss of at least 8 datagrams") {
  PacerPhases phases;
  run(phases, {});
  CHECK(run(phases, {.lost_fraction = 0.3, .lost_datagrams = 7}).action == Action::kNone);  // a few small messages
  CHECK(run(phases, {.lost_fraction = 0.19, .lost_datagrams = 20}).action == Action::kNone);  // not above a fifth
  CHECK(run(phases, {.lost_fraction = 0.3, .lost_datagrams = 8, .busy = false}).action == Action::kNone);
  CHECK(run(phases, {.lost_fraction = 0.3, .lost_datagrams = 8}).action == Action::kLeaveStartup);
  // The pacer adjusts its estimate, then drains.
  CHECK(phases.phase() == Phase::kStartup);
  phases.enter_drain();
  CHECK(phases.phase() == Phase::kDrain);
}

TEST_CASE("pacer phases: start-up leaves on a queue an eighth of the minimum RTT deep, within [4, 16] ms") {
  CHECK_FALSE(lp::startup_queue_seen(std::nullopt, 1s));
  CHECK_FALSE(lp::startup_queue_seen(kMinRtt, 112ms));
  CHECK(lp::startup_queue_seen(kMinRtt, 113ms));
  CHECK_FALSE(lp::startup_queue_seen(ArqDuration(10ms), 14ms));  // 4 ms at least
  CHECK(lp::startup_queue_seen(ArqDuration(10ms), ArqDuration(14001us)));
  CHECK(lp::startup_queue_seen(ArqDuration(1s), ArqDuration(1017ms)));  // 16 ms at most
  PacerPhases phases;
  CHECK(run(phases, {.smallest_rtt = 112ms}).action == Action::kNone);
  CHECK(run(phases, {.smallest_rtt = 113ms, .busy = false}).action == Action::kNone);
  CHECK(run(phases, {.smallest_rtt = 113ms}).action == Action::kLeaveStartup);
}

TEST_CASE("pacer phases: a seed being judged holds start-up whatever the round showed") {
  PacerPhases phases;
  phases.start_seeded();
  CHECK(phases.pacing_gain() == 1.0);
  CHECK(phases.window_gain() == Approx(1.25));
  for (int i = 0; i < 5; ++i) {
    CHECK(run(phases, {.lost_fraction = 0.5, .lost_datagrams = 50, .smallest_rtt = 200ms, .seeded = true}).action ==
          Action::kNone);
  }
  CHECK(phases.phase() == Phase::kStartup);
  SECTION("confirmed: start-up goes on from the seed at a gain of 2") {
    phases.seed_confirmed(kRate);
    CHECK(phases.pacing_gain() == 2.0);
    CHECK(phases.window_gain() == Approx(2.885));
    run(phases, {.rate = 1.25 * kRate});  // grew: not flat
    for (int i = 0; i < 2; ++i) run(phases, {.rate = 1.25 * kRate});
    CHECK(phases.phase() == Phase::kStartup);
    run(phases, {.rate = 1.25 * kRate});
    CHECK(phases.phase() == Phase::kDrain);
  }
  SECTION("rejected: the seed's queue drains") {
    phases.seed_rejected(kRate / 4);
    CHECK(phases.phase() == Phase::kDrain);
    CHECK(phases.pacing_gain() == Approx(1 / 2.885));
  }
}

TEST_CASE("pacer phases: the drain ends within one bandwidth-delay product in flight, or after 4 rounds") {
  PacerPhases phases;
  phases.cap_drain(kRate / 2);
  CHECK(phases.drain_rate_cap() == 0);  // only while draining
  phases.enter_drain();
  CHECK(phases.drain_rate_cap() == kRate / 2);
  const double bdp = kRate * 0.1;
  SECTION("in flight within a BDP") {
    run(phases, {.in_flight = bdp + 1});
    CHECK(phases.phase() == Phase::kDrain);
    run(phases, {.in_flight = bdp});
  }
  SECTION("four rounds") {
    for (int i = 0; i < 3; ++i) run(phases, {.in_flight = 4 * bdp});
    CHECK(phases.phase() == Phase::kDrain);
    run(phases, {.in_flight = 4 * bdp});
  }
  CHECK(phases.phase() == Phase::kCruise);
  CHECK(phases.pacing_gain() == 1.0);
  CHECK(phases.window_gain() == 2.0);
  CHECK(phases.drain_rate_cap() == 0);
  phases.enter_drain();
  CHECK(phases.drain_rate_cap() == 0);  // the cap was the drain's after start-up
}

TEST_CASE("pacer phases: cruising probes at 1.25 x every 8 rounds, and at once again while probes find room") {
  PacerPhases phases;
  reach_cruise(phases);
  for (int i = 0; i < 5; ++i) run(phases, {});
  CHECK(phases.pacing_gain() == 1.0);
  SECTION("not into a standing queue") {
    run(phases, {.smallest_rtt = 113ms});  // 13 ms: a standing queue (an eighth of the minimum)
    CHECK(phases.pacing_gain() == 1.0);
    run(phases, {});
    CHECK(phases.pacing_gain() == 1.25);
  }
  SECTION("the probe, its drain, then no room") {
    run(phases, {});
    CHECK(phases.pacing_gain() == 1.25);
    run(phases, {});
    CHECK(phases.pacing_gain() == 0.75);
    run(phases, {.rate = 1.09 * kRate});  // less than a tenth more: no room
    CHECK(phases.pacing_gain() == 1.0);
    for (int i = 0; i < 5; ++i) run(phases, {.rate = 1.09 * kRate});
    CHECK(phases.pacing_gain() == 1.0);
    run(phases, {.rate = 1.09 * kRate});
    CHECK(phases.pacing_gain() == 1.25);
  }
  SECTION("room found: the next probe at once") {
    run(phases, {});
    run(phases, {});
    run(phases, {.rate = 1.1 * kRate});
    CHECK(phases.pacing_gain() == 1.25);
    run(phases, {.rate = 1.1 * kRate});
    run(phases, {.rate = 1.5 * kRate, .smallest_rtt = 113ms});  // more, but into a queue: no room
    CHECK(phases.pacing_gain() == 1.0);
  }
  SECTION("a probe the application left short drains nothing") {
    run(phases, {});
    run(phases, {.busy = false});
    CHECK(phases.pacing_gain() == 1.0);
  }
  CHECK(phases.phase() == Phase::kCruise);
  CHECK(phases.backoffs_for_delay() == 0);
}

TEST_CASE("pacer phases: cruising backs off after three rounds of a standing queue") {
  PacerPhases phases;
  reach_cruise(phases);
  // On a 100 ms path a standing queue is 12.5 ms deep (an eighth, above the 10 ms floor).
  for (int i = 0; i < 5; ++i) run(phases, {.smallest_rtt = 112ms});
  CHECK(run(phases, {.smallest_rtt = 113ms}).action == Action::kNone);
  CHECK(run(phases, {.smallest_rtt = 113ms}).action == Action::kNone);
  const auto decision = run(phases, {.rate = 0.2 * kRate, .smallest_rtt = 113ms, .estimate = kRate});
  CHECK(decision.action == Action::kBackOff);
  CHECK(decision.rate == Approx(0.85 * 0.5 * kRate));  // the round's rate, at least half the estimate
  CHECK(phases.backoffs_for_delay() == 1);
  CHECK(phases.phase() == Phase::kDrain);
  CHECK(phases.pacing_gain() == 0.75);
  CHECK(phases.window_gain() == 2.0);
  // The queue drains: no back-off for the next three rounds.
  run(phases, {.smallest_rtt = 113ms, .in_flight = 1e9});
  run(phases, {.smallest_rtt = 113ms, .in_flight = 1e9});
  CHECK(run(phases, {.smallest_rtt = 113ms}).action == Action::kNone);
  CHECK(phases.phase() == Phase::kCruise);
  CHECK(run(phases, {.smallest_rtt = 113ms}).action == Action::kBackOff);
}

TEST_CASE("pacer phases: cruising backs off after three rounds that lose more than a fifth") {
  PacerPhases phases;
  reach_cruise(phases);
  for (int i = 0; i < 3; ++i) run(phases, {});
  run(phases, {.lost_fraction = 0.3});
  run(phases, {.lost_fraction = 0.3});
  CHECK(run(phases, {.lost_fraction = 0.05}).action == Action::kNone);  // random loss: the count starts over
  run(phases, {.lost_fraction = 0.3});
  run(phases, {.lost_fraction = 0.3});
  const auto decision = run(phases, {.lost_fraction = 0.3});
  CHECK(decision.action == Action::kBackOff);
  CHECK(decision.rate == Approx(0.75 * kRate));
  CHECK(phases.backoffs_for_loss() == 1);
  CHECK(phases.phase() == Phase::kDrain);
}
