// The pacer's start-up jump on a fake clock: the train's ACK spacing, ACKs delayed, bunched or
// read late, geo and a shared path, beside TCP CUBIC, and late wake-ups of the sender.
#include "pacer_test_transfer.h"

using namespace pacer_test;

namespace {

// When a bulk transfer's estimate first reaches `share` of `rate`, checked every 5 ms of fake time.
ArqTime reaches(PacedTransfer& transfer, double share, double rate, ArqTime limit) {
  while (transfer.pacer().bandwidth() < share * rate && transfer.now() < limit) {
    transfer.run(transfer.now() + 5ms, true);
  }
  return transfer.now();
}

// A pacer that sent a train of `count` full datagrams back to back at t = 0 and got its ACKs one
// round trip later: `per_ack` datagrams per ACK, `gap` apart.
// `send_gap`: the sends' own spacing (an application that hands its data over slowly).
// `last_late`: the last ACK comes this much later still (the receiver's ACK delay, when the
// train's end falls between two of its every-kDatagramAckEvery ACKs); with `arrivals` each ACK
// reports when its datagrams arrived (`gap` / `per_ack` apart), as the datagram channel's do;
// without, the ACK times date them.
DatagramPacer acknowledged_train(std::uint64_t count, std::uint64_t per_ack, ArqDuration gap,
                                 ArqDuration send_gap = 0us, ArqDuration last_late = 0us, bool arrivals = false) {
  DatagramPacer pacer(540ms, true);
  for (std::uint64_t id = 0; id < count; ++id) {
    const ArqTime when = at(0ms) + static_cast<int>(id) * send_gap;
    REQUIRE(pacer.can_send(when));
    pacer.on_sent(when, id, 1472);
  }
  ArqTime when = at(540ms);
  for (std::uint64_t acked = 0; acked < count; when += gap) {
    const std::uint64_t first = acked;
    acked = std::min(count, acked + per_ack);
    std::optional<DatagramPacer::Arrivals> reported;
    if (arrivals) {
      const auto arrival = [&](std::uint64_t id) {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(at(540ms).time_since_epoch()) +
               static_cast<int>(id + 1) * gap / per_ack;
      };
      reported = DatagramPacer::Arrivals{arrival(acked - 1), arrival(first), static_cast<std::uint32_t>(acked - first)};
    }
    pacer.on_ack(acked == count ? when + last_late : when, acked, {}, reported);
  }
  return pacer;
}

// The same train, read by a receiver that stalled: its datagrams arrived `arrival_gap` apart, but
// it read them all at once a round trip after they left and acknowledged them `per_ack` at a time
// within microseconds, each ACK reporting when its datagrams arrived (by the receiver's own clock,
// which has nothing to do with the sender's).
DatagramPacer train_read_late(std::uint64_t count, std::uint64_t per_ack, ArqDuration arrival_gap) {
  DatagramPacer pacer(540ms, true);
  for (std::uint64_t id = 0; id < count; ++id) pacer.on_sent(at(0ms), id, 1472);
  const std::chrono::nanoseconds receiver_clock = std::chrono::hours(1000);
  const auto arrival = [&](std::uint64_t id) { return receiver_clock + static_cast<int>(id) * arrival_gap; };
  ArqTime when = at(600ms);
  for (std::uint64_t acked = 0; acked < count; when += 10us) {
    const std::uint64_t first = acked;
    acked = std::min(count, acked + per_ack);
    pacer.on_ack(when, acked, {},
                 DatagramPacer::Arrivals{arrival(acked - 1), arrival(first), static_cast<std::uint32_t>(acked - first)});
  }
  return pacer;
}

}  // namespace

TEST_CASE("start-up jump: the train's ACK spacing sets the pacing rate after one round trip", "[pacer][jump]") {
  // 64 datagrams spread by a 155 Mbit/s bottleneck: 76 us apart; acknowledged one by one, or as the
  // datagram carrier's receiver does, one ACK per kDatagramAckEvery.
  const std::uint64_t per_ack = GENERATE(std::uint64_t{1}, std::uint64_t{lp::kDatagramAckEvery});
  const DatagramPacer pacer = acknowledged_train(64, per_ack, per_ack * 76us);
  CAPTURE(per_ack, pacer.train_rate() * 8 / 1e6, pacer.pacing_rate() * 8 / 1e6, pacer_jump_name(pacer));
  CHECK(pacer.train_rate() == Approx(1472 / 76e-6).epsilon(0.02));
  CHECK(pacer.jump_state() == DatagramPacer::Jump::kTaken);
  CHECK(pacer.seed_state() == DatagramPacer::Seed::kSeeded);
  CHECK_FALSE(pacer.warm_seed());
  CHECK(pacer.pacing_rate() == Approx(0.75 * pacer.train_rate()).epsilon(0.01));  // kJumpShare
  // A window of that rate over the round trip, not start-up's 128 datagrams.
  CHECK(pacer.window_bytes() >= 0.5 * 0.75 * pacer.train_rate() * 0.54);
}

