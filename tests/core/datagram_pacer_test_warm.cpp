// The pacer on a fake clock: the warm start (a seed right, too high, too low, refused), a cold
// start-up on geo and beside another flow, and what the pacer learns for the path cache.
#include "pacer_test_transfer.h"

using namespace pacer_test;

namespace {

struct BurstResult {
  ArqDuration took{};   // until the last message was delivered
  std::uint64_t lost = 0;  // tail drops at the bottleneck
};

// A fresh transfer (seeded with `seed_rate` if not 0) sends `count` messages at once.
BurstResult burst(double seed_rate, std::size_t count, std::uint64_t rng_seed) {
  PacedTransfer transfer(kLongPath, rng_seed);
  if (seed_rate > 0) REQUIRE(transfer.pacer().seed(seed_rate, kLongRtt));
  transfer.queue(count);
  while (transfer.delivered().size() < count && transfer.now() < at(30s)) transfer.run(transfer.now() + 5ms, false);
  REQUIRE(transfer.delivered().size() == count);
  return {std::chrono::duration_cast<ArqDuration>(transfer.now() - ArqTime{}), transfer.path().tail_drops()};
}

// When a bulk transfer's estimate first reaches `share` of the bottleneck (fake time).
ArqDuration time_to_rate(PacedTransfer& transfer, double share, ArqTime limit) {
  while (transfer.pacer().bandwidth() < share * kLongPath.rate && transfer.now() < limit) {
    transfer.run(transfer.now() + 5ms, true);
  }
  return std::chrono::duration_cast<ArqDuration>(transfer.now() - ArqTime{});
}

}  // namespace

TEST_CASE("warm start: a correct seed delivers a burst at the path's rate from the first round trip", "[pacer][warm]") {
  // 3 MB: 0.48 s of the bottleneck, plus 0.1 s one way.
  const std::size_t count = 2200;
  const double ideal = 0.1 + static_cast<double>(count * (kPayload + kOverhead)) / kLongPath.rate;
  const BurstResult cold = burst(0, count, 21);
  const BurstResult warm = burst(kLongPath.rate, count, 21);
  CAPTURE(ideal, cold.took.count(), cold.lost, warm.took.count(), warm.lost);
  // Within two round trips of what the bottleneck allows (the seed paces at 0.85 x).
  CHECK(std::chrono::duration<double>(warm.took).count() <= ideal + 2 * 0.2);
  CHECK(warm.took < cold.took);
  CHECK(warm.lost <= cold.lost);
  // A bulk transfer: the seeded start-up overfills the queue no more than a cold one.
  PacedTransfer cold_bulk(kLongPath, 21), warm_bulk(kLongPath, 21);
  REQUIRE(warm_bulk.pacer().seed(kLongPath.rate, kLongRtt));
  cold_bulk.run(at(4s), true);
  warm_bulk.run(at(4s), true);
  CAPTURE(cold_bulk.path().tail_drops(), warm_bulk.path().tail_drops(), cold_bulk.delivered_bytes(), warm_bulk.delivered_bytes());
  CHECK(warm_bulk.pacer().seed_state() == DatagramPacer::Seed::kConfirmed);
  CHECK(warm_bulk.path().tail_drops() <= cold_bulk.path().tail_drops());
  CHECK(warm_bulk.delivered_bytes() >= cold_bulk.delivered_bytes());
  CHECK(warm_bulk.pacer().bandwidth() >= 0.8 * kLongPath.rate);
}

TEST_CASE("warm start: a seed 4 x too high falls back to the bottleneck within a few round trips", "[pacer][warm]") {
  PacedTransfer transfer(kLongPath, 22);
  REQUIRE(transfer.pacer().seed(4 * kLongPath.rate, kLongRtt));
  transfer.run(at(1s), true);  // 5 round trips
  CAPTURE(transfer.pacer().bandwidth(), transfer.pacer().pacing_rate(), pacer_phase_name(transfer.pacer().phase()),
          transfer.path().tail_drops(), transfer.pacer().lost_datagrams());
  CHECK(transfer.pacer().seed_state() == DatagramPacer::Seed::kRejected);
  CHECK(transfer.pacer().bandwidth() <= 1.3 * kLongPath.rate);
  transfer.run(at(4s), true);
  CAPTURE(transfer.path().tail_drops());
  CHECK(transfer.pacer().bandwidth() <= 1.3 * kLongPath.rate);
  CHECK(transfer.pacer().bandwidth() >= 0.8 * kLongPath.rate);
  // Bounded loss: at most the seed's one window (1.25 x 0.85 x the seed rate x RTT) before ACKs
  // show it (a cold start-up loses none here since its window keeps the queue within one BDP).
  CHECK(static_cast<double>(transfer.path().tail_drops()) * 1472 <= 1.25 * 0.85 * 4 * kLongPath.rate * 0.2);
  // And no standing queue once it fell back.
  ArqDuration worst = 0us;
  for (int i = 0; i < 20; ++i) {
    transfer.run(transfer.now() + 100ms, true);
    worst = std::max(worst, transfer.path().queue_delay(transfer.now()));
  }
  CHECK(worst <= kLongRtt / 2 + 10ms);
}

