// The pacer on a fake clock with live traffic: a stream's frames on a new geo path, small batches
// after start-up, tail repairs on lossy paths, and rounds of small answers.
#include "pacer_test_transfer.h"

using namespace pacer_test;

namespace {

// A live stream's frames on a new path: `frames` frames of `units` datagram units each, one made
// every `interval` from the start (the session is up, nothing sent yet). Each frame's latency:
// from when it was made to when its last unit was delivered, in order.
std::vector<ArqDuration> stream_frames(PathProfile path, std::size_t frames, std::size_t units, ArqDuration interval,
                                       std::uint64_t rng_seed) {
  PacedTransfer transfer(path, rng_seed, true, false, false, 2 * path.delay);
  std::vector<ArqDuration> latency;
  std::size_t made = 0;
  while (latency.size() < frames && transfer.now() < at(60s)) {
    while (made < frames && transfer.now() >= at(0ms) + made * interval) {
      transfer.queue(units);
      ++made;
    }
    transfer.run(transfer.now() + 1ms, false);
    while (latency.size() < frames && transfer.delivered().size() >= (latency.size() + 1) * units) {
      latency.push_back(std::chrono::duration_cast<ArqDuration>(transfer.now() - (at(0ms) + latency.size() * interval)));
    }
  }
  return latency;
}

}  // namespace

TEST_CASE("start-up jump: a live stream's frames on a new geo path arrive near the propagation delay", "[pacer][jump][cfd]") {
  // The CFD demo's cold rows on datagrams: a fresh session, frames from the first send on, at the
  // solver's rates on this machine (256x128: 131 KB frames at 50-71 frames/s; 128x64: 32 KB at
  // 167-250 frames/s). The first round trip is blind (the first window); the train of the first
  // frames measures the bottleneck, and the jump must pace above the production rate for the
  // queue of that round trip to drain within the run's first second. With a jump to half the
  // train's rate (about the production rate) the median was 2.4x and 4.5x the bound; with trains
  // of one burst only (a 32 KB frame is smaller than a train: no jump) 3.2x at 128x64.
  const bool large = GENERATE(true, false);
  const bool slower = GENERATE(true, false);
  const std::size_t units = large ? 94 : 24;
  const ArqDuration interval = large ? (slower ? 20ms : 14ms) : (slower ? 6ms : 4ms);
  const std::vector<ArqDuration> latency = stream_frames(kGeoPath, large ? 200 : 600, units, interval, 5);
  std::vector<ArqDuration> sorted = latency;
  std::sort(sorted.begin(), sorted.end());
  const double bound = 0.270 + units * 1472.0 / kGeoPath.rate;  // one way + the frame's serialisation
  const double median = std::chrono::duration<double>(sorted[sorted.size() / 2]).count();
  CAPTURE(units, interval.count(), median, bound, median / bound, std::chrono::duration<double>(latency.front()).count());
  REQUIRE(latency.size() == (large ? 200u : 600u));
  CHECK(median <= 1.5 * bound);
  CHECK(std::chrono::duration<double>(latency.front()).count() <= 1.5 * bound);  // the first frame: the first window
}

