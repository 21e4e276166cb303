// The sending half of the Arq, driven frame by frame: windows, ACK validation, RTO timer and
// back-off, Karn's rule, SACK, fast retransmit, reliable-carrier resets.
#include <catch2/catch.hpp>

#include "sim_link.h"

using namespace std::chrono_literals;
using lp::Arq;
using lp::ArqAck;
using lp::ArqConfig;
using lp::ArqMode;
using lp::ArqTime;
using lp::test::at;
using lp::test::datagram_config;
using lp::test::make_message;

namespace {

// Transmits everything the Arq will hand out at `now`; returns the sequence numbers.
std::vector<std::uint64_t> transmit_all(Arq& arq, ArqTime now) {
  std::vector<std::uint64_t> seqs;
  while (auto frame = arq.poll_transmit(now)) seqs.push_back(frame->seq);
  return seqs;
}

// An Arq of `config` with messages 0 .. count-1 submitted.
Arq with_messages(const ArqConfig& config, int count) {
  Arq arq(config);
  for (int i = 0; i < count; ++i) arq.submit(make_message(i));
  return arq;
}

ArqAck ack(std::uint64_t cumulative, std::vector<lp::ArqSackRange> sack = {}, std::uint32_t window = 4096) {
  return ArqAck{.cumulative = cumulative, .sack = std::move(sack), .window_messages = window};
}

}  // namespace

TEST_CASE("sequence numbers start at 0 and frames carry the payload untouched", "[arq][sender]") {
  Arq arq;
  CHECK(arq.submit(make_message(7, 3)) == 0);
  CHECK(arq.submit(make_message(8)) == 1);
  auto frame = arq.poll_transmit(at(0ms));
  REQUIRE(frame);
  CHECK(frame->seq == 0);
  const auto expected = make_message(7, 3);
  CHECK(std::equal(frame->payload.begin(), frame->payload.end(), expected.begin(), expected.end()));
}

TEST_CASE("the send window is bounded in messages: full, then open again after an ACK", "[arq][sender]") {
  ArqConfig config;
  config.send_window_messages = 3;
  Arq arq(config);
  for (int i = 0; i < 3; ++i) {
    REQUIRE(arq.can_accept(10));
    arq.submit(make_message(i));
  }
  CHECK_FALSE(arq.can_accept(10));
  CHECK(transmit_all(arq, at(0ms)) == std::vector<std::uint64_t>{0, 1, 2});
  CHECK_FALSE(arq.can_accept(10));  // transmitted is not acknowledged
  REQUIRE(arq.on_ack(ack(2), at(50ms)));
  CHECK(arq.can_accept(10));
  CHECK(arq.stats().in_flight_messages == 1);
  CHECK(arq.stats().messages_acked == 2);
}

TEST_CASE("the send window is bounded in bytes; an oversized message goes alone", "[arq][sender]") {
  ArqConfig config;
  config.send_window_bytes = 100;
  Arq arq(config);
  CHECK(arq.can_accept(1000));  // nothing outstanding: it must be able to go
  arq.submit(lp::ArqPayload(60));
  CHECK(arq.can_accept(40));
  CHECK_FALSE(arq.can_accept(41));
  arq.submit(lp::ArqPayload(40));
  CHECK(arq.stats().in_flight_bytes == 100);
  CHECK_FALSE(arq.can_accept(1));
  transmit_all(arq, at(0ms));
  REQUIRE(arq.on_ack(ack(1), at(10ms)));
  CHECK(arq.can_accept(60));
  CHECK_FALSE(arq.can_accept(61));
}

TEST_CASE("the sender never transmits past the receive window the peer advertised", "[arq][sender]") {
  Arq arq;
  for (int i = 0; i < 10; ++i) arq.submit(make_message(i));
  REQUIRE(arq.on_ack(ack(0, {}, 3), at(0ms)));
  CHECK(transmit_all(arq, at(0ms)) == std::vector<std::uint64_t>{0, 1, 2});
  REQUIRE(arq.on_ack(ack(2, {}, 3), at(10ms)));
  CHECK(transmit_all(arq, at(10ms)) == std::vector<std::uint64_t>{3, 4});
  CHECK(arq.stats().peer_window_messages == 3);
}

