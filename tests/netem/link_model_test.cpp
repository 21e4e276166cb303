// The pure link model under a fake clock: loss statistics, tail drop, rate pacing, delay and order.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "link_model.h"

using lp::netem::LinkModel;
using lp::netem::LinkParameters;
using lp::netem::Nanoseconds;
using lp::netem::Packet;
using namespace std::chrono_literals;

namespace {

constexpr std::uint64_t kSeed = 42;
constexpr std::size_t kPacketBytes = 1000;

Packet packet_of(std::size_t bytes, std::uint8_t tag = 0) { return Packet(bytes, tag); }

// True when `observed` successes out of `trials` fit probability p within 5 standard deviations.
bool within_binomial_bound(std::uint64_t observed, std::uint64_t trials, double p) {
  const double mean = trials * p;
  const double sigma = std::sqrt(trials * p * (1 - p));
  return std::abs(static_cast<double>(observed) - mean) <= 5 * sigma;
}

// Takes every packet that has arrived by `now`.
std::vector<Packet> take_all(LinkModel& link, Nanoseconds now) {
  std::vector<Packet> arrived;
  while (auto packet = link.take_arrived(now)) arrived.push_back(std::move(*packet));
  return arrived;
}

}  // namespace

TEST_CASE("Bernoulli loss drops the configured fraction", "[netem]") {
  LinkParameters parameters;
  parameters.loss.bernoulli = 0.2;
  LinkModel link(parameters, kSeed);
  constexpr std::uint64_t kPackets = 100'000;
  for (std::uint64_t i = 0; i < kPackets; ++i) link.offer(Nanoseconds(i), packet_of(100));
  take_all(link, 1s);
  CHECK(within_binomial_bound(link.counters().dropped_by_loss, kPackets, 0.2));
  CHECK(link.counters().forwarded_packets + link.counters().dropped_by_loss == kPackets);
  CHECK(link.counters().dropped_by_queue == 0);
}

TEST_CASE("no loss and total loss are exact", "[netem]") {
  for (double loss : {0.0, 1.0}) {
    LinkParameters parameters;
    parameters.loss.bernoulli = loss;
    LinkModel link(parameters, kSeed);
    for (int i = 0; i < 1000; ++i) link.offer(0ns, packet_of(100));
    CHECK(link.counters().dropped_by_loss == static_cast<std::uint64_t>(1000 * loss));
  }
}

TEST_CASE("Gilbert-Elliott loss has the stationary rate and comes in bursts", "[netem]") {
  LinkParameters parameters;
  parameters.loss.burst_enabled = true;
  parameters.loss.burst.enter_bad = 0.01;
  parameters.loss.burst.leave_bad = 0.25;  // mean burst of 4 packets
  LinkModel link(parameters, kSeed);
  constexpr int kPackets = 200'000;
  int bursts = 0;
  bool previous_lost = false;
  for (int i = 0; i < kPackets; ++i) {
    const bool lost = link.offer(0ns, packet_of(100)) == LinkModel::Verdict::kDroppedByLoss;
    if (lost && !previous_lost) ++bursts;
    previous_lost = lost;
  }
  const double expected_rate = 0.01 / (0.01 + 0.25);
  const double observed_rate = static_cast<double>(link.counters().dropped_by_loss) / kPackets;
  CHECK(observed_rate == Approx(expected_rate).epsilon(0.1));
  const double mean_burst = static_cast<double>(link.counters().dropped_by_loss) / bursts;
  CHECK(mean_burst == Approx(4.0).epsilon(0.1));
}

TEST_CASE("the queue tail-drops what does not fit", "[netem]") {
  LinkParameters parameters;
  parameters.rate_bits_per_second = 8e6;  // one byte per microsecond
  parameters.queue.bytes = 10 * kPacketBytes;
  LinkModel link(parameters, kSeed);
  int accepted = 0;
  for (int i = 0; i < 25; ++i) accepted += link.offer(0ns, packet_of(kPacketBytes)) == LinkModel::Verdict::kAccepted;
  CHECK(accepted == 10);
  CHECK(link.counters().dropped_by_queue == 15);
  CHECK(link.queued_bytes(0ns) == 10 * kPacketBytes);

  // After one packet's serialisation time there is room for exactly one more.
  CHECK(link.queued_bytes(1ms) == 9 * kPacketBytes);
  CHECK(link.offer(1ms, packet_of(kPacketBytes)) == LinkModel::Verdict::kAccepted);
  CHECK(link.offer(1ms, packet_of(kPacketBytes)) == LinkModel::Verdict::kDroppedByQueue);
}

