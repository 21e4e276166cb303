// The receiving half of the Arq, driven frame by frame: in-order delivery exactly once, holding
// out-of-order frames within the window, duplicates, SACK ranges, when ACKs are due.
#include <catch2/catch.hpp>

#include <limits>

#include "sim_link.h"

using namespace std::chrono_literals;
using lp::Arq;
using lp::ArqConfig;
using lp::ArqMode;
using lp::ArqSackRange;
using lp::ArqTime;
using lp::test::at;
using lp::test::datagram_config;
using lp::test::make_message;
using lp::test::message_number;

namespace {

void deliver(Arq& arq, std::uint64_t seq, ArqTime now = at(0ms), std::size_t filler = 0) {
  REQUIRE(arq.on_data(seq, make_message(seq, filler), now));
}

std::vector<std::uint64_t> received(Arq& arq) {
  std::vector<std::uint64_t> seqs;
  while (auto delivery = arq.receive()) {
    REQUIRE(message_number(delivery->payload) == delivery->seq);  // the payload is the one sent
    seqs.push_back(delivery->seq);
  }
  return seqs;
}

}  // namespace

TEST_CASE("in-order frames are delivered at once and acknowledged cumulatively", "[arq][receiver]") {
  Arq arq;
  CHECK_FALSE(arq.poll_ack(at(0ms)));  // nothing received, nothing owed
  deliver(arq, 0);
  deliver(arq, 1);
  CHECK(received(arq) == std::vector<std::uint64_t>{0, 1});
  auto ack = arq.poll_ack(at(0ms));
  REQUIRE(ack);
  CHECK(ack->cumulative == 2);  // the next expected sequence number
  CHECK(ack->sack.empty());
  CHECK(ack->window_messages == arq.config().receive_window_messages);
  CHECK_FALSE(arq.poll_ack(at(0ms)));  // one ACK covers the batch
  CHECK(arq.stats().messages_delivered == 2);
}

TEST_CASE("out-of-order frames are held and released in order", "[arq][receiver]") {
  Arq arq(datagram_config());
  deliver(arq, 2);
  deliver(arq, 3);
  deliver(arq, 5);
  CHECK(received(arq).empty());
  auto ack = arq.poll_ack(at(0ms));
  REQUIRE(ack);
  CHECK(ack->cumulative == 0);
  CHECK(ack->sack == std::vector<ArqSackRange>{{2, 4}, {5, 6}});
  CHECK(arq.stats().held_out_of_order_messages == 3);

  deliver(arq, 0);
  CHECK(received(arq) == std::vector<std::uint64_t>{0});
  deliver(arq, 1);
  CHECK(received(arq) == std::vector<std::uint64_t>{1, 2, 3});
  ack = arq.poll_ack(at(0ms));
  REQUIRE(ack);
  CHECK(ack->cumulative == 4);
  CHECK(ack->sack == std::vector<ArqSackRange>{{5, 6}});
  CHECK(arq.stats().held_out_of_order_messages == 1);
  CHECK(arq.stats().max_held_out_of_order_messages == 3);
}

TEST_CASE("messages a later one overtook are counted once, however they come later", "[arq][receiver]") {
  Arq arq(datagram_config());
  deliver(arq, 0);
  deliver(arq, 3);  // 1 and 2 overtaken
  deliver(arq, 4);
  deliver(arq, 2);  // a hole filled: nothing new
  deliver(arq, 7);  // 5 and 6
  deliver(arq, 7);  // a duplicate: nothing
  deliver(arq, 1);
  CHECK(arq.stats().messages_skipped == 4);
  CHECK(arq.stats().messages_received == 6);
}