TEST_CASE("next_transmit_bytes names the frame poll_transmit hands out next, without taking it", "[arq][sender]") {
  Arq arq;
  CHECK_FALSE(arq.next_transmit_bytes());
  for (int i = 0; i < 4; ++i) arq.submit(make_message(i, 10 * i));
  REQUIRE(arq.on_ack(ack(0, {}, 3), at(0ms)));  // the peer's window admits three
  for (std::uint64_t i = 0; i < 3; ++i) {
    REQUIRE(arq.next_transmit_bytes() == make_message(i, 10 * i).size());
    REQUIRE(arq.next_transmit_bytes() == make_message(i, 10 * i).size());  // a look changes nothing
    auto frame = arq.poll_transmit(at(0ms));
    REQUIRE(frame);
    CHECK(frame->seq == i);
  }
  CHECK_FALSE(arq.next_transmit_bytes());  // past the peer's window, as poll_transmit
  CHECK_FALSE(arq.poll_transmit(at(0ms)));
  REQUIRE(arq.on_ack(ack(1, {}, 3), at(10ms)));
  CHECK(arq.next_transmit_bytes() == make_message(3, 30).size());
}

TEST_CASE("an ACK for something never transmitted is rejected and changes nothing", "[arq][sender]") {
  Arq arq(datagram_config());
  for (int i = 0; i < 4; ++i) arq.submit(make_message(i));
  transmit_all(arq, at(0ms));  // 0..3 on the wire
  arq.submit(make_message(4));   // submitted, not transmitted

  SECTION("cumulative beyond the transmitted") { CHECK_FALSE(arq.on_ack(ack(5), at(1ms))); }
  SECTION("a SACK range at or below the cumulative point") { CHECK_FALSE(arq.on_ack(ack(1, {{1, 2}}), at(1ms))); }
  SECTION("a SACK range beyond the transmitted") { CHECK_FALSE(arq.on_ack(ack(0, {{2, 5}}), at(1ms))); }
  SECTION("an empty SACK range") { CHECK_FALSE(arq.on_ack(ack(0, {{2, 2}}), at(1ms))); }
  SECTION("SACK ranges out of order") { CHECK_FALSE(arq.on_ack(ack(0, {{3, 4}, {1, 2}}), at(1ms))); }
  SECTION("overlapping SACK ranges") { CHECK_FALSE(arq.on_ack(ack(0, {{1, 3}, {2, 4}}), at(1ms))); }

  CHECK(arq.stats().invalid_acks == 1);
  CHECK(arq.stats().messages_acked == 0);
  CHECK(arq.stats().in_flight_messages == 5);
}

TEST_CASE("an old or repeated ACK is harmless", "[arq][sender]") {
  Arq arq(datagram_config());
  for (int i = 0; i < 3; ++i) arq.submit(make_message(i));
  transmit_all(arq, at(0ms));
  REQUIRE(arq.on_ack(ack(2), at(100ms)));
  REQUIRE(arq.on_ack(ack(1), at(110ms)));  // reordered: older
  REQUIRE(arq.on_ack(ack(2), at(120ms)));  // repeated
  CHECK(arq.stats().messages_acked == 2);
  CHECK(arq.stats().rtt_samples == 1);
  CHECK(arq.stats().in_flight_messages == 1);
}

TEST_CASE("datagram mode: the RTO starts at initial_rto and backs off exponentially up to max_rto",
          "[arq][sender][rto]") {
  Arq arq(datagram_config());
  arq.submit(make_message(0));
  REQUIRE(transmit_all(arq, at(0ms)).size() == 1);
  // Expected retransmission times: 1 s after the first send, then 2, 4, 8, 16, 32, 60, 60 s apart.
  const std::vector<lp::ArqDuration> gaps{1s, 2s, 4s, 8s, 16s, 32s, 60s, 60s};
  ArqTime now = at(0ms);
  for (const auto gap : gaps) {
    REQUIRE(arq.next_deadline() == now + gap);
    CHECK(transmit_all(arq, now + gap - 1ms).empty());  // not a moment early
    now += gap;
    CHECK(transmit_all(arq, now) == std::vector<std::uint64_t>{0});
  }
  const auto stats = arq.stats();
  CHECK(stats.timeouts == gaps.size());
  CHECK(stats.messages_retransmitted == gaps.size());
  CHECK(stats.rto == 60s);
  // An ACK that acknowledges the message ends the back-off (no RTT sample: Karn).
  REQUIRE(arq.on_ack(ack(1), now + 100ms));
  CHECK(arq.stats().rto == 1s);
  CHECK(arq.stats().rtt_samples == 0);
  CHECK_FALSE(arq.next_deadline());  // nothing in flight, no timer
}