namespace {

// lp-perf's batches of 100 x 1 KiB (80 units), each sent when the last one's answers came back
// (`one_way` after its last unit arrived): each batch's time, queued to its last unit delivered
// (fake time, s).
std::vector<double> small_batches(PacedTransfer& transfer, int batches, ArqDuration one_way) {
  std::vector<double> took;
  for (int batch = 0; batch < batches; ++batch) {
    const ArqTime start = transfer.now();
    const std::size_t target = transfer.delivered().size() + 80;
    transfer.queue(80);
    while (transfer.delivered().size() < target && transfer.now() < start + 10s) transfer.run(transfer.now() + 1ms, false);
    REQUIRE(transfer.delivered().size() == target);
    took.push_back(std::chrono::duration<double>(transfer.now() - start).count());
    transfer.run(transfer.now() + one_way, false);  // the answers' way back
  }
  return took;
}

// A batch a round trip late: a unit its repairs did not recover was re-sent (the floor is 0.28 s).
std::size_t late_batches(const std::vector<double>& took) {
  return static_cast<std::size_t>(std::count_if(took.begin(), took.end(), [](double t) { return t > 0.5; }));
}

// New sessions (one per seed in [first_seed, end_seed)) on geo at `loss`, `batches` small batches
// each: their times appended to `all`, and how many were a round trip late.
std::size_t late_in_new_sessions(double loss, std::uint64_t first_seed, std::uint64_t end_seed, int batches,
                                 std::vector<double>& all) {
  std::size_t late = 0;
  for (std::uint64_t seed = first_seed; seed < end_seed; ++seed) {
    PacedTransfer transfer(geo_path(loss), seed, true, true, false, 540ms);
    const std::vector<double> took = small_batches(transfer, batches, 270ms);
    late += late_batches(took);
    all.insert(all.end(), took.begin(), took.end());
  }
  return late;
}

}  // namespace