TEST_CASE("duplicates and old frames are dropped, counted and re-acknowledged at once", "[arq][receiver]") {
  ArqConfig config = datagram_config();
  config.ack_delay = 100ms;  // even with delayed ACKs
  Arq arq(config);
  deliver(arq, 0);
  deliver(arq, 1);
  REQUIRE(arq.poll_ack(at(0ms)));  // two messages: ack_every_messages
  deliver(arq, 3);
  REQUIRE(arq.poll_ack(at(0ms)));

  SECTION("an old frame") { deliver(arq, 0, at(1ms)); }
  SECTION("a held frame again") { deliver(arq, 3, at(1ms)); }

  CHECK(arq.stats().duplicates_dropped == 1);
  auto ack = arq.poll_ack(at(1ms));  // no delay: this is how a lost ACK is repaired
  REQUIRE(ack);
  CHECK(ack->cumulative == 2);
  CHECK(received(arq) == std::vector<std::uint64_t>{0, 1});
  CHECK(arq.stats().messages_received == 3);
}

TEST_CASE("frames beyond the receive window (messages) are dropped", "[arq][receiver][window]") {
  ArqConfig config = datagram_config();
  config.receive_window_messages = 4;
  Arq arq(config);
  deliver(arq, 4);  // next expected 0: seqs 0..3 fit
  CHECK(arq.stats().out_of_window_dropped == 1);
  CHECK(arq.stats().held_out_of_order_messages == 0);
  deliver(arq, 3);
  CHECK(arq.stats().held_out_of_order_messages == 1);
  auto ack = arq.poll_ack(at(0ms));
  REQUIRE(ack);
  CHECK(ack->window_messages == 4);
  // Once the window moves, the same frame is welcome.
  deliver(arq, 0);
  deliver(arq, 4);
  CHECK(arq.stats().held_out_of_order_messages == 2);
  CHECK(received(arq) == std::vector<std::uint64_t>{0});
}

TEST_CASE("out-of-order frames beyond the receive window (bytes) are dropped, in-order ones are not",
          "[arq][receiver][window]") {
  ArqConfig config = datagram_config();
  config.receive_window_bytes = 100;
  Arq arq(config);
  deliver(arq, 2, at(0ms), 52);  // 60 bytes held
  deliver(arq, 3, at(0ms), 42);  // 50 more would make 110
  CHECK(arq.stats().out_of_window_dropped == 1);
  CHECK(arq.stats().held_out_of_order_bytes == 60);
  deliver(arq, 0, at(0ms), 992);  // 1000 bytes in order: delivered, never held
  CHECK(received(arq) == std::vector<std::uint64_t>{0});
  CHECK(arq.stats().held_out_of_order_bytes == 60);
}

TEST_CASE("an ACK reports at most max_sack_ranges ranges, the lowest first", "[arq][receiver]") {
  ArqConfig config = datagram_config();
  config.max_sack_ranges = 2;
  Arq arq(config);
  for (std::uint64_t seq : {2, 4, 5, 7, 9}) deliver(arq, seq);
  auto ack = arq.poll_ack(at(0ms));
  REQUIRE(ack);
  CHECK(ack->sack == std::vector<ArqSackRange>{{2, 3}, {4, 6}});
}

TEST_CASE("with ack_delay = 0 every message is acknowledged at once", "[arq][receiver][ack]") {
  Arq arq;
  deliver(arq, 0, at(10ms));
  CHECK(arq.next_deadline() == at(10ms));
  CHECK(arq.poll_ack(at(10ms)));
}

TEST_CASE("a delayed ACK waits for ack_delay or ack_every_messages", "[arq][receiver][ack]") {
  ArqConfig config;
  config.ack_delay = 40ms;
  config.ack_every_messages = 3;
  Arq arq(config);
  deliver(arq, 0, at(10ms));
  CHECK(arq.next_deadline() == at(50ms));
  CHECK_FALSE(arq.poll_ack(at(10ms)));
  CHECK_FALSE(arq.poll_ack(at(49ms)));

  SECTION("the delay expires") {
    deliver(arq, 1, at(20ms));  // the delay counts from the first unacknowledged message
    CHECK(arq.next_deadline() == at(50ms));
    auto ack = arq.poll_ack(at(50ms));
    REQUIRE(ack);
    CHECK(ack->cumulative == 2);
  }
  SECTION("enough messages are waiting") {
    deliver(arq, 1, at(20ms));
    CHECK_FALSE(arq.poll_ack(at(20ms)));
    deliver(arq, 2, at(21ms));
    REQUIRE(arq.poll_ack(at(21ms)));
  }
  SECTION("a hole is reported at once") {
    deliver(arq, 2, at(20ms));
    auto ack = arq.poll_ack(at(20ms));
    REQUIRE(ack);
    CHECK(ack->sack == std::vector<ArqSackRange>{{2, 3}});
  }
  CHECK_FALSE(arq.next_deadline());  // nothing owed after the ACK
}