TEST_CASE("datagram mode: the RTO never drops below min_rto", "[arq][sender][rto]") {
  Arq arq(datagram_config());
  arq.submit(make_message(0));
  transmit_all(arq, at(0ms));
  REQUIRE(arq.on_ack(ack(1), at(10ms)));  // 10 ms RTT: 10 + 4 * 5 = 30 ms < 200 ms
  CHECK(arq.stats().srtt == 10ms);
  arq.submit(make_message(1));
  transmit_all(arq, at(20ms));
  CHECK(arq.next_deadline() == at(20ms) + 200ms);
  CHECK(transmit_all(arq, at(219ms)).empty());
  CHECK(transmit_all(arq, at(220ms)) == std::vector<std::uint64_t>{1});
}

TEST_CASE("Karn's rule: a retransmitted message gives no RTT sample, a fresh one does", "[arq][sender][rto]") {
  Arq arq(datagram_config());
  arq.submit(make_message(0));
  transmit_all(arq, at(0ms));
  REQUIRE(transmit_all(arq, at(1s)) == std::vector<std::uint64_t>{0});  // timeout
  REQUIRE(arq.on_ack(ack(1), at(1050ms)));  // which copy? unknowable: no sample
  CHECK(arq.stats().rtt_samples == 0);
  CHECK(arq.stats().srtt == 0ms);

  arq.submit(make_message(1));
  transmit_all(arq, at(2s));
  REQUIRE(arq.on_ack(ack(2), at(2s + 80ms)));
  CHECK(arq.stats().rtt_samples == 1);
  CHECK(arq.stats().srtt == 80ms);
}

TEST_CASE("one RTT sample per ACK, from the newest message it acknowledges", "[arq][sender][rto]") {
  Arq arq(datagram_config());
  arq.submit(make_message(0));
  transmit_all(arq, at(0ms));
  arq.submit(make_message(1));
  transmit_all(arq, at(30ms));
  REQUIRE(arq.on_ack(ack(2), at(100ms)));  // message 1: 70 ms (message 0 would say 100 ms)
  CHECK(arq.stats().rtt_samples == 1);
  CHECK(arq.stats().srtt == 70ms);
}

TEST_CASE("datagram mode: the timer restarts on progress and stops when nothing is in flight", "[arq][sender][rto]") {
  Arq arq(datagram_config());
  arq.submit(make_message(0));
  arq.submit(make_message(1));
  transmit_all(arq, at(0ms));
  CHECK(arq.next_deadline() == at(1s));
  REQUIRE(arq.on_ack(ack(1), at(100ms)));
  CHECK(arq.next_deadline() == at(100ms) + arq.stats().rto);
  REQUIRE(arq.on_ack(ack(2), at(150ms)));
  CHECK_FALSE(arq.next_deadline());
}

TEST_CASE("datagram mode: a carrier reset keeps a timer running while messages are unacknowledged",
          "[arq][sender][rto]") {
  // A carrier reset re-sends everything unacknowledged; what the caller lets go may be nothing for
  // a while (the datagram pacer's window). A timeout must still come: it is what frees that window.
  Arq arq(datagram_config());
  for (int i = 0; i < 3; ++i) arq.submit(make_message(i));
  transmit_all(arq, at(0ms));
  arq.carrier_reset(at(100ms));
  REQUIRE(arq.poll_ack(at(100ms)));  // the ACK a reset owes (the receiver's deadline)
  REQUIRE(arq.next_deadline());
  CHECK(*arq.next_deadline() == at(100ms) + arq.stats().rto);
  SECTION("nothing re-sent before it fires: one timeout, no back-off, the re-sends restart it") {
    const auto rto = arq.stats().rto;
    arq.on_timer(at(100ms) + rto);
    CHECK(arq.stats().timeouts == 1);
    CHECK(arq.stats().rto == rto);
    CHECK_FALSE(arq.next_deadline());
    CHECK(transmit_all(arq, at(2s)) == std::vector<std::uint64_t>{0, 1, 2});
    CHECK(arq.next_deadline() == at(2s) + rto);
  }
  SECTION("re-sent at once: the timer stands") {
    CHECK(transmit_all(arq, at(100ms)) == std::vector<std::uint64_t>{0, 1, 2});
    CHECK(*arq.next_deadline() == at(100ms) + arq.stats().rto);
  }
  SECTION("nothing was in flight: no timer") {
    REQUIRE(arq.on_ack(ack(3), at(150ms)));
    arq.carrier_reset(at(200ms));
    REQUIRE(arq.poll_ack(at(200ms)));
    CHECK_FALSE(arq.next_deadline());
  }
}