TEST_CASE("warm start: a seed 4 x too low still ramps as start-up would", "[pacer][warm]") {
  // Against start-up's doubling. (With the start-up jump, below, a cold start reaches the rate
  // sooner than a seed this low, which doubles from a quarter of the path: 0.94 s against 1.09 s.)
  PacedTransfer cold(kLongPath, 23);
  const ArqDuration cold_time = time_to_rate(cold, 0.8, at(10s));
  PacedTransfer transfer(kLongPath, 23);
  REQUIRE(transfer.pacer().seed(kLongPath.rate / 4, kLongRtt));
  const ArqDuration warm_time = time_to_rate(transfer, 0.8, at(10s));
  transfer.run(at(4s), true);
  cold.run(at(4s), true);
  CAPTURE(cold_time.count(), warm_time.count(), transfer.path().tail_drops(), cold.path().tail_drops(),
          pacer_seed_name(transfer.pacer().seed_state()));
  CHECK(transfer.pacer().seed_state() == DatagramPacer::Seed::kConfirmed);
  CHECK(warm_time <= cold_time);
  CHECK(transfer.path().tail_drops() <= cold.path().tail_drops());
  CHECK(transfer.pacer().phase() != DatagramPacer::Phase::kStartup);
}

TEST_CASE("warm start: a seed below a cold start's first round, or after ACKs, is not taken", "[pacer][warm]") {
  DatagramPacer pacer(50ms);
  CHECK_FALSE(pacer.seed(4e5, 200ms));  // 340 KB/s x 200 ms: less than start-up's first window
  CHECK(pacer.seed_state() == DatagramPacer::Seed::kNone);
  pacer.on_sent(at(0ms), 0, 1472);
  pacer.on_ack(at(200ms), 1, {});
  CHECK_FALSE(pacer.seed(6.25e6, 200ms));
}

TEST_CASE("warm start: pings before the burst do not get a correct seed rejected", "[pacer][warm]") {
  // lp-perf's pattern: 3 pings one round trip apart, then 100 x 1 MiB. The pings' ACKs measure the
  // application; judged on them and on the burst's first part, a correct seed was rejected on geo.
  PacedTransfer transfer(kLongPath, 24);
  REQUIRE(transfer.pacer().seed(kLongPath.rate, kLongRtt));
  for (int i = 0; i < 3; ++i) {
    transfer.queue(1);
    transfer.run(transfer.now() + kLongRtt + 10ms, false);
  }
  CHECK(transfer.pacer().seed_state() == DatagramPacer::Seed::kSeeded);
  transfer.queue(2200);
  transfer.run(transfer.now() + 2s, false);
  CHECK(transfer.delivered().size() == 2203);
  CHECK(transfer.pacer().seed_state() == DatagramPacer::Seed::kConfirmed);
  CHECK(transfer.path().tail_drops() == 0);
}

namespace {

// (kGeoPath and kGeoRtt: above.)
// Start-up may lose this many datagrams to the queue: a few against the ~60000 it sends in its
// first 10 s. The pacer before the start-up window and the in-round delay test lost 27560 here
// (the 2/ln 2 window over the smoothed RTT let 5.8 BDPs into flight; the delay test came a round
// late); the emulated geo link showed 32-37 thousand.
constexpr std::uint64_t kMaxStartupDrops = 100;

}  // namespace

TEST_CASE("paced datagrams: a cold start-up on geo fills the one-BDP queue without overflowing it", "[pacer][startup]") {
  PacedTransfer transfer(kGeoPath, 31);
  ArqTime reached{};
  while (transfer.now() < at(10s)) {
    transfer.run(transfer.now() + 5ms, true);
    if (reached == ArqTime{} && transfer.pacer().bandwidth() >= 0.8 * kGeoPath.rate) reached = transfer.now();
  }
  CAPTURE(transfer.path().tail_drops(), transfer.pacer().lost_datagrams(), transfer.stats().messages_sent,
          std::chrono::duration<double>(reached - ArqTime{}).count(), pacer_phase_name(transfer.pacer().phase()));
  CHECK(transfer.path().tail_drops() <= kMaxStartupDrops);
  // As fast as doubling from the first window allows: 7 doublings from 64 datagrams to the
  // path's ~7100 per round trip, one round for the first ACKs, and the filter's lag.
  CHECK(reached != ArqTime{});
  CHECK(reached - ArqTime{} <= 12 * kGeoRtt);
  CHECK(transfer.pacer().phase() == DatagramPacer::Phase::kCruise);
  CHECK(transfer.pacer().bandwidth() >= 0.95 * kGeoPath.rate);
}