TEST_CASE("a queue sized in time holds that much time at the link rate", "[netem]") {
  LinkParameters parameters;
  parameters.rate_bits_per_second = 8e6;
  parameters.queue.unit = lp::netem::QueueLimit::Unit::kTime;
  parameters.queue.time = 5ms;  // 5000 bytes at 8 Mbit/s
  LinkModel link(parameters, kSeed);
  int accepted = 0;
  for (int i = 0; i < 10; ++i) accepted += link.offer(0ns, packet_of(kPacketBytes)) == LinkModel::Verdict::kAccepted;
  CHECK(accepted == 5);
}

TEST_CASE("the rate limiter paces packets and the delay is added after it", "[netem]") {
  LinkParameters parameters;
  parameters.rate_bits_per_second = 8e6;
  parameters.delay = 100ms;
  parameters.queue.bytes = 100 * kPacketBytes;
  LinkModel link(parameters, kSeed);
  for (int i = 0; i < 10; ++i) link.offer(0ns, packet_of(kPacketBytes, static_cast<std::uint8_t>(i)));

  CHECK(link.next_arrival() == 101ms);  // 1 ms serialisation + 100 ms propagation
  CHECK(take_all(link, 100ms).empty());
  for (int i = 0; i < 10; ++i) {
    const Nanoseconds due = 100ms + (i + 1) * 1ms;
    CHECK(take_all(link, due - 1ns).empty());
    const auto arrived = take_all(link, due);
    REQUIRE(arrived.size() == 1);
    CHECK(arrived[0][0] == i);
  }
  CHECK(link.counters().forwarded_packets == 10);
  CHECK(link.counters().forwarded_bytes == 10 * kPacketBytes);
  CHECK_FALSE(link.next_arrival().has_value());
}

TEST_CASE("an idle link does not bank capacity", "[netem]") {
  LinkParameters parameters;
  parameters.rate_bits_per_second = 8e6;
  parameters.queue.bytes = 100 * kPacketBytes;
  LinkModel link(parameters, kSeed);
  link.offer(0ns, packet_of(kPacketBytes));
  link.offer(10ms, packet_of(kPacketBytes));  // long after the first left: serialised from 10 ms on
  take_all(link, 1ms);
  CHECK(link.next_arrival() == 11ms);
}

TEST_CASE("jitter never reorders unless asked to", "[netem]") {
  LinkParameters parameters;
  parameters.delay = 50ms;
  parameters.jitter = 20ms;
  auto arrival_order_is_sending_order = [&](bool allow_reordering) {
    parameters.allow_reordering = allow_reordering;
    LinkModel link(parameters, kSeed);
    for (int i = 0; i < 200; ++i) link.offer(i * 100us, packet_of(10, static_cast<std::uint8_t>(i)));
    const auto arrived = take_all(link, 1s);
    REQUIRE(arrived.size() == 200);
    for (int i = 0; i < 200; ++i) {
      if (arrived[i][0] != i) return false;
    }
    return true;
  };
  CHECK(arrival_order_is_sending_order(false));
  CHECK_FALSE(arrival_order_is_sending_order(true));
}

TEST_CASE("jitter spreads the delay around its mean", "[netem]") {
  LinkParameters parameters;
  parameters.delay = 50ms;
  parameters.jitter = 5ms;
  parameters.allow_reordering = true;  // raw samples: keeping order would skew them upwards
  LinkModel link(parameters, kSeed);
  constexpr int kPackets = 10'000;
  for (int i = 0; i < kPackets; ++i) link.offer(0ns, packet_of(10));
  double sum = 0, sum_of_squares = 0;
  Nanoseconds now = 0ns;
  while (auto next = link.next_arrival()) {
    now = *next;
    const double ms = static_cast<double>(now.count()) / 1e6;
    for (const auto& packet : take_all(link, now)) {
      (void)packet;
      sum += ms;
      sum_of_squares += ms * ms;
    }
  }
  const double mean = sum / kPackets;
  const double deviation = std::sqrt(sum_of_squares / kPackets - mean * mean);
  CHECK(mean == Approx(50.0).epsilon(0.01));
  CHECK(deviation == Approx(5.0).epsilon(0.05));
}