TEST_CASE("datagram mode: SACKed messages are freed and not retransmitted on timeout", "[arq][sender]") {
  Arq arq(datagram_config());
  for (int i = 0; i < 4; ++i) arq.submit(lp::ArqPayload(100));
  transmit_all(arq, at(0ms));
  REQUIRE(arq.on_ack(ack(0, {{1, 3}}), at(50ms)));
  CHECK(arq.stats().in_flight_bytes == 200);
  CHECK(arq.stats().messages_acked == 2);
  // Timer restarted at 50 ms with RTO = 50 + 4 * 25 = 150 ms -> 200 ms (min_rto).
  CHECK(transmit_all(arq, at(250ms)) == std::vector<std::uint64_t>{0, 3});
  REQUIRE(arq.on_ack(ack(4), at(300ms)));
  CHECK(arq.all_acknowledged());
  CHECK(arq.stats().messages_acked == 4);
}

TEST_CASE("datagram mode: fast retransmit after enough SACK evidence, before the RTO", "[arq][sender]") {
  Arq arq(datagram_config());
  for (int i = 0; i < 5; ++i) arq.submit(make_message(i));
  transmit_all(arq, at(0ms));
  REQUIRE(arq.on_ack(ack(0, {{1, 2}}), at(50ms)));
  REQUIRE(arq.on_ack(ack(0, {{1, 3}}), at(51ms)));
  CHECK(transmit_all(arq, at(52ms)).empty());  // two pieces of evidence are not enough
  SECTION("a repeated ACK is no new evidence") {
    REQUIRE(arq.on_ack(ack(0, {{1, 3}}), at(53ms)));
    CHECK(transmit_all(arq, at(54ms)).empty());
    CHECK(arq.stats().fast_retransmits == 0);
  }
  SECTION("the third ACK showing a later message triggers it") {
    REQUIRE(arq.on_ack(ack(0, {{1, 4}}), at(53ms)));
    CHECK(transmit_all(arq, at(54ms)) == std::vector<std::uint64_t>{0});
    CHECK(arq.stats().fast_retransmits == 1);
    CHECK(arq.stats().timeouts == 0);
    // Evidence about messages sent before the retransmission says nothing about it.
    REQUIRE(arq.on_ack(ack(0, {{1, 5}}), at(60ms)));
    CHECK(transmit_all(arq, at(61ms)).empty());
  }
}

TEST_CASE("datagram mode: a hole is re-sent once enough later messages are acknowledged, by however few ACKs",
          "[arq][sender]") {
  // A receiver that acknowledges once per read turn sends a burst's tail a few ACKs, each for
  // many messages: counting ACKs alone, its holes waited for the RTO.
  ArqConfig config = datagram_config();
  config.fast_retransmit_messages = 12;
  Arq arq = with_messages(config, 20);
  transmit_all(arq, at(0ms));
  SECTION("one ACK for 14 later messages") {
    REQUIRE(arq.on_ack(ack(0, {{1, 15}}), at(100ms)));
    CHECK(transmit_all(arq, at(101ms)) == std::vector<std::uint64_t>{0});
    CHECK(arq.stats().fast_retransmits == 1);
  }
  SECTION("two ACKs for 6 each: 12 in all") {
    REQUIRE(arq.on_ack(ack(0, {{1, 7}}), at(100ms)));
    CHECK(transmit_all(arq, at(101ms)).empty());  // 6 later ones may be a reordering
    REQUIRE(arq.on_ack(ack(0, {{1, 13}}), at(102ms)));
    CHECK(transmit_all(arq, at(103ms)) == std::vector<std::uint64_t>{0});
  }
  SECTION("off, one ACK is one piece of evidence") {
    Arq counting = with_messages(datagram_config(), 20);
    transmit_all(counting, at(0ms));
    REQUIRE(counting.on_ack(ack(0, {{1, 15}}), at(100ms)));
    CHECK(transmit_all(counting, at(101ms)).empty());
  }
}