TEST_CASE("paced datagrams: a start-up beside another flow does not overflow the shared queue", "[pacer][startup]") {
  // A flow of 40 % of the bottleneck starts with the pacer's cold start-up: start-up must stop at
  // what is left, not overflow the shared queue (the fairness bench on geo: when LongPipe's and
  // cubic's start-ups collided, cubic needed most of the minute to recover).
  PacedTransfer transfer(kLongPath, 32);
  transfer.path().add_competitor(0.4 * kLongPath.rate, transfer.now());
  // Start-up, drain and the first cruise rounds: 15 round trips.
  transfer.run(at(3s), true);
  CAPTURE(transfer.path().tail_drops(), transfer.path().competitor_drops(), transfer.pacer().bandwidth(),
          pacer_phase_name(transfer.pacer().phase()), transfer.pacer().backoffs_for_delay());
  CHECK(transfer.path().tail_drops() + transfer.path().competitor_drops() == 0);
  // Start-up is over (cruising, or draining after a delay back-off: the queue its estimate leaves
  // beside a flow that never backs off stands, and the cruise yields to it).
  CHECK(transfer.pacer().phase() != DatagramPacer::Phase::kStartup);
  // It took about what the other flow left, not all of it (the estimate is a FIFO's share of a
  // queue start-up built: a little above the rest).
  CHECK(transfer.pacer().bandwidth() >= 0.45 * kLongPath.rate);
  CHECK(transfer.pacer().bandwidth() <= 0.75 * kLongPath.rate);
}

TEST_CASE("paced datagrams: what the pacer learnt for the cache is the path's rate and its random loss", "[pacer][cache]") {
  // The warm-start cache entry of a datagram session (and LONGPIPE_CARRIER=auto's judgement from
  // it): the rate once start-up is over, and loss only from rounds without a queue, so start-up's
  // or a probe's drops at a full queue do not make a loss-free path look lossy.
  const double loss = GENERATE(0.0, 0.01, 0.05);
  CAPTURE(loss);
  PathProfile path = kLongPath;
  path.loss = loss;
  PacedTransfer transfer(path, 33);
  CHECK(transfer.pacer().path_rate() == 0);
  CHECK(transfer.pacer().loss_ppm() == -1);
  transfer.run(at(10s), true);
  CAPTURE(transfer.pacer().path_rate(), transfer.pacer().loss_ppm(), transfer.pacer().lost_datagrams(), transfer.path().tail_drops());
  CHECK(transfer.pacer().path_rate() >= 0.9 * path.rate);
  CHECK(transfer.pacer().path_rate() <= 1.1 * path.rate);
  REQUIRE(transfer.pacer().loss_ppm() >= 0);
  CHECK(static_cast<double>(transfer.pacer().loss_ppm()) >= 0.7e6 * loss);
  CHECK(static_cast<double>(transfer.pacer().loss_ppm()) <= 1.5e6 * loss + 1000);
  REQUIRE(transfer.pacer().min_rtt().has_value());
  const auto min_rtt = std::chrono::duration_cast<std::chrono::microseconds>(*transfer.pacer().min_rtt());
  CHECK(lp::path_prefers_datagrams(min_rtt, transfer.pacer().loss_ppm()) == (loss > 0));
}

TEST_CASE("paced datagrams: a needless re-send is not counted as the path's loss", "[pacer][cache]") {
  // 8 rounds of 1000 datagrams on a 200 ms path, all acknowledged a round trip later. In round 5,
  // 500 of them are re-sent 100 ms after they left: needlessly (a late wake-up's timeout: their
  // ACKs come 100 ms later, from the first copies) or because they were lost (their ACKs come a
  // round trip after the re-send). On geo the needless kind made a loss-free path 1.8 % lossy.
  const bool lost = GENERATE(false, true);
  CAPTURE(lost);
  DatagramPacer pacer(200ms);
  constexpr std::uint64_t kPerRound = 1000;
  for (std::uint64_t round = 0; round < 8; ++round) {
    const ArqTime start = at(round * 200ms);
    if (round > 0) {
      // The previous round's ACK: everything, or (lost) everything but the 500 re-sent below.
      const std::uint64_t cumulative = round * kPerRound;
      if (lost && round == 6) {
        const lp::ArqSackRange rest{5500, 6000};
        pacer.on_ack(start, 5000, std::span(&rest, 1));
      } else {
        pacer.on_ack(start, cumulative, {});
      }
    }
    for (std::uint64_t id = round * kPerRound; id < (round + 1) * kPerRound; ++id) pacer.on_sent(start, id, 1472);
    if (round == 5 && !lost) {
      pacer.on_timeout();
      for (std::uint64_t id = 5000; id < 5500; ++id) pacer.on_sent(start + 100ms, id, 1472);
    }
    if (round == 6 && lost) {
      for (std::uint64_t id = 5000; id < 5500; ++id) pacer.on_sent(start + 1ms, id, 1472);
    }
  }
  pacer.on_ack(at(1600ms), 8 * kPerRound, {});
  CAPTURE(pacer.loss_ppm());
  REQUIRE(pacer.loss_ppm() >= 0);
  if (lost) {
    CHECK(pacer.loss_ppm() >= 50'000);  // 500 of 8500 sent
  } else {
    CHECK(pacer.loss_ppm() == 0);
  }
}
