// The datagram controller's pure parts on a fake clock: delivery-rate sampling, the min-RTT and
// max-rate filters (congestion/delivery_rate.h, congestion/path_filters.h), the verdict on a warm
// start or a jump (PacerSeed::verdict), start-up's packet train (congestion/packet_train.h),
// the kinds of kernel congestion control.
#include <catch2/catch.hpp>

#include "congestion/datagram_pacer.h"
#include "congestion/delivery_rate.h"
#include "congestion/pacer_seed.h"
#include "congestion/packet_train.h"
#include "congestion/path_filters.h"

using namespace std::chrono_literals;
using lp::ArqTime;

namespace {
ArqTime at(std::chrono::microseconds t) { return ArqTime{} + t; }
}  // namespace

TEST_CASE("delivery rate: bytes delivered over the longer of the send and ACK intervals") {
  lp::DeliveryRateSampler sampler;
  const auto first = sampler.on_sent(at(0ms), 0);
  const auto second = sampler.on_sent(at(1ms), 1000);
  sampler.on_delivered(at(100ms), 1000);
  sampler.on_newest_delivered(at(0ms));
  // 1000 bytes over the 100 ms since the first left with nothing in flight.
  CHECK(sampler.rate(at(100ms), at(0ms), first, std::nullopt) == Approx(10'000));
  CHECK_FALSE(sampler.rate(at(100ms), at(0ms), first, 150ms));  // shorter than a round trip: no sample
  sampler.on_delivered(at(110ms), 1000);
  sampler.on_newest_delivered(at(1ms));
  // The second left when nothing was delivered yet: 2000 bytes over 110 ms (its ACK interval).
  CHECK(sampler.rate(at(110ms), at(1ms), second, std::nullopt) == Approx(2000 / 0.110));
  CHECK(sampler.delivered() == 2000);
}

TEST_CASE("delivery rate: a burst of ACKs is not a faster path") {
  lp::DeliveryRateSampler sampler;
  std::vector<lp::DeliveryRateSampler::AtSend> sends;
  for (int i = 0; i < 10; ++i) sends.push_back(sampler.on_sent(at(i * 10ms), i * 1000));  // 1000 B every 10 ms
  // All ten ACKs arrive together, long after: the send interval (90 ms) bounds the rate from above.
  for (int i = 0; i < 10; ++i) {
    sampler.on_delivered(at(200ms), 1000);
    sampler.on_newest_delivered(at(i * 10ms));
  }
  const auto rate = sampler.rate(at(200ms), at(90ms), sends[9], std::nullopt);
  REQUIRE(rate);
  CHECK(*rate <= 10'000 / 0.090 + 1);
}

TEST_CASE("delivery rate: application-limited until what was in flight is delivered") {
  lp::DeliveryRateSampler sampler;
  sampler.on_sent(at(0ms), 0);
  sampler.on_application_limited(3000);
  CHECK(sampler.application_limited());
  CHECK(sampler.on_sent(at(1ms), 1000).application_limited);
  sampler.on_delivered(at(50ms), 3000);
  sampler.on_newest_delivered(at(0ms));
  CHECK(sampler.application_limited());  // 3000 delivered: not yet beyond the mark
  sampler.on_delivered(at(51ms), 1000);
  sampler.on_newest_delivered(at(1ms));
  CHECK_FALSE(sampler.application_limited());
  CHECK_FALSE(sampler.on_sent(at(52ms), 0).application_limited);
}

TEST_CASE("rtt filter: minimum, RFC 6298 smoothing, expiry only after its window") {
  lp::RttFilter rtt;
  CHECK_FALSE(rtt.min());
  rtt.on_sample(at(0ms), 100ms);
  CHECK(*rtt.smoothed() == 100ms);
  CHECK(rtt.deviation() == 50ms);
  rtt.on_sample(at(1ms), 180ms);
  CHECK(*rtt.smoothed() == 110ms);                   // 7/8 x 100 + 1/8 x 180
  CHECK(rtt.deviation() == lp::ArqDuration(57500));  // 3/4 x 50 + 1/4 x 80
  CHECK(*rtt.min() == 100ms);
  rtt.expire(at(5s), 150ms, 10s);  // within the window: kept
  CHECK(*rtt.min() == 100ms);
  rtt.expire(at(11s), std::nullopt, 10s);  // no round sample: kept
  CHECK(*rtt.min() == 100ms);
  rtt.expire(at(11s), 150ms, 10s);  // the path got longer
  CHECK(*rtt.min() == 150ms);
  rtt.expire(at(12s), 200ms, 10s);  // a fresh minimum stands for its own window
  CHECK(*rtt.min() == 150ms);
}

TEST_CASE("max-rate filter: the largest sample of the last ten counted rounds") {
  lp::MaxRateFilter filter;
  CHECK(filter.max() == 0);
  filter.offer(500);
  filter.offer(300);
  CHECK(filter.current() == 500);
  for (std::size_t round = 1; round < lp::MaxRateFilter::kRounds; ++round) {
    filter.advance();
    filter.offer(100);
    CHECK(filter.max() == 500);
  }
  filter.advance();  // the tenth round after the 500 sample: it goes
  CHECK(filter.max() == 100);
  filter.reset(50);
  CHECK(filter.max() == 50);
  filter.reset(70, true);  // the next round's, until that round ends
  CHECK(filter.current() == 0);
  CHECK(filter.max() == 70);
  filter.advance();
  CHECK(filter.max() == 0);
}

TEST_CASE("seed verdict: confirmed at 80 % of the seed, rejected below unless the application ran dry") {
  using Seed = lp::PacerSeed;
  const Seed::Evidence busy{.delivered = 850'000, .lost = 0, .span = 100ms, .round_trip = 100ms,
                                 .seed_rate = 10e6, .application_limited = false};
  auto verdict = Seed::verdict(busy);
  CHECK(verdict.state == Seed::State::kConfirmed);
  CHECK(verdict.rate == Approx(8.5e6));
  auto slow = busy;
  slow.delivered = 500'000;
  CHECK(Seed::verdict(slow).state == Seed::State::kRejected);
  CHECK(Seed::verdict(slow).rate == Approx(5e6));
  slow.application_limited = true;  // says nothing of the path: judge again
  CHECK(Seed::verdict(slow).state == Seed::State::kNone);
  auto early = busy;
  early.span = 50ms;  // less than a round trip of ACKs
  CHECK(Seed::verdict(early).state == Seed::State::kSeeded);
}

TEST_CASE("seed verdict: heavy loss rejects at once, at no more than the seed") {
  using Seed = lp::PacerSeed;
  // A quarter of 40 datagrams lost within a fifth of a round trip: the seed overfills the queue.
  const Seed::Evidence lossy{.delivered = 30 * 1472, .lost = 10 * 1472, .span = 20ms, .round_trip = 100ms,
                                  .seed_rate = 1e6, .application_limited = true};
  const auto verdict = Seed::verdict(lossy);
  CHECK(verdict.state == Seed::State::kRejected);
  CHECK(verdict.rate == Approx(1e6));  // 2.2 MB/s delivered in the burst: no more than the seed
  auto slower = lossy;
  slower.span = 100ms;
  CHECK(Seed::verdict(slower).rate == Approx(30 * 1472 / 0.100));  // below the seed: what was delivered
  auto few = lossy;
  few.delivered = 6 * 1472;
  few.lost = 4 * 1472;  // ten datagrams say too little
  CHECK(Seed::verdict(few).state == Seed::State::kSeeded);
}

TEST_CASE("kernel congestion kinds: one enum for the tcp carrier's choice") {
  using lp::CongestionKind;
  CHECK(lp::kernel_congestion_kind("cubic") == CongestionKind::kKernelCubic);
  CHECK(lp::kernel_congestion_kind("bbr") == CongestionKind::kKernelBbr);
  CHECK(lp::kernel_congestion_kind("bbr2") == CongestionKind::kKernelBbr);
  CHECK(lp::kernel_congestion_kind("reno") == CongestionKind::kKernelOther);
  CHECK(std::string(lp::kernel_congestion_name(CongestionKind::kKernelBbr)) == "bbr");
  CHECK(std::string(lp::kernel_congestion_name(CongestionKind::kKernelCubic)) == "cubic");
}

namespace {
// A train of `count` datagrams sent `send_gap` apart, each ACKed alone on arrival `arrival_gap` apart.
lp::PacketTrain::Reading run_train(int count, lp::ArqDuration send_gap, lp::ArqDuration arrival_gap) {
  lp::PacketTrain train;
  REQUIRE(train.idle());
  train.open();
  std::vector<lp::PacketTrain::Place> places;
  for (int i = 0; i < count; ++i) places.push_back(train.on_sent(at(i * send_gap), 1472, false));
  CHECK(train.on_sent(at(count * send_gap), 1472, true).train == 0);  // a re-send joins no train
  for (int i = 0; i < count; ++i) {
    CHECK_FALSE(train.complete());
    const ArqTime arrived = at(100ms + i * arrival_gap);
    train.begin_ack();
    train.on_delivered(places[i], 1472);
    train.close();
    train.time_arrivals(arrived, lp::CongestionController::Arrivals{arrived.time_since_epoch(), arrived.time_since_epoch(), 1});
  }
  REQUIRE(train.complete());
  const auto reading = train.measure();
  CHECK(train.idle());
  return reading;
}
}  // namespace

TEST_CASE("packet train: the arrivals' spread measures the bottleneck") {
  const auto reading = run_train(64, 10us, 76us);  // 1472 B per 76 us: ~155 Mbit/s
  CHECK_FALSE(reading.refusal);
  CHECK(reading.sender_paced == 0);
  CHECK(reading.rate == Approx(1472 / 76e-6));
}

TEST_CASE("packet train: bunched arrivals, a slow sender or a short train measure nothing") {
  CHECK(run_train(64, 0us, 10us).refusal == lp::PacketTrain::Refusal::kShortSpan);  // 0.63 ms of arrivals
  const auto paced = run_train(64, 60us, 76us);  // arrivals hardly more spread than the sends
  CHECK(paced.sender_paced == 1);
  CHECK(paced.refusal == lp::PacketTrain::Refusal::kFewDatagrams);
  CHECK(run_train(10, 10us, 76us).refusal == lp::PacketTrain::Refusal::kFewDatagrams);
}
