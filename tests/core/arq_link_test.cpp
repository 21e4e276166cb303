// Two Arq endpoints in datagram mode across simulated links that lose, reorder and duplicate frames
// in both directions: every message arrives exactly once, in order, intact, within bounded memory.
#include <catch2/catch.hpp>

#include "sim_link.h"

using namespace std::chrono_literals;
using lp::ArqConfig;
using lp::ArqMode;
using lp::test::LinkProfile;
using lp::test::make_message;
using lp::test::SimSession;
using lp::test::delivered_exactly;

namespace {

constexpr std::size_t kMaxFiller = 200;

ArqConfig windowed_datagram_config() {
  ArqConfig config = lp::test::datagram_config();
  config.send_window_messages = 64;
  config.receive_window_messages = 64;
  return config;
}

void queue_messages(SimSession::Endpoint& end, std::size_t count) { lp::test::queue_messages(end, count, kMaxFiller); }

}  // namespace

TEST_CASE("datagram mode: lossy, reordering, duplicating links in both directions", "[arq][link]") {
  const double loss = GENERATE(0.0, 0.1, 0.3);
  const std::uint64_t seed = GENERATE(1, 2, 3, 4, 5);
  CAPTURE(loss, seed);
  const LinkProfile link{.delay = 25ms, .jitter = 20ms, .loss = loss, .duplicate = 0.05};
  const ArqConfig config = windowed_datagram_config();
  SimSession session(config, link, link, seed);
  queue_messages(session.a(), 1500);
  queue_messages(session.b(), 1000);

  REQUIRE(session.run_until_all_delivered(3600s));
  CHECK(delivered_exactly(session.a(), session.b()));
  CHECK(delivered_exactly(session.b(), session.a()));
  for (auto* end : {&session.a(), &session.b()}) {
    CHECK(end->max_held <= config.receive_window_messages);  // bounded memory
    CHECK(end->max_held_bytes <= config.receive_window_bytes);
    CHECK(end->max_in_flight <= config.send_window_messages);
    CHECK_FALSE(end->ack_rejected);
  }
  // The links really misbehaved, and the ARQ really repaired it.
  CHECK(session.a_to_b().duplicated() > 0);
  CHECK(session.b().arq.stats().duplicates_dropped > 0);
  if (loss > 0) {
    CHECK(session.a_to_b().lost() > 0);
    CHECK(session.a().arq.stats().messages_retransmitted > 0);
    CHECK(session.a().max_held > 0);  // holes were bridged by holding later messages
  }
}

TEST_CASE("datagram mode: 30 % ACK loss alone costs retransmissions, not correctness", "[arq][link]") {
  const LinkProfile data{.delay = 25ms};
  const LinkProfile acks{.delay = 25ms, .loss = 0.3};
  SimSession session(windowed_datagram_config(), data, acks, 11);
  queue_messages(session.a(), 500);
  REQUIRE(session.run_until_all_delivered(3600s));
  CHECK(delivered_exactly(session.a(), session.b()));
  CHECK(session.b_to_a().lost() > 0);
}

TEST_CASE("datagram mode: a small window stalls the sender and resumes it", "[arq][link][window]") {
  ArqConfig config = windowed_datagram_config();
  config.send_window_messages = 8;
  config.send_window_bytes = 1000;
  const LinkProfile link{.delay = 20ms, .jitter = 10ms, .loss = 0.1};
  SimSession session(config, link, link, 5);
  queue_messages(session.a(), 600);
  REQUIRE(session.run_until_all_delivered(3600s));
  CHECK(delivered_exactly(session.a(), session.b()));
  CHECK(session.a().window_stalls > 0);
  CHECK(session.a().max_in_flight <= 8);
  // Bytes: the window may be passed only by a single oversized message, and these are <= 208 bytes.
  CHECK(session.a().max_in_flight_bytes <= 1000);
}

TEST_CASE("datagram mode: a receive window smaller than the send window still delivers", "[arq][link][window]") {
  ArqConfig config = windowed_datagram_config();
  config.receive_window_messages = 5;
  const LinkProfile link{.delay = 20ms, .jitter = 15ms, .loss = 0.2};
  SimSession session(config, link, link, 9);
  queue_messages(session.a(), 300);
  REQUIRE(session.run_until_all_delivered(3600s));
  CHECK(delivered_exactly(session.a(), session.b()));
  CHECK(session.b().max_held <= 5);
}

TEST_CASE("datagram mode: a small receive window in bytes bounds what is held", "[arq][link][window]") {
  ArqConfig config = windowed_datagram_config();
  config.receive_window_bytes = 600;  // about three of the larger test messages
  const LinkProfile link{.delay = 20ms, .jitter = 15ms, .loss = 0.2};
  SimSession session(config, link, link, 10);
  queue_messages(session.a(), 300);
  REQUIRE(session.run_until_all_delivered(3600s));
  CHECK(delivered_exactly(session.a(), session.b()));
  CHECK(session.b().max_held_bytes <= 600);
  CHECK(session.b().max_held_bytes > 0);
  CHECK(session.b().arq.stats().out_of_window_dropped > 0);
}