TEST_CASE("filling a hole is acknowledged at once even with a delayed ACK", "[arq][receiver][ack]") {
  ArqConfig config = datagram_config();
  config.ack_delay = 40ms;
  config.ack_every_messages = 100;
  Arq arq(config);
  deliver(arq, 1, at(0ms));
  REQUIRE(arq.poll_ack(at(0ms)));
  deliver(arq, 0, at(5ms));
  auto ack = arq.poll_ack(at(5ms));
  REQUIRE(ack);
  CHECK(ack->cumulative == 2);
}

TEST_CASE("ack_new_holes_only: units above a hole that continue the highest wait; new and filled holes do not",
          "[arq][receiver][ack]") {
  // RFC 9000 13.2.1, as the datagram carrier configures its ARQ: with 1 % loss a hole is open nearly
  // all the time, and every unit above it was acknowledged at once.
  ArqConfig config = datagram_config();
  config.ack_delay = 1ms;
  config.ack_every_messages = 4;
  config.ack_new_holes_only = true;
  Arq arq(config);
  deliver(arq, 0, at(0ms));
  deliver(arq, 2, at(0ms));  // a new hole (1): at once
  REQUIRE(arq.poll_ack(at(0ms)));
  deliver(arq, 3, at(0ms));  // continue the highest held range: no new hole, waits
  deliver(arq, 4, at(0ms));
  deliver(arq, 5, at(0ms));
  CHECK_FALSE(arq.poll_ack(at(0ms)));
  CHECK(arq.next_deadline() == at(1ms));
  deliver(arq, 6, at(0ms));  // the fourth since the ACK
  auto ack = arq.poll_ack(at(0ms));
  REQUIRE(ack);
  CHECK(ack->cumulative == 1);
  CHECK(ack->sack == std::vector<ArqSackRange>{{2, 7}});
  deliver(arq, 7, at(0ms));
  CHECK_FALSE(arq.poll_ack(at(0ms)));
  SECTION("a second hole is reported at once") {
    deliver(arq, 9, at(0ms));
    ack = arq.poll_ack(at(0ms));
    REQUIRE(ack);
    CHECK(ack->sack == std::vector<ArqSackRange>{{2, 8}, {9, 10}});
  }
  SECTION("filling the hole is reported at once") {
    deliver(arq, 1, at(0ms));
    ack = arq.poll_ack(at(0ms));
    REQUIRE(ack);
    CHECK(ack->cumulative == 8);
    CHECK(ack->sack.empty());
  }
  SECTION("otherwise the delay") {
    CHECK_FALSE(arq.poll_ack(at(0ms) + 999us));
    REQUIRE(arq.poll_ack(at(1ms)));
  }
  SECTION("off (the reliable carrier's and the default): every unit above a hole at once") {
    config.ack_new_holes_only = false;
    Arq plain(config);
    deliver(plain, 1, at(0ms));
    REQUIRE(plain.poll_ack(at(0ms)));
    deliver(plain, 2, at(0ms));
    CHECK(plain.poll_ack(at(0ms)));
  }
}

TEST_CASE("after a carrier reset an ACK is owed at once", "[arq][receiver][reliable]") {
  ArqConfig config;
  config.ack_delay = 40ms;
  Arq arq(config);
  deliver(arq, 0, at(0ms));
  arq.carrier_reset(at(5ms));
  auto ack = arq.poll_ack(at(5ms));
  REQUIRE(ack);
  CHECK(ack->cumulative == 1);
}