TEST_CASE("start-up jump: a train's last ACK, delayed by the receiver, does not lower its rate", "[pacer][jump]") {
  // 62 datagrams 76 us apart, one ACK per kDatagramAckEvery: the last two units wait for the ACK
  // delay (1-2 ms at the event loop's resolution). Measured to that ACK's time the train read 25 %
  // low; the ACK reports when they arrived.
  const DatagramPacer pacer =
      acknowledged_train(62, lp::kDatagramAckEvery, lp::kDatagramAckEvery * 76us, 0us, 1500us, true);
  CAPTURE(pacer.train_rate() * 8 / 1e6, pacer_jump_name(pacer));
  CHECK(pacer.jump_state() == DatagramPacer::Jump::kTaken);
  CHECK(pacer.train_rate() == Approx(1472 / 76e-6).epsilon(0.02));
}

TEST_CASE("start-up jump: a small message before the first burst does not spoil its train", "[pacer][jump]") {
  // The CFD producer's pattern: a small message, then frames that never let the pipe empty. The
  // train is the burst, not the message sent 20 ms before it (first version: no train at all).
  DatagramPacer pacer(540ms, true);
  pacer.on_sent(at(0ms), 0, 200);
  for (std::uint64_t id = 1; id < 64; ++id) {
    REQUIRE(pacer.can_send(at(20ms)));
    pacer.on_sent(at(20ms), id, 1472);
  }
  pacer.on_ack(at(540ms), 1, {});
  ArqTime when = at(560ms);
  for (std::uint64_t acked = 2; acked <= 64; ++acked, when += 76us) pacer.on_ack(when, acked, {});
  CAPTURE(pacer.train_rate() * 8 / 1e6, pacer_jump_name(pacer));
  CHECK(pacer.jump_state() == DatagramPacer::Jump::kTaken);
  CHECK(pacer.train_rate() == Approx(1472 / 76e-6).epsilon(0.02));
}

TEST_CASE("start-up jump: a receiver that read the train late measures it by its arrival times", "[pacer][jump]") {
  // The CFD demo on a loaded host: the consumer read the train in one or a few turns, so ACK times
  // said nothing (the jump was refused and start-up took ~5 round trips to the stream's rate). The
  // arrival times each ACK reports keep the bottleneck's spacing: 76 us a datagram at 155 Mbit/s.
  const std::uint64_t per_ack = GENERATE(std::uint64_t{1}, std::uint64_t{4}, std::uint64_t{16}, std::uint64_t{64});
  const DatagramPacer pacer = train_read_late(64, per_ack, 76us);
  CAPTURE(per_ack, pacer.train_rate() * 8 / 1e6, pacer_jump_name(pacer));
  CHECK(pacer.jump_state() == DatagramPacer::Jump::kTaken);
  CHECK(pacer.train_rate() == Approx(1472 / 76e-6).epsilon(0.02));
}