TEST_CASE("datagram mode: delayed ACKs with loss", "[arq][link][ack]") {
  ArqConfig config = windowed_datagram_config();
  config.ack_delay = 30ms;
  config.ack_every_messages = 4;
  const LinkProfile link{.delay = 25ms, .jitter = 10ms, .loss = 0.2, .duplicate = 0.02};
  SimSession session(config, link, link, 21);
  queue_messages(session.a(), 400);
  queue_messages(session.b(), 400);
  REQUIRE(session.run_until_all_delivered(3600s));
  CHECK(delivered_exactly(session.a(), session.b()));
  CHECK(delivered_exactly(session.b(), session.a()));
}

TEST_CASE("datagram mode: delayed ACKs coalesce on a clean link", "[arq][link][ack]") {
  ArqConfig config = windowed_datagram_config();
  config.ack_delay = 30ms;
  config.ack_every_messages = 4;
  SimSession session(config, LinkProfile{}, LinkProfile{}, 3);
  queue_messages(session.a(), 400);
  REQUIRE(session.run_until_all_delivered(3600s));
  CHECK(delivered_exactly(session.a(), session.b()));
  const auto stats = session.b().arq.stats();
  CHECK(stats.acks_sent > 0);
  CHECK(stats.acks_sent <= stats.messages_received / 4);
}

TEST_CASE("datagram mode: the RTT estimate follows the link", "[arq][link][rto]") {
  const LinkProfile link{.delay = 25ms};
  SimSession session(windowed_datagram_config(), link, link, 4);
  queue_messages(session.a(), 200);
  REQUIRE(session.run_until_all_delivered(3600s));
  const auto stats = session.a().arq.stats();
  CHECK(stats.rtt_samples > 0);
  CHECK(stats.srtt == 50ms);
  CHECK(stats.messages_retransmitted == 0);  // a clean link needs no repair
  CHECK(stats.rto == 200ms);                 // 50 ms + 4 * ~0: clamped to min_rto
}

TEST_CASE("datagram mode: a dead link backs off, then recovers when it heals", "[arq][link][rto]") {
  const LinkProfile clean{.delay = 25ms};
  SimSession session(windowed_datagram_config(), clean, clean, 8);
  queue_messages(session.a(), 10);
  session.a_to_b().set_profile(LinkProfile{.delay = 25ms, .loss = 1.0});
  CHECK_FALSE(session.run_until_all_delivered(100s));
  const auto stats = session.a().arq.stats();
  // Retransmissions at 1, 3, 7, 15, 31, 63 s (backed off): six expiries in 100 s, not 100 or 500.
  CHECK(stats.timeouts == 6);
  CHECK(stats.rto == 60s);
  session.a_to_b().set_profile(clean);
  REQUIRE(session.run_until_all_delivered(120s));
  CHECK(delivered_exactly(session.a(), session.b()));
  // The ACK ended the back-off, but every message had been re-sent: no RTT sample (Karn).
  CHECK(session.a().arq.stats().rto == 1s);
  CHECK(session.a().arq.stats().rtt_samples == 0);
  queue_messages(session.a(), 20);  // fresh messages measure the path
  REQUIRE(session.run_until_all_delivered(10s));
  CHECK(session.a().arq.stats().srtt == 50ms);
}

TEST_CASE("datagram mode: random configurations and link conditions", "[arq][link][random]") {
  // Many small scenarios, each drawn from a seeded RNG, so corner cases of the tunables meet.
  std::mt19937_64 rng(20261122);
  auto pick = [&rng](int low, int high) { return std::uniform_int_distribution<int>(low, high)(rng); };
  for (int scenario = 0; scenario < 60; ++scenario) {
    ArqConfig config = lp::test::datagram_config();
    config.send_window_messages = pick(1, 40);
    config.receive_window_messages = pick(1, 40);
    config.send_window_bytes = pick(50, 5000);
    config.receive_window_bytes = pick(50, 5000);
    config.ack_delay = std::chrono::milliseconds(pick(0, 60));
    config.ack_every_messages = pick(1, 8);
    config.fast_retransmit_threshold = pick(0, 4);
    config.max_sack_ranges = pick(1, 4);
    config.backoff_factor = 1.0 + pick(0, 10) / 10.0;
    const LinkProfile link{.delay = std::chrono::milliseconds(pick(1, 50)),
                           .jitter = std::chrono::milliseconds(pick(0, 40)),
                           .loss = pick(0, 30) / 100.0,
                           .duplicate = pick(0, 10) / 100.0};
    INFO("scenario " << scenario);
    SimSession session(config, link, link, rng());
    queue_messages(session.a(), pick(0, 150));
    queue_messages(session.b(), pick(0, 150));
    REQUIRE(session.run_until_all_delivered(36000s));
    CHECK(delivered_exactly(session.a(), session.b()));
    CHECK(delivered_exactly(session.b(), session.a()));
    for (auto* end : {&session.a(), &session.b()}) {
      CHECK(end->max_held <= config.receive_window_messages);
      CHECK(end->max_held_bytes <= config.receive_window_bytes);
      CHECK(end->max_in_flight <= config.send_window_messages);
      // Only a message larger than the whole byte window may exceed it, and then alone.
      CHECK(end->max_in_flight_bytes <= std::max<std::uint64_t>(config.send_window_bytes, 8 + kMaxFiller));
      CHECK_FALSE(end->ack_rejected);
    }
  }
}