TEST_CASE("datagram mode: a lost re-send is found by later re-sends' ACKs, before the RTO", "[arq][sender]") {
  // The tail of a burst: messages 0-3 were lost, nothing new is left to send, and the re-send of
  // 0 is lost too. The ACKs of the re-sends of 1-3 that come at least a minimum RTT after them
  // are for those re-sends (RFC 8985 6.2), so they are evidence against 0's. Taking no evidence
  // from re-sent messages left 0 to the RTO: a round trip and more per 5 %-loss batch on geo.
  Arq arq = with_messages(datagram_config(), 8);
  transmit_all(arq, at(0ms));
  for (std::uint64_t end = 5; end <= 7; ++end) REQUIRE(arq.on_ack(ack(0, {{4, end}}), at(100ms)));  // min RTT 100 ms
  REQUIRE(transmit_all(arq, at(101ms)) == std::vector<std::uint64_t>{0, 1, 2, 3});
  SECTION("ACKs a round trip after the re-sends") {
    REQUIRE(arq.on_ack(ack(0, {{1, 2}, {4, 7}}), at(201ms)));
    REQUIRE(arq.on_ack(ack(0, {{1, 3}, {4, 7}}), at(202ms)));
    CHECK(transmit_all(arq, at(203ms)).empty());  // two pieces of evidence are not enough
    REQUIRE(arq.on_ack(ack(0, {{1, 7}}), at(204ms)));
    CHECK(transmit_all(arq, at(205ms)) == std::vector<std::uint64_t>{0, 7});
    CHECK(arq.stats().timeouts == 0);
  }
  SECTION("ACKs sooner than a minimum RTT are for the first copies") {
    REQUIRE(arq.on_ack(ack(0, {{1, 2}, {4, 7}}), at(150ms)));
    REQUIRE(arq.on_ack(ack(0, {{1, 3}, {4, 7}}), at(151ms)));
    REQUIRE(arq.on_ack(ack(0, {{1, 7}}), at(152ms)));
    CHECK(transmit_all(arq, at(153ms)).empty());
    CHECK(arq.stats().fast_retransmits == 4);
  }
}

TEST_CASE("datagram mode: after resend_unread the next copies count as first ones for loss, not for RTT samples",
          "[arq][sender]") {
  // A reseal: the peer could open none of the first copies (sealed under keys it never proved).
  // With a carrier_reset every unit's next copy was a re-send, no RTT sample had come to date
  // them (RFC 8985 6.2), so their ACKs were no evidence and a lost one waited for the RTO: a
  // fresh process's first batch at 5 % loss 6x the floor instead of 3x.
  Arq arq = with_messages(datagram_config(), 8);
  transmit_all(arq, at(0ms));
  const bool unread = GENERATE(true, false);
  CAPTURE(unread);
  if (unread) {
    arq.resend_unread(at(300ms));
  } else {
    arq.carrier_reset(at(300ms));
  }
  REQUIRE(transmit_all(arq, at(300ms)) == std::vector<std::uint64_t>{0, 1, 2, 3, 4, 5, 6, 7});
  for (std::uint64_t end = 2; end <= 4; ++end) REQUIRE(arq.on_ack(ack(0, {{1, end}}), at(600ms)));
  if (unread) {
    CHECK(transmit_all(arq, at(601ms)) == std::vector<std::uint64_t>{0});
    CHECK(arq.stats().fast_retransmits == 1);
  } else {
    CHECK(transmit_all(arq, at(601ms)).empty());
  }
  CHECK(arq.stats().rtt_samples == 0);  // Karn: an old copy may yet be read (a false alarm)
  CHECK(arq.stats().messages_sent == 8);
  CHECK(arq.stats().timeouts == 0);
}