TEST_CASE("make_ack gives the current ACK at any time, for piggybacking", "[arq][receiver][ack]") {
  ArqConfig config;
  config.ack_delay = 40ms;
  Arq arq(config);
  deliver(arq, 0, at(0ms));
  CHECK(arq.make_ack().cumulative == 1);
  CHECK_FALSE(arq.poll_ack(at(100ms)));  // it counted as sent
  CHECK(arq.stats().acks_sent == 1);
}

TEST_CASE("a bad configuration is refused with the field's name", "[arq][config]") {
  ArqConfig config;
  SECTION("min_rto above max_rto") {
    config.min_rto = 90s;
    CHECK_THROWS_WITH(Arq(config), Catch::Contains("initial_rto"));
    config.initial_rto = 90s;
    CHECK_THROWS_WITH(Arq(config), Catch::Contains("max_rto"));
  }
  SECTION("a zero window") {
    config.send_window_messages = 0;
    CHECK_THROWS_WITH(Arq(config), Catch::Contains("send_window_messages"));
  }
  SECTION("a back-off that shrinks") {
    config.backoff_factor = 0.5;
    CHECK_THROWS_WITH(Arq(config), Catch::Contains("backoff_factor"));
  }
  SECTION("ack_every_messages of 0") {
    config.ack_every_messages = 0;
    CHECK_THROWS_WITH(lp::validate(config), Catch::Contains("ack_every_messages"));
  }
  SECTION("the defaults are valid") { CHECK_NOTHROW(lp::validate(config)); }
}

TEST_CASE("reliable carrier: out-of-order frames are held even beyond the window, never dropped",
          "[arq][receiver][reliable]") {
  // Striped connections reorder; nothing dropped here would ever be re-sent (no timers). Up to
  // kReliableCarrierWindowSlack windows (4 x 4 messages, 4 x 32 bytes) are held.
  ArqConfig config;
  config.receive_window_messages = 4;
  config.receive_window_bytes = 32;
  Arq arq(config);
  for (std::uint64_t seq = 9; seq >= 1; --seq) deliver(arq, seq);
  CHECK(arq.stats().out_of_window_dropped == 0);
  CHECK(arq.stats().held_out_of_order_messages == 9);
  deliver(arq, 0);
  CHECK(received(arq) == std::vector<std::uint64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
}

TEST_CASE("over a reliable carrier, a frame far beyond the window is refused and not held", "[arq][receiver]") {
  ArqConfig config;
  config.mode = ArqMode::kReliableCarrier;
  config.receive_window_messages = 8;
  config.receive_window_bytes = 1000;
  Arq arq(config);
  const std::uint64_t limit = lp::ArqReceiver::kReliableCarrierWindowSlack * 8;
  CHECK(arq.on_data(limit - 1, make_message(limit - 1, 0), at(0ms)));  // a peer with a larger window
  CHECK_FALSE(arq.on_data(limit, make_message(limit, 0), at(0ms)));    // nobody honest is that far ahead
  CHECK_FALSE(arq.on_data(1, make_message(1, 4000), at(0ms)));          // nor holds that many bytes
  CHECK(arq.stats().out_of_window_dropped == 2);
  deliver(arq, 0);
  CHECK(received(arq) == std::vector<std::uint64_t>{0});  // the refused ones were not kept
}

TEST_CASE("a frame claiming sequence number 2^64 - 1 is dropped: its SACK range would wrap", "[arq][receiver][fuzz]") {
  // Found by tests/fuzz/arq_fuzz: held, it made an ACK with the range [2^64 - 1, 0), which the
  // peer's frame decoder refuses, closing the connection again after every reconnect.
  for (ArqConfig config : {ArqConfig{}, datagram_config()}) {
    Arq arq(config);
    // Refused (false: the engine closes that connection) or silently dropped, it is never held.
    static_cast<void>(arq.on_data(std::numeric_limits<std::uint64_t>::max(),
                                  make_message(std::numeric_limits<std::uint64_t>::max(), 0), at(0ms)));
    deliver(arq, 0);
    CHECK(received(arq) == std::vector<std::uint64_t>{0});
    const auto ack = arq.make_ack();
    CHECK(ack.cumulative == 1);
    CHECK(ack.sack.empty());
    CHECK(arq.stats().out_of_window_dropped == 1);
  }
}