TEST_CASE("paced datagrams: on a slow link, small batches after start-up leave at the train's rate", "[pacer][jump][idle]") {
  // 135 ms one way, 10 Mbit/s: lp-perf's 100 x 1 KiB batches (~80 units, 110 KB), each sent when
  // the last one's answers came back. Start-up paces faster than half the train's rate (no jump)
  // and leaves on its own bursts' queue; the bursts' samples measure the application. Cruising at
  // them (2.66 Mbit/s) took each batch a round trip longer; the train's rate is the path's.
  const PathProfile slow{.rate = 10e6 / 8, .delay = 135ms, .queue = 337'500};
  PacedTransfer transfer(slow, 21, true, false, false, 540ms);
  const std::vector<double> took = small_batches(transfer, 12, slow.delay);
  const double floor = 0.135 + 80 * (kPayload + kOverhead) / slow.rate;  // one way + serialisation
  CAPTURE(took, floor, transfer.pacer().train_rate() * 8 / 1e6, pacer_phase_name(transfer.pacer().phase()),
          pacer_jump_name(transfer.pacer()), transfer.pacer().pacing_rate() * 8 / 1e6);
  CHECK(transfer.pacer().train_rate() >= 0.9 * slow.rate);
  CHECK(transfer.pacer().phase() == DatagramPacer::Phase::kCruise);
  CHECK(transfer.pacer().pacing_rate() >= 0.85 * slow.rate);
  for (std::size_t batch = 4; batch < took.size(); ++batch) CHECK(took[batch] <= 1.15 * floor);
  CHECK(transfer.path().tail_drops() == 0);
}

TEST_CASE("tail repairs: a new session's first batches on a lossy path are protected too", "[pacer][fec][loss]") {
  // Repairs are sized for a loss estimate; with none before 200 units sent, a new session's first
  // batches had no repairs, and at 1 % loss a lost unit made 11 of 60 batches (6 sessions x 10)
  // a round trip late. From a prior of 1 %: 1 of 60.
  std::vector<double> all;
  const std::size_t late = late_in_new_sessions(0.01, 30, 36, 10, all);
  CAPTURE(all);
  CHECK(late <= 3);
}

TEST_CASE("tail repairs: a new session's first batch at 5 % loss is repaired from the prior", "[pacer][fec][loss]") {
  // The first batch's tail is sized before any ACK came back. With the units in flight counted as
  // loss-free evidence its repairs were sized for a third of the prior (3 for 80 units), and a
  // 5 % path lost more than that in most first batches: a round trip late, as a fresh lp-perf's
  // first batch was (3x the floor where 2x was possible).
  std::vector<double> all;
  const std::size_t late = late_in_new_sessions(0.05, 100, 140, 1, all);
  CAPTURE(all, late);
  CHECK(late <= 10);  // 5 of 40 (24 with the in-flight units as evidence)
}

TEST_CASE("tail repairs: at 2 % loss the estimate is the path's loss, and small batches stay at the floor", "[pacer][fec][loss]") {
  // Counting only fast re-sends, the units repairs recovered before three ACKs showed them missing
  // (a burst's last dozen) were left out, and the repairs sized for what they had left.
  PacedTransfer transfer(geo_path(0.02), 23, true, true, false, 540ms);
  const std::vector<double> took = small_batches(transfer, 30, 270ms);
  const lp::ArqStats stats = transfer.stats();
  const double estimate = lp::TailFecSender::loss_estimate(transfer.pacer().loss_ppm(), stats);
  CAPTURE(estimate, stats.messages_seen_missing, stats.fast_retransmits, stats.messages_sent, transfer.repairs_sent(), took);
  CHECK(stats.messages_seen_missing >= stats.fast_retransmits);
  CHECK(estimate >= 0.014);
  CHECK(estimate <= 0.04);
  CHECK(late_batches(took) <= 2);
}

TEST_CASE("tail repairs: on a path the cache knows to lose 5 %, a new session's first batches are protected", "[pacer][fec][loss]") {
  // From the 2 % prior a new session learns a 5 % path batch by batch, its repairs short meanwhile
  // (lp-perf by hand: most slow warm batches were a session's first three). The cache's loss as
  // the prior protects them from the first.
  std::size_t late_unknown = 0, late_known = 0;
  std::vector<double> unknown, known;
  for (std::uint64_t seed = 40; seed < 46; ++seed) {
    for (const bool cached : {false, true}) {
      PacedTransfer transfer(geo_path(0.05), seed, true, true, false, 540ms);
      if (cached) transfer.know_loss(50'000);
      const std::vector<double> took = small_batches(transfer, 4, 270ms);
      (cached ? late_known : late_unknown) += late_batches(took);
      auto& all = cached ? known : unknown;
      all.insert(all.end(), took.begin(), took.end());
    }
  }
  CAPTURE(unknown, known, late_unknown, late_known);
  CHECK(late_known <= 2);
  CHECK(late_known < late_unknown);
}

TEST_CASE("paced datagrams: a round of small answers says nothing of the path: start-up stays", "[pacer][loss][startup]") {
  // The answering end of lp-perf on geo at 5 % loss: rounds of 100 one-unit answers, the sender
  // dry after each. One round ended by the ARQ's timeout (an ACK lost: all 100 marked lost), or
  // one delayed by a loaded host, ended start-up, and cruise took what the answers had delivered
  // (0.1-0.24 Mbit/s): each later batch of answers 0.3-0.7 s late.
  const bool timeout = GENERATE(true, false);
  CAPTURE(timeout);
  DatagramPacer pacer(540ms);
  std::uint64_t id = 0;
  ArqTime now = at(0ms);
  auto answer_round = [&](ArqDuration ack_after) {
    for (int answer = 0; answer < 100; ++answer) pacer.on_sent(now, id++, 80);
    pacer.on_application_limited();
    now += ack_after;
    pacer.on_ack(now, id, {});
  };
  answer_round(540ms);
  answer_round(540ms);
  const double before = pacer.pacing_rate();
  if (timeout) {
    for (int answer = 0; answer < 100; ++answer) pacer.on_sent(now, id++, 80);
    pacer.on_application_limited();
    now += 900ms;
    pacer.on_timeout();  // the ARQ re-sends all 100
    for (int resent = 0; resent < 100; ++resent) pacer.on_sent(now, id++, 80);
    now += 540ms;
    pacer.on_ack(now, id, {});
  } else {
    answer_round(800ms);  // a round trip 260 ms long: a queue, if the sender had been busy
  }
  for (int round = 0; round < 4; ++round) answer_round(540ms);
  CAPTURE(pacer_phase_name(pacer.phase()), before * 8 / 1e6, pacer.pacing_rate() * 8 / 1e6);
  CHECK(pacer.phase() == DatagramPacer::Phase::kStartup);
  CHECK(pacer.pacing_rate() >= 0.9 * before);
}
