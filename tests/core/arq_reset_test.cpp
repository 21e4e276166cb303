// Reliable-carrier (TCP) mode: the carrier never loses or reorders, but connections break. After
// carrier_reset() the unacknowledged tail is re-sent and the receiver drops what it already had:
// a reset loses nothing and duplicates nothing.
#include <catch2/catch.hpp>

#include "sim_link.h"

using namespace std::chrono_literals;
using lp::ArqConfig;
using lp::test::LinkProfile;
using lp::test::make_message;
using lp::test::SimSession;
using lp::test::delivered_exactly;

namespace {

const LinkProfile kTcpLike{.delay = 25ms};  // FIFO, lossless while the connection lasts

ArqConfig reliable_config() {
  ArqConfig config;
  config.send_window_messages = 32;
  config.receive_window_messages = 32;
  return config;
}

void queue_messages(SimSession::Endpoint& end, std::size_t count) { lp::test::queue_messages(end, count, 50); }

}  // namespace

TEST_CASE("reliable carrier: resets mid-stream lose nothing and duplicate nothing", "[arq][reliable]") {
  const ArqConfig config = reliable_config();
  // Reset at random intervals around the 50 ms round trip, so some resets catch frames on the wire
  // and some catch ACKs (whose messages then arrive twice).
  const std::uint64_t seed = GENERATE(1, 2, 3, 4);
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> reset_period_ms(30, 150);
  SimSession session(config, kTcpLike, kTcpLike, seed);
  queue_messages(session.a(), 1000);
  queue_messages(session.b(), 700);

  int resets = 0;
  auto all_done = [&] {
    return session.b().delivered.size() == 1000 && session.a().delivered.size() == 700 &&
           session.a().arq.all_acknowledged() && session.b().arq.all_acknowledged();
  };
  while (!all_done()) {
    REQUIRE(resets < 10'000);
    session.run_until(all_done, std::chrono::milliseconds(reset_period_ms(rng)));
    if (all_done()) break;
    session.reset_carrier();
    ++resets;
  }
  CHECK(resets >= 3);
  CHECK(delivered_exactly(session.a(), session.b()));
  CHECK(delivered_exactly(session.b(), session.a()));
  const auto a = session.a().arq.stats();
  const auto b = session.b().arq.stats();
  // The resets really cost something: the tail was re-sent and the peer dropped what it had.
  CHECK(a.messages_retransmitted > 0);
  CHECK(b.duplicates_dropped > 0);
  CHECK(a.carrier_resets == static_cast<std::uint64_t>(resets));
  CHECK(a.timeouts == 0);  // never a timer retransmission over a reliable carrier
  CHECK(session.b().max_held == 0);  // a reliable carrier never needs holding
}

TEST_CASE("reliable carrier: striped connections reorder frames; resets still lose and duplicate nothing",
          "[arq][reliable]") {
  // Several TCP connections per session: each is FIFO, but frames striped over them arrive out of
  // order. Modelled as a lossless link with jitter.
  const LinkProfile striped{.delay = 25ms, .jitter = 15ms};
  SimSession session(reliable_config(), striped, striped, 6);
  queue_messages(session.a(), 500);
  for (int reset = 0; reset < 5; ++reset) {
    session.run_until([] { return false; }, 90ms);
    session.reset_carrier();
  }
  REQUIRE(session.run_until_all_delivered(3600s));
  CHECK(delivered_exactly(session.a(), session.b()));
  CHECK(session.b().max_held > 0);  // the reordering was real
  CHECK(session.b().arq.stats().out_of_window_dropped == 0);
  CHECK(session.b().arq.stats().duplicates_dropped > 0);
}

TEST_CASE("reliable carrier: a reset right after ACKs were lost re-sends only the tail", "[arq][reliable]") {
  SimSession session(reliable_config(), kTcpLike, kTcpLike, 2);
  queue_messages(session.a(), 10);
  // Data arrives at 25 ms, B's ACK would arrive at 50 ms: break the connection in between.
  session.run_until([] { return false; }, 30ms);
  REQUIRE(session.b().delivered.size() == 10);
  session.reset_carrier();
  REQUIRE(session.run_until_all_delivered(10s));
  CHECK(delivered_exactly(session.a(), session.b()));
  CHECK(session.a().arq.stats().messages_retransmitted == 10);
  CHECK(session.b().arq.stats().duplicates_dropped == 10);
}

TEST_CASE("reliable carrier: a reset while idle sends nothing again", "[arq][reliable]") {
  SimSession session(reliable_config(), kTcpLike, kTcpLike, 3);
  queue_messages(session.a(), 50);
  REQUIRE(session.run_until_all_delivered(10s));
  session.reset_carrier();
  REQUIRE(session.run_until_all_delivered(10s));
  CHECK(session.a().arq.stats().messages_retransmitted == 0);
  CHECK(session.b().arq.stats().duplicates_dropped == 0);
  CHECK(session.b().delivered.size() == 50);
}

TEST_CASE("reliable carrier: the window stalls the sender until ACKs free it", "[arq][reliable][window]") {
  ArqConfig config = reliable_config();
  config.send_window_messages = 4;
  SimSession session(config, kTcpLike, kTcpLike, 4);
  queue_messages(session.a(), 100);
  REQUIRE(session.run_until_all_delivered(3600s));
  CHECK(delivered_exactly(session.a(), session.b()));
  CHECK(session.a().window_stalls > 0);
  CHECK(session.a().max_in_flight <= 4);
  // 4 messages per 50 ms round trip: at least 25 round trips for 100 messages.
  CHECK(session.now() - lp::ArqTime{} >= 25 * 50ms);
}

TEST_CASE("reliable carrier: the RTT is measured from message ACKs", "[arq][reliable][rto]") {
  SimSession session(reliable_config(), kTcpLike, kTcpLike, 5);
  queue_messages(session.a(), 100);
  REQUIRE(session.run_until_all_delivered(3600s));
  CHECK(session.a().arq.stats().srtt == 50ms);
  CHECK_FALSE(session.a().arq.next_deadline());  // no timers in this mode
}

TEST_CASE("reliable carrier: random configurations, striping and resets", "[arq][reliable][random]") {
  std::mt19937_64 rng(4242);
  auto pick = [&rng](int low, int high) { return std::uniform_int_distribution<int>(low, high)(rng); };
  for (int scenario = 0; scenario < 40; ++scenario) {
    ArqConfig config;
    config.send_window_messages = pick(1, 40);
    config.receive_window_messages = pick(1, 40);
    config.send_window_bytes = pick(50, 3000);
    config.ack_delay = std::chrono::milliseconds(pick(0, 60));
    config.ack_every_messages = pick(1, 8);
    const LinkProfile link{.delay = std::chrono::milliseconds(pick(1, 40)),
                           .jitter = std::chrono::milliseconds(pick(0, 1) * pick(0, 30))};
    INFO("scenario " << scenario);
    SimSession session(config, link, link, rng());
    queue_messages(session.a(), pick(0, 200));
    queue_messages(session.b(), pick(0, 200));
    const int resets = pick(0, 6);
    for (int reset = 0; reset < resets; ++reset) {
      session.run_until([] { return false; }, std::chrono::milliseconds(pick(1, 200)));
      session.reset_carrier();
    }
    REQUIRE(session.run_until_all_delivered(36000s));
    CHECK(delivered_exactly(session.a(), session.b()));
    CHECK(delivered_exactly(session.b(), session.a()));
    CHECK(session.a().arq.stats().timeouts == 0);
    CHECK(session.a().max_in_flight <= config.send_window_messages);
  }
}