TEST_CASE("start-up jump: ACKs bunched by a stalled receiver, or too few, make no jump", "[pacer][jump]") {
  // Two ACKs for the whole train, timed by when they came (no arrival times): within 10 us.
  const DatagramPacer bunched = acknowledged_train(64, 32, 10us);
  // A train of 10 datagrams.
  const DatagramPacer short_train = acknowledged_train(10, 1, 76us);
  // The ACKs no more spread than the sends: the train measured the sender, not the path.
  const DatagramPacer slow_sender = acknowledged_train(64, 1, 76us, 60us);
  // One ACK per datagram, but all within 0.07 ms (a stalled receiver answering what piled up, one
  // ACK per read; on geo such trains read 8.9 and 12.1 Gbit/s): faster than the sender can hand a
  // train to the link.
  const DatagramPacer instant = acknowledged_train(64, 1, 1us);
  using Refusal = DatagramPacer::TrainRefusal;
  const std::pair<const DatagramPacer*, Refusal> cases[] = {{&bunched, Refusal::kShortSpan},
                                                             {&short_train, Refusal::kFewDatagrams},
                                                             {&slow_sender, Refusal::kSenderPaced},
                                                             {&instant, Refusal::kShortSpan}};
  for (const auto& [pacer, why] : cases) {
    CAPTURE(pacer->train_rate(), pacer_jump_name(*pacer), train_refusal_name(why));
    // Each says why, for the statistics (a loaded host's start-up that never jumped).
    CHECK(pacer->trains() == 1);
    CHECK(pacer->train_refusals(why) == 1);
    CHECK(pacer->jump_state() == DatagramPacer::Jump::kWaiting);
    CHECK(pacer->seed_state() == DatagramPacer::Seed::kNone);
    CHECK(pacer->phase() == DatagramPacer::Phase::kStartup);
    CHECK(pacer->train_rate() == 0);
  }
  DatagramPacer off(540ms);  // the pacer's own default (LONGPIPE_START_JUMP=off)
  off.on_sent(at(0ms), 0, 1472);
  CHECK(off.jump_state() == DatagramPacer::Jump::kOff);
}

TEST_CASE("start-up jump: a new path on geo reaches 0.8 x the link within 5 round trips, no drops", "[pacer][jump]") {
  // Doubling from the first window took 10-12 round trips here (the test above allows 12).
  PacedTransfer transfer(kGeoPath, 41, true);
  const ArqTime reached = reaches(transfer, 0.8, kGeoPath.rate, at(10s));
  transfer.run(at(10s), true);
  CAPTURE(std::chrono::duration<double>(reached - ArqTime{}).count(), transfer.pacer().train_rate() * 8 / 1e6,
          pacer_jump_name(transfer.pacer()), pacer_phase_name(transfer.pacer().phase()), transfer.path().tail_drops(),
          transfer.pacer().lost_datagrams(), transfer.pacer().bandwidth() * 8 / 1e6);
  CHECK(reached - ArqTime{} <= 5 * kGeoRtt);
  CHECK(transfer.path().tail_drops() == 0);
  CHECK(transfer.pacer().seed_state() == DatagramPacer::Seed::kConfirmed);
  CHECK(transfer.pacer().phase() == DatagramPacer::Phase::kCruise);
  CHECK(transfer.pacer().bandwidth() >= 0.95 * kGeoPath.rate);
  CHECK(transfer.pacer().bandwidth() <= 1.05 * kGeoPath.rate);
}

TEST_CASE("start-up jump: a 10 MB burst on a new geo path completes sooner than with doubling", "[pacer][jump]") {
  // lp-perf's 1 MiB x 10 cold: the first round trip's train, then the jump.
  constexpr std::size_t kUnits = (10u << 20) / kPayload;
  ArqTime took[2];
  std::uint64_t drops[2];
  for (const bool jump : {false, true}) {
    PacedTransfer transfer(kGeoPath, 42, jump);
    transfer.queue(kUnits);
    while (transfer.delivered().size() < kUnits && transfer.now() < at(30s)) transfer.run(transfer.now() + 5ms, false);
    REQUIRE(transfer.delivered().size() == kUnits);
    took[jump] = transfer.last_delivery();
    drops[jump] = transfer.path().tail_drops();
  }
  CAPTURE(std::chrono::duration<double>(took[0] - ArqTime{}).count(),
          std::chrono::duration<double>(took[1] - ArqTime{}).count(), drops[0], drops[1]);
  // Ideal: 0.27 s one way + 0.55 s at the link's rate.
  CHECK(took[1] - ArqTime{} <= 4 * kGeoRtt);
  CHECK(took[1] < took[0]);
  CHECK(drops[1] == 0);
}