TEST_CASE("datagram mode: re-sends at the tail of a burst go tail_copies times, others once", "[arq][sender]") {
  ArqConfig config = datagram_config();
  config.tail_copies = 3;
  Arq arq = with_messages(config, 8);
  SECTION("nothing new waits") {
    transmit_all(arq, at(0ms));
    for (std::uint64_t end = 3; end <= 5; ++end) REQUIRE(arq.on_ack(ack(0, {{2, end}}), at(100ms)));
    REQUIRE(arq.poll_transmit(at(101ms))->seq == 0);
    REQUIRE(arq.poll_transmit(at(101ms))->seq == 1);
    // The copies follow the other re-sends; one acknowledged before it goes is not sent.
    REQUIRE(arq.on_ack(ack(1, {{2, 5}}), at(102ms)));
    CHECK(transmit_all(arq, at(103ms)) == std::vector<std::uint64_t>{1, 1});
  }
  SECTION("new messages wait") {
    for (int i = 0; i < 5; ++i) REQUIRE(arq.poll_transmit(at(0ms)));
    for (std::uint64_t end = 3; end <= 5; ++end) REQUIRE(arq.on_ack(ack(0, {{2, end}}), at(100ms)));
    CHECK(transmit_all(arq, at(101ms)) == std::vector<std::uint64_t>{0, 1, 5, 6, 7});
  }
}

TEST_CASE("datagram mode: re-sends of a burst's last round trip get the tail's copies", "[arq][sender]") {
  ArqConfig config = datagram_config();
  config.tail_copies = 3;
  config.copy_recent_resends_rtts = 1.25;
  Arq arq = with_messages(config, 10);
  for (int i = 0; i < 6; ++i) REQUIRE(arq.poll_transmit(at(0ms)));
  for (std::uint64_t end = 3; end <= 6; ++end) REQUIRE(arq.on_ack(ack(0, {{2, end}}), at(100ms)));
  // 0 and 1 go again while 6-9 wait (once each), then 6-9; when the new messages ran out, the
  // re-sends still unacknowledged go twice more, oldest first; one acknowledged meanwhile does not.
  CHECK(transmit_all(arq, at(101ms)) == std::vector<std::uint64_t>{0, 1, 6, 7, 8, 9, 0, 0, 1, 1});
  Arq later = with_messages(config, 10);
  for (int i = 0; i < 6; ++i) REQUIRE(later.poll_transmit(at(0ms)));
  for (std::uint64_t end = 3; end <= 6; ++end) REQUIRE(later.on_ack(ack(0, {{2, end}}), at(100ms)));
  for (int i = 0; i < 5; ++i) REQUIRE(later.poll_transmit(at(101ms)));  // 0, 1, 6, 7, 8
  REQUIRE(later.on_ack(ack(1, {{2, 6}}), at(102ms)));                   // 0 arrived
  CHECK(transmit_all(later, at(103ms)) == std::vector<std::uint64_t>{9, 1, 1});
  // Re-sends older than the span (x the minimum RTT, 100 ms here) get no copies.
  Arq old = with_messages(config, 10);
  for (int i = 0; i < 6; ++i) REQUIRE(old.poll_transmit(at(0ms)));
  for (std::uint64_t end = 3; end <= 6; ++end) REQUIRE(old.on_ack(ack(0, {{2, end}}), at(100ms)));
  for (int i = 0; i < 5; ++i) REQUIRE(old.poll_transmit(at(101ms)));
  CHECK(transmit_all(old, at(240ms)) == std::vector<std::uint64_t>{9});
}

TEST_CASE("datagram mode: min_rto_margin keeps the RTO clear of a steady path's RTT", "[arq][sender][rto]") {
  ArqConfig config = datagram_config();
  config.min_rto_margin = 200ms;
  Arq arq(config);
  ArqTime now = at(0ms);
  for (int i = 0; i < 50; ++i) {  // 540 ms every time: RTTVAR decays to nothing
    arq.submit(make_message(i));
    transmit_all(arq, now);
    now += 540ms;
    REQUIRE(arq.on_ack(ack(static_cast<std::uint64_t>(i) + 1), now));
  }
  CHECK(arq.stats().rttvar < 5ms);
  CHECK(arq.stats().rto == arq.stats().srtt + 200ms);
}

TEST_CASE("fast retransmit can be disabled", "[arq][sender]") {
  ArqConfig config = datagram_config();
  config.fast_retransmit_threshold = 0;
  Arq arq = with_messages(config, 6);
  transmit_all(arq, at(0ms));
  for (std::uint64_t end = 2; end <= 6; ++end) REQUIRE(arq.on_ack(ack(0, {{1, end}}), at(50ms)));
  CHECK(transmit_all(arq, at(60ms)).empty());
  CHECK(arq.stats().fast_retransmits == 0);
}

