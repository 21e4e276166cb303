// TailFecSender / TailFecReceiver over two datagram-mode Arqs and a hand-driven link: the repairs
// of a burst's tail recover its lost units at the receiver, which acknowledges and delivers them as
// received ones (in order, once); a lost repair is one fewer symbol; nothing is sent at no loss.
#include <catch2/catch.hpp>

#include <set>

#include "sim_link.h"
#include "carrier/datagram/tail_fec.h"

using namespace std::chrono_literals;
using lp::Arq;
using lp::ArqTime;
using lp::RepairSymbol;
using lp::TailFecReceiver;
using lp::TailFecSender;
using lp::test::at;

namespace {

struct Pair {
  Arq sender{lp::test::datagram_config()}, receiver{lp::test::datagram_config()};
  TailFecSender fec_sender;
  TailFecReceiver fec_receiver;
  std::vector<std::uint64_t> delivered;

  // Submits and transmits `count` units of varied sizes at `now`; those in `lost` never arrive.
  void burst(std::uint64_t count, const std::set<std::uint64_t>& lost, ArqTime now) {
    for (std::uint64_t i = 0; i < count; ++i) sender.submit(lp::test::make_message(i, (i * 37) % 1300 + 20));
    while (auto frame = sender.poll_transmit(now)) {
      if (!lost.contains(frame->seq)) (void)receiver.on_data(frame->seq, lp::ArqPayload(frame->payload.begin(), frame->payload.end()), now);
    }
  }
  void deliver() {
    while (auto d = receiver.receive()) {
      delivered.push_back(lp::test::message_number(d->payload));
      fec_receiver.on_delivered(d->seq, std::move(d->payload));
    }
  }
};

}  // namespace

TEST_CASE("tail repairs: the tail's lost units are recovered without a re-send", "[fec]") {
  Pair pair;
  const std::set<std::uint64_t> lost{3, 150, 151, 420, 599};
  pair.burst(600, lost, at(0ms));
  pair.deliver();  // units 0-2 go to the application (kept for the block that reaches below)
  const std::vector<RepairSymbol> repairs = pair.fec_sender.protect_tail(pair.sender, at(10ms), 540ms, 0.01);
  REQUIRE_FALSE(repairs.empty());
  CHECK(repairs.size() < 60);  // a few per block of 200 at 1 %
  for (const RepairSymbol& repair : repairs) REQUIRE(pair.fec_receiver.on_repair(pair.receiver, repair.frame(), at(280ms)));
  pair.deliver();
  CHECK(pair.fec_receiver.recovered_units() == lost.size());
  REQUIRE(pair.delivered.size() == 600);
  for (std::uint64_t i = 0; i < 600; ++i) REQUIRE(pair.delivered[i] == i);
  // The receiver acknowledges them as received: one ACK covers everything, nothing to re-send.
  const lp::ArqAck ack = pair.receiver.make_ack();
  CHECK(ack.cumulative == 600);
  REQUIRE(pair.sender.on_ack(ack, at(550ms)));
  CHECK(pair.sender.all_acknowledged());
  CHECK(pair.sender.stats().messages_retransmitted == 0);
  CHECK(pair.receiver.stats().duplicates_dropped == 0);
}

TEST_CASE("tail repairs: lost repairs leave what they cannot recover to the ARQ", "[fec]") {
  Pair pair;
  pair.burst(100, {10, 20}, at(0ms));
  const std::vector<RepairSymbol> repairs = pair.fec_sender.protect_tail(pair.sender, at(10ms), 540ms, 0.01);
  REQUIRE(repairs.size() >= 2);
  // Only one repair arrives: two units missing, nothing recovered yet.
  REQUIRE(pair.fec_receiver.on_repair(pair.receiver, repairs.back().frame(), at(280ms)));
  pair.deliver();
  CHECK(pair.fec_receiver.recovered_units() == 0);
  CHECK(pair.delivered.size() == 10);
  // The ARQ's re-send of one unit arrives: the held repair now recovers the other.
  ArqTime sent{};
  const lp::ArqPayload* copy = pair.sender.held_copy(20, sent);
  REQUIRE(copy != nullptr);
  REQUIRE(pair.receiver.on_data(20, *copy, at(300ms)));
  pair.fec_receiver.on_data(pair.receiver, 20, at(300ms));
  pair.deliver();
  CHECK(pair.fec_receiver.recovered_units() == 1);
  REQUIRE(pair.delivered.size() == 100);
  for (std::uint64_t i = 0; i < 100; ++i) REQUIRE(pair.delivered[i] == i);
  // A repair arriving after its block is complete changes nothing.
  REQUIRE(pair.fec_receiver.on_repair(pair.receiver, repairs.front().frame(), at(310ms)));
  CHECK(pair.receiver.stats().duplicates_dropped == 0);
}