TEST_CASE("start-up jump: beside a flow that takes 60 % of the link, it takes no more than the rest",
          "[pacer][jump]") {
  // A packet train measures the bottleneck's capacity, not what is free: the jump's share and its
  // judgement must keep it from overfilling a queue another flow keeps busy.
  PacedTransfer transfer(kLongPath, 43, true);
  transfer.path().add_competitor(0.6 * kLongPath.rate, transfer.now());
  ArqDuration worst = 0us;
  while (transfer.now() < at(3s)) {
    transfer.run(transfer.now() + 10ms, true);
    worst = std::max(worst, transfer.path().queue_delay(transfer.now()));
  }
  CAPTURE(transfer.path().tail_drops(), transfer.path().competitor_drops(),
          transfer.pacer().bandwidth() / kLongPath.rate, transfer.pacer().train_rate() / kLongPath.rate,
          pacer_jump_name(transfer.pacer()),
          pacer_phase_name(transfer.pacer().phase()), std::chrono::duration<double>(worst).count());
  CHECK(transfer.pacer().jump_state() == DatagramPacer::Jump::kTaken);
  CHECK(transfer.path().tail_drops() + transfer.path().competitor_drops() == 0);
  CHECK(transfer.pacer().phase() != DatagramPacer::Phase::kStartup);
  // A FIFO's share of a queue it keeps (cruising beside a flow that never backs off keeps a queue
  // growing until the delay back-off: "Limits and what is left"), not the train's whole link.
  CHECK(transfer.pacer().bandwidth() <= 0.6 * kLongPath.rate);
  CHECK(transfer.pacer().bandwidth() >= 0.25 * kLongPath.rate);
}


namespace {

// Shares of the link (bytes on the wire over the link's rate) after the first tenth of `seconds`,
// of a bulk transfer with the start-up jump and a TCP CUBIC flow that start together on `path`
// (apps/bench/fairness: lp-soak and iperf3 -C cubic, both at second 0; --tune-hosts: the TCP
// buffers hold 2 x the bandwidth-delay product).
struct Shares {
  double longpipe = 0, tcp = 0;
};
Shares beside_cubic(const PathProfile& path, int seconds, std::uint64_t rng_seed) {
  PacedTransfer transfer(path, rng_seed, true);
  transfer.path().add_cubic(transfer.now(), 2 * static_cast<double>(path.queue));
  const int skip = seconds / 10;
  transfer.run(at(std::chrono::seconds(skip)), true);
  const std::uint64_t longpipe = transfer.delivered_bytes(), tcp = transfer.path().cubic_bytes();
  transfer.run(at(std::chrono::seconds(seconds)), true);
  const double capacity = path.rate * (seconds - skip);
  const double wire = static_cast<double>(kPayload + kOverhead) / kPayload;
  Shares shares{static_cast<double>(transfer.delivered_bytes() - longpipe) * wire / capacity,
                static_cast<double>(transfer.path().cubic_bytes() - tcp) / capacity};
  CAPTURE(shares.longpipe, shares.tcp, pacer_jump_name(transfer.pacer()), transfer.pacer().train_rate() / path.rate,
          transfer.pacer().backoffs_for_delay(), transfer.path().cubic_window(), transfer.path().tail_drops(),
          transfer.path().competitor_drops());
  REQUIRE(transfer.pacer().jump_state() == DatagramPacer::Jump::kTaken);
  // Everything LongPipe delivered came in order, once.
  for (std::size_t i = 0; i < transfer.delivered().size(); ++i) REQUIRE(transfer.delivered()[i] == i);
  return shares;
}

}  // namespace

// 60 s of geo beside CUBIC: [long], the plain build's (the 200 ms path below runs in every build).
TEST_CASE("start-up jump: beside a TCP CUBIC flow that starts with it on geo, each keeps a quarter", "[pacer][jump][fair][long]") {
  // The goal: beside a TCP flow for 60 s each gets at least a quarter of the link. The jump fills
  // geo in a few round trips while CUBIC's slow start is still small; CUBIC sees the queue and
  // leaves slow start early (HyStart), so it can only grow in congestion avoidance into what the
  // cruise gives up. Before the cruise yielded to a standing queue: 83 / 15 % (iperf3 on the
  // emulated link: 71-74 / 19 %).
  const Shares shares = beside_cubic(kGeoPath, 60, 51);
  CHECK(shares.tcp >= 0.25);
  CHECK(shares.longpipe >= 0.25);
  CHECK(shares.longpipe + shares.tcp >= 0.9);  // and the link stays full
}

TEST_CASE("start-up jump: beside a TCP CUBIC flow that starts with it on a 200 ms path, both keep a third",
          "[pacer][jump][fair]") {
  // 50 Mbit/s, 200 ms: before, 73 / 27 %.
  const Shares shares = beside_cubic(kLongPath, 40, 51);
  CHECK(shares.tcp >= 1.0 / 3);
  CHECK(shares.longpipe >= 1.0 / 3);
  CHECK(shares.longpipe + shares.tcp >= 0.9);
}