TEST_CASE("datagram mode: max_transmissions declares the peer dead", "[arq][sender]") {
  ArqConfig config = datagram_config();
  config.max_transmissions = 3;
  Arq arq(config);
  arq.submit(make_message(0));
  ArqTime now = at(0ms);
  transmit_all(arq, now);
  for (int expiry = 0; expiry < 2; ++expiry) {
    now = *arq.next_deadline();
    transmit_all(arq, now);
    CHECK_FALSE(arq.peer_dead());
  }
  now = *arq.next_deadline();
  arq.on_timer(now);  // the third copy also went unanswered
  CHECK(arq.peer_dead());
}

TEST_CASE("oldest_unacked_since reports when the oldest unacknowledged message first went out", "[arq][sender]") {
  Arq arq(datagram_config());
  CHECK_FALSE(arq.oldest_unacked_since());
  arq.submit(make_message(0));
  CHECK_FALSE(arq.oldest_unacked_since());  // not transmitted yet
  transmit_all(arq, at(5ms));
  arq.submit(make_message(1));
  transmit_all(arq, at(7ms));
  transmit_all(arq, at(5ms + 1s));  // a retransmission does not make it younger
  CHECK(arq.oldest_unacked_since() == at(5ms));
  REQUIRE(arq.on_ack(ack(1), at(1100ms)));
  CHECK(arq.oldest_unacked_since() == at(7ms));
}

TEST_CASE("reliable-carrier mode never retransmits on a timer", "[arq][sender][reliable]") {
  Arq arq;  // default mode
  REQUIRE(arq.config().mode == ArqMode::kReliableCarrier);
  arq.submit(make_message(0));
  transmit_all(arq, at(0ms));
  CHECK_FALSE(arq.next_deadline());
  CHECK(transmit_all(arq, at(3600s)).empty());
  CHECK(arq.stats().messages_retransmitted == 0);
  CHECK(arq.stats().timeouts == 0);
}

TEST_CASE("reliable-carrier mode still measures the RTT", "[arq][sender][reliable]") {
  Arq arq;
  arq.submit(make_message(0));
  transmit_all(arq, at(0ms));
  REQUIRE(arq.on_ack(ack(1), at(540ms)));
  CHECK(arq.stats().srtt == 540ms);
  CHECK(arq.stats().rttvar == 270ms);
}

TEST_CASE("carrier_reset re-sends every unacknowledged message in order, once", "[arq][sender][reliable]") {
  Arq arq;
  for (int i = 0; i < 6; ++i) arq.submit(make_message(i));
  CHECK(transmit_all(arq, at(0ms)).size() == 6);
  REQUIRE(arq.on_ack(ack(2), at(50ms)));
  arq.carrier_reset(at(60ms));
  arq.submit(make_message(6));
  CHECK(transmit_all(arq, at(70ms)) == std::vector<std::uint64_t>{2, 3, 4, 5, 6});
  CHECK(transmit_all(arq, at(80ms)).empty());
  const auto stats = arq.stats();
  CHECK(stats.messages_retransmitted == 4);
  CHECK(stats.messages_sent == 7);
  CHECK(stats.carrier_resets == 1);
  // Karn: the re-sent ones give no sample; message 6 (sent once, at 70 ms) does.
  REQUIRE(arq.on_ack(ack(6), at(170ms)));
  CHECK(arq.stats().rtt_samples == 1);  // the first ACK's sample only
  REQUIRE(arq.on_ack(ack(7), at(170ms)));
  CHECK(arq.stats().rtt_samples == 2);
  CHECK(arq.all_acknowledged());
}

TEST_CASE("carrier_reset with nothing outstanding sends nothing", "[arq][sender][reliable]") {
  Arq arq;
  arq.submit(make_message(0));
  transmit_all(arq, at(0ms));
  REQUIRE(arq.on_ack(ack(1), at(50ms)));
  arq.carrier_reset(at(60ms));
  CHECK(transmit_all(arq, at(60ms)).empty());
  CHECK(arq.stats().messages_retransmitted == 0);
}