TEST_CASE("tail repairs: none at no loss, none twice for the same units, none for old ones", "[fec]") {
  Pair pair;
  pair.burst(100, {}, at(0ms));
  CHECK(pair.fec_sender.protect_tail(pair.sender, at(10ms), 540ms, 0.0).empty());
  pair.burst(50, {}, at(20ms));
  CHECK_FALSE(pair.fec_sender.protect_tail(pair.sender, at(30ms), 540ms, 0.05).empty());  // the 50 new ones
  CHECK(pair.fec_sender.protect_tail(pair.sender, at(40ms), 540ms, 0.05).empty());
  pair.burst(10, {}, at(2000ms));
  const auto repairs = pair.fec_sender.protect_tail(pair.sender, at(2010ms), 540ms, 0.05);
  REQUIRE_FALSE(repairs.empty());
  CHECK(repairs.front().first_sequence == 150);  // only units of the last round trip
  CHECK(repairs.front().data_count == 10);
}

TEST_CASE("tail repairs: a repair that disagrees with its block is refused", "[fec]") {
  Pair pair;
  pair.burst(20, {5}, at(0ms));
  std::vector<RepairSymbol> repairs = pair.fec_sender.protect_tail(pair.sender, at(10ms), 540ms, 0.05);
  REQUIRE(repairs.size() >= 2);
  REQUIRE(pair.fec_receiver.on_repair(pair.receiver, repairs[0].frame(), at(280ms)) == true);
  // Recovered at once (one missing, one repair); a second block of other size at the same start:
  RepairSymbol odd = repairs[1];
  odd.first_sequence = 0;
  odd.data_count = 30;  // unit 25 is missing there
  CHECK(pair.fec_receiver.recovered_units() == 1);
  odd.symbol.resize(10);  // shorter than the units it claims to cover
  CHECK_FALSE(pair.fec_receiver.on_repair(pair.receiver, odd.frame(), at(290ms)));
}

TEST_CASE("tail repairs: as many repairs as keep a block's failure under the target", "[fec]") {
  CHECK(TailFecSender::repairs_for(200, 0.0, 0.001) == 0);
  CHECK(TailFecSender::repairs_for(1, 0.01, 0.001) == 1);
  const std::size_t at_1 = TailFecSender::repairs_for(200, 0.0125, 0.02 / 36);
  const std::size_t at_5 = TailFecSender::repairs_for(200, 0.0625, 0.02 / 36);
  CHECK(at_1 >= 8);
  CHECK(at_1 <= 12);
  CHECK(at_5 >= 24);
  CHECK(at_5 <= 32);
  CHECK(TailFecSender::repairs_for(200, 0.5, 0.001) == 55);  // what the code allows
}

TEST_CASE("tail repairs: a short tail gets its share of the failure target, not all of it", "[fec]") {
  // Answers of one unit each make a tail apiece: at 5 % loss one copy let 0.4 % of them through,
  // a third of lp-perf's batches of 100 a round trip late. Three copies: 0.002 %.
  Pair at_5;
  at_5.burst(1, {}, at(0ms));
  CHECK(at_5.fec_sender.protect_tail(at_5.sender, at(1ms), 540ms, 0.05).size() == 3);
  Pair at_1;
  at_1.burst(1, {}, at(0ms));
  CHECK(at_1.fec_sender.protect_tail(at_1.sender, at(1ms), 540ms, 0.01).size() == 1);
  // A tail of 100 or more units: the whole target, as before.
  Pair long_tail;
  long_tail.burst(100, {}, at(0ms));
  CHECK(long_tail.fec_sender.protect_tail(long_tail.sender, at(1ms), 540ms, 0.05).size() ==
        TailFecSender::repairs_for(100, 0.05 * TailFecSender::kLossMargin, TailFecSender::kTailFailure));
}