// A loaded host wakes the sending thread late (docs/engine/datagram-carrier.md, "The sending thread on a loaded
// host"). 20 Mbit/s, 200 ms round trip, one-BDP queue: cruising, a late wake-up is made up as far as
// it refills one bandwidth-delay product in flight, and at most a quarter of the minimum RTT (50 ms).
TEST_CASE("late wake-ups (LONGPIPE_PACING_CATCH_UP=on): cruising, a late wake-up sends the time it missed, as far as the pipe takes it",
          "[pacer][late]") {
  const PathProfile path{.rate = 2.5e6, .delay = 100ms, .queue = 500'000};
  PacedTransfer transfer(path, 31, false, false, true);
  transfer.run(at(8s), true);
  REQUIRE(transfer.pacer().phase() == DatagramPacer::Phase::kCruise);
  REQUIRE(transfer.pacer().min_rtt().has_value());
  const ArqDuration most = *transfer.pacer().min_rtt() / 4;
  const double datagram = kPayload + kOverhead;
  const auto seconds = [](auto d) { return std::chrono::duration<double>(d).count(); };
  // One turn `late` after pacing's due time: what it sent, and what it missed (0: none).
  const auto turn = [&](ArqDuration late, double& sent, double& missed) {
    const ArqTime due = transfer.pacer().next_send_time() + DatagramPacer::kPacingSlack;
    const std::uint64_t before = transfer.sent_bytes();
    const ArqTime wake = std::max(transfer.now(), due) + late;
    transfer.late_wake(std::chrono::duration_cast<ArqDuration>(wake - transfer.now()));
    sent = static_cast<double>(transfer.sent_bytes() - before);
    missed = seconds(wake - due);
  };
  const auto pipe = [&] { return transfer.pacer().bandwidth() * seconds(*transfer.pacer().min_rtt()); };
  double sent = 0, missed = 0;
  // 40 ms late: the stall's ACKs emptied the pipe by ~40 ms, and the turn refills it at once (10 ms
  // of it before): never more than it missed, and no more than one BDP in flight (and pacing's 1 ms).
  auto behind = transfer.pacer().behind();
  turn(40ms, sent, missed);
  const double rate = transfer.pacer().pacing_rate();
  CAPTURE(rate, sent, missed, transfer.pacer().in_flight(), pipe());
  CHECK(sent >= rate * 0.030);
  CHECK(sent <= rate * (missed + 0.001) + 2 * datagram);
  CHECK(static_cast<double>(transfer.pacer().in_flight()) <= pipe() + rate * 0.001 + 2 * datagram);
  CHECK(transfer.pacer().behind() - behind <= 10ms);
  // 300 ms late: no more than a quarter of the minimum RTT leaves at once; the rest is given up and
  // counted.
  transfer.run(transfer.now() + 2s, true);
  behind = transfer.pacer().behind();
  turn(300ms, sent, missed);
  CAPTURE(sent, missed, transfer.pacer().in_flight(), pipe());
  CHECK(sent <= transfer.pacer().pacing_rate() * seconds(most + 1ms) + 2 * datagram);
  CHECK(sent >= transfer.pacer().pacing_rate() * 0.030);
  CHECK(transfer.pacer().behind() - behind >= 300ms - most - 1ms);
}

TEST_CASE("late wake-ups: a host that runs the sender only every 40 ms keeps the link busy with LONGPIPE_PACING_CATCH_UP=on", "[pacer][late]") {
  const PathProfile path{.rate = 2.5e6, .delay = 100ms, .queue = 500'000};
  const bool catch_up = GENERATE(false, true);  // LONGPIPE_PACING_CATCH_UP
  PacedTransfer transfer(path, 37, false, false, catch_up);
  transfer.run(at(8s), true);
  REQUIRE(transfer.pacer().phase() == DatagramPacer::Phase::kCruise);
  transfer.wake_every(40ms);
  const double rate = goodput(transfer, at(10s), at(20s));
  CAPTURE(rate, transfer.pacer().bandwidth(), transfer.pacer().pacing_rate(), transfer.pacer().behind().count(),
          transfer.pacer().caught_up().count(), transfer.pacer().backoffs_for_delay(), transfer.path().tail_drops());
  // Of what the link carries in message bytes: 0.86 (2.03 MB/s); with the 10 ms catch-up (off) 0.07
  // (0.14 MB/s: each turn sent 11 ms of every 40, and the estimate followed the deliveries down).
  CAPTURE(catch_up);
  if (catch_up) CHECK(rate >= 0.75 * 2.5e6 * (kPayload - 8) / (kPayload + kOverhead));
  else CHECK(rate < 0.25 * 2.5e6);
  CHECK(transfer.path().tail_drops() == 0);
}