TEST_CASE("tail repairs: the loss estimate starts from a prior and follows what ACKs showed missing", "[fec]") {
  lp::ArqStats stats;
  CHECK(TailFecSender::loss_estimate(-1, stats) == Approx(TailFecSender::kPriorLoss));
  stats.messages_sent = 10'000;
  stats.messages_acked = 10'000;
  CHECK(TailFecSender::loss_estimate(-1, stats) < 0.001);  // a loss-free path outweighs the prior
  stats.messages_seen_missing = 500;
  stats.fast_retransmits = 100;  // most of the 500 recovered by repairs before a re-send
  // 500 of 10,500 told of (a unit the repairs recovered was seen missing and is acknowledged).
  CHECK(TailFecSender::loss_estimate(-1, stats) == Approx(0.0476).epsilon(0.01));
  CHECK(TailFecSender::loss_estimate(20'000, stats) == Approx(0.02));  // the pacer's, once it has one
}

TEST_CASE("tail repairs: units in flight are no evidence: a new session's first tail is sized from the prior", "[fec]") {
  // A first burst of 100 units, its repairs computed as its last unit leaves: no ACK has come, so
  // nothing is known of the path but the prior. Counting the 100 as loss-free transmissions sized
  // them for 0.7 %: 3 repairs, which a 5 % path outlasts in three batches of four.
  lp::ArqStats stats;
  stats.messages_sent = 100;
  CHECK(TailFecSender::loss_estimate(-1, stats) == Approx(TailFecSender::kPriorLoss));
  Pair first;
  first.burst(100, {}, at(0ms));
  const std::size_t repairs = first.fec_sender.protect_tail(first.sender, at(1ms), 540ms, TailFecSender::loss_estimate(-1, first.sender.stats())).size();
  CHECK(repairs == TailFecSender::repairs_for(100, TailFecSender::kPriorLoss * TailFecSender::kLossMargin, TailFecSender::kTailFailure));
  CHECK(repairs >= 6);
  // Once ACKs told of them, the same 100 units are evidence.
  stats.messages_acked = 100;
  CHECK(TailFecSender::loss_estimate(-1, stats) < TailFecSender::kPriorLoss / 2);
}

TEST_CASE("tail repairs: on a path the cache knows to lose more, its loss is the prior, and evidence still wins", "[fec]") {
  lp::ArqStats stats;
  CHECK(TailFecSender::loss_estimate(-1, stats, 50'000) == Approx(0.05));
  // A cached loss under the prior is a floor, not proof: the prior stands.
  CHECK(TailFecSender::loss_estimate(-1, stats, 0) == Approx(TailFecSender::kPriorLoss));
  CHECK(TailFecSender::loss_estimate(-1, stats, 10'000) == Approx(TailFecSender::kPriorLoss));
  stats.messages_sent = stats.messages_acked = 100;  // a first batch of 100 units, none seen missing
  CHECK(TailFecSender::loss_estimate(-1, stats, 50'000) > 0.03);  // still mostly the path's
  stats.messages_sent = stats.messages_acked = 20'000;
  CHECK(TailFecSender::loss_estimate(-1, stats, 50'000) < 0.002);  // the path changed: it follows
  CHECK(TailFecSender::loss_estimate(10'000, stats, 50'000) == Approx(0.01));  // the pacer's first
}

TEST_CASE("tail repairs: what the path towards us lost counts too, once enough came", "[fec]") {
  // An end that answers: its own evidence says little loss (its repairs recovered what was lost,
  // and the peer acknowledged those units with the others), the units it received say 5 %.
  lp::ArqStats stats;
  stats.messages_sent = stats.messages_acked = 2000;
  stats.messages_seen_missing = 10;
  stats.messages_received = 99;
  stats.messages_skipped = 5;
  CHECK(TailFecSender::loss_estimate(-1, stats) < 0.01);  // too few received to tell
  stats.messages_received = 2000;
  stats.messages_skipped = 100;
  CHECK(TailFecSender::loss_estimate(-1, stats) == Approx(0.05));
  CHECK(TailFecSender::loss_estimate(20'000, stats) == Approx(0.05));  // above the pacer's too
  stats.messages_skipped = 0;
  CHECK(TailFecSender::loss_estimate(-1, stats) < 0.01);  // the larger of the two
}
