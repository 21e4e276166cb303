// The datagram carrier: its wire format and replay window (pure), a session's channel split and
// joined back (pure), and two engines on loopback with LONGPIPE_CARRIER=udp (real sockets):
// messages of every size arrive once, in order, intact; forged datagrams are dropped and counted.
#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <sys/socket.h>

#include <unistd.h>

#include <chrono>
#include <deque>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <thread>

#include "carrier/carrier_choice.h"
#include "config.h"
#include "carrier/datagram/datagram_channel.h"
#include "carrier/datagram/datagram_pen.h"
#include "carrier/datagram/datagram_wire.h"
#include "engine.h"
#include "loopback_engine_config.h"
#include "message.h"
#include "raw_peer.h"
#include "carrier/datagram/udp_carrier.h"

using namespace std::chrono_literals;

namespace {

lp::TrafficKeys keys() {
  lp::TrafficKeys k;
  for (std::size_t i = 0; i < k.dialler_to_acceptor.size(); ++i) {
    k.dialler_to_acceptor[i] = std::byte(i);
    k.acceptor_to_dialler[i] = std::byte(200 - i);
  }
  return k;
}

// Seals under `k`, filed as connection `owner`'s keys (what a session does for its sealing connection).
void use_keys(lp::DatagramChannel& channel, std::uint64_t owner, const lp::TrafficKeys& k, bool outgoing) {
  channel.add_keys(owner, k, outgoing, lp::Protection::kEncrypt);
  REQUIRE(channel.seal_with(owner));
}

std::vector<std::byte> sealed_data(lp::DatagramCrypto& crypto, std::uint64_t seq) {
  std::vector<std::byte> datagram;
  lp::begin_datagram(datagram);
  const std::vector<std::byte> unit(40, std::byte{7});
  lp::encode_data(datagram, seq, unit);
  crypto.seal(datagram);
  return datagram;
}

lp::Message numbered(std::uint32_t index, std::size_t size) {
  lp::Message m;
  m.tag = static_cast<std::int32_t>(index);
  m.body.resize(size);
  for (std::size_t i = 0; i < size; ++i) m.body[i] = static_cast<std::byte>((index * 31 + i) & 0xff);
  return m;
}

// A datagram's receive time as the kernel would give it (UdpCarrier::Sink): here the fake clock's.
std::int64_t kernel_time(lp::ArqTime t) { return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count(); }

lp::Config udp_config() {
  lp::Config config = lp::test::loopback_engine_config("datagram-key", 3000ms);
  config.carrier = lp::CarrierChoice::kUdp;
  return config;
}

// Counted datagrams: DATA and ACKs only. Repairs follow every tail of a new session (their loss
// estimate starts from a prior: tail_fec.h), and have their own tests.
lp::Config udp_config_without_repairs() {
  lp::Config config = udp_config();
  config.datagram_fec = false;
  return config;
}

std::string port_of(const std::string& endpoint) { return endpoint.substr(endpoint.rfind(':') + 1); }

// The acceptor's end of a datagram session, driven by hand: `channel` receives what `peer` seals,
// into an ARQ configured as a datagram session configures it (the ACK cases below).
struct ReceivingChannel {
  static lp::ArqConfig datagram_arq_config(const lp::Config& config) {
    lp::ArqConfig arq_config;
    configure_for_datagrams(arq_config, config);
    return arq_config;
  }
  ReceivingChannel() { use_keys(channel, 1, keys(), false); }
  // One DATA unit from the peer, accepted.
  void arrive(std::uint64_t seq, lp::ArqTime now) { arrive(seq, kernel_time(now), now); }
  // ... which the kernel received at `arrival_ns`, read at `now`.
  void arrive(std::uint64_t seq, std::int64_t arrival_ns, lp::ArqTime now) {
    auto datagram = sealed_data(peer, seq);
    std::string why;
    REQUIRE(channel.on_datagram(arq, datagram, arrival_ns, now, why) == lp::DatagramChannel::Verdict::kAccepted);
  }

  const lp::Config config = udp_config_without_repairs();
  lp::Arq arq{datagram_arq_config(config)};
  lp::DatagramChannel channel{config};
  lp::DatagramCrypto peer{keys(), true, lp::Protection::kEncrypt};
};

}  // namespace

TEST_CASE("datagram channel: opens under any of its connections' keys, each datagram once", "[datagram][wire]") {
  const lp::Config config = udp_config_without_repairs();
  lp::ArqConfig arq_config;
  configure_for_datagrams(arq_config, config);
  lp::Arq arq(arq_config);
  lp::DatagramChannel channel(config);  // the acceptor of two connections; seals under the first
  lp::TrafficKeys first = keys(), second = keys(), unknown = keys();
  second.dialler_to_acceptor[0] = std::byte{0x51};
  unknown.dialler_to_acceptor[0] = std::byte{0x52};
  channel.add_keys(10, first, false, lp::Protection::kEncrypt);
  channel.add_keys(11, second, false, lp::Protection::kEncrypt);
  REQUIRE(channel.seal_with(10));
  lp::DatagramCrypto peer_first(first, true, lp::Protection::kEncrypt), peer_second(second, true, lp::Protection::kEncrypt),
      stranger(unknown, true, lp::Protection::kEncrypt);
  std::string why;
  const auto verdict = [&](std::vector<std::byte> datagram) { return channel.on_datagram(arq, datagram, 0, lp::ArqTime{}, why); };
  // The peer sealed under the second connection's keys (its first was lost on the way): opened.
  const auto under_second = sealed_data(peer_second, 1);
  CHECK(verdict(under_second) == lp::DatagramChannel::Verdict::kAccepted);
  CHECK(verdict(sealed_data(peer_first, 2)) == lp::DatagramChannel::Verdict::kAccepted);
  // Each key's replay window holds: the same datagram again is a replay, whichever key is tried first.
  CHECK(verdict(under_second) == lp::DatagramChannel::Verdict::kReplayed);
  for (int i = 0; i < 5; ++i) sealed_data(stranger, 3);  // past the datagram sequences seen (those would be replays)
  CHECK(verdict(sealed_data(stranger, 3)) == lp::DatagramChannel::Verdict::kUnauthentic);
  auto altered = sealed_data(peer_second, 4);
  altered.back() ^= std::byte{1};
  CHECK(verdict(altered) == lp::DatagramChannel::Verdict::kUnauthentic);
  CHECK(verdict(sealed_data(peer_second, 5)) == lp::DatagramChannel::Verdict::kAccepted);  // the failures left nothing behind
  CHECK(arq.stats().messages_received == 3u);
}

TEST_CASE("datagram channel: a malformed frame fresh under another connection's keys is malformed, not a replay",
          "[datagram][wire]") {
  // Found by the datagram fuzz target: the first key set tried had seen the sequence (its replay
  // window said so), the second opened nothing because the frame is not one; the verdict was the
  // first one's "replayed", for a datagram nobody had sent before.
  const lp::Config config = udp_config_without_repairs();
  lp::ArqConfig arq_config;
  configure_for_datagrams(arq_config, config);
  lp::Arq arq(arq_config);
  lp::DatagramChannel channel(config);
  lp::TrafficKeys first = keys(), second = keys();
  second.dialler_to_acceptor[0] = std::byte{0x51};
  channel.add_keys(10, first, false, lp::Protection::kEncrypt);
  channel.add_keys(11, second, false, lp::Protection::kEncrypt);
  REQUIRE(channel.seal_with(10));
  lp::DatagramCrypto peer_first(first, true, lp::Protection::kEncrypt), peer_second(second, true, lp::Protection::kEncrypt);
  std::string why;
  auto datagram = sealed_data(peer_first, 0);  // sequence 0 under the first keys
  REQUIRE(channel.on_datagram(arq, datagram, 0, lp::ArqTime{}, why) == lp::DatagramChannel::Verdict::kAccepted);
  // Sequence 0 under the second keys: a frame of an unknown type, sealed by the key holder.
  std::vector<std::byte> unknown;
  lp::begin_datagram(unknown);
  for (std::uint8_t b : {0x4C, 0x50, int{lp::kProtocolVersion}, 0x7f, 0, 0, 0, 4, 1, 2, 3, 4}) {
    unknown.push_back(std::byte(b));
  }
  peer_second.seal(unknown);
  CHECK(channel.on_datagram(arq, unknown, 0, lp::ArqTime{}, why) == lp::DatagramChannel::Verdict::kMalformed);
  CHECK(why.find("unknown frame type") != std::string::npos);
}

TEST_CASE("datagram wire: sealed datagrams open once, on the other side only", "[datagram][wire]") {
  lp::DatagramCrypto dialler(keys(), true, lp::Protection::kEncrypt);
  lp::DatagramCrypto acceptor(keys(), false, lp::Protection::kEncrypt);
  auto first = sealed_data(dialler, 1);
  auto second = sealed_data(dialler, 2);
  auto copy = second;
  // Out of order is fine; the same datagram twice is a replay.
  CHECK(acceptor.open(second).verdict == lp::DatagramCrypto::Verdict::kOpened);
  CHECK(acceptor.open(first).verdict == lp::DatagramCrypto::Verdict::kOpened);
  CHECK(acceptor.open(copy).verdict == lp::DatagramCrypto::Verdict::kReplayed);
  // Our own datagrams do not open as the peer's (one key per direction).
  auto own = sealed_data(dialler, 3);
  CHECK(dialler.open(own).verdict == lp::DatagramCrypto::Verdict::kUnauthentic);
  // Any changed byte (the sequence, the header, the payload, the tag) fails.
  for (std::size_t at : {std::size_t{5}, std::size_t{14}, std::size_t{30}, own.size() - 1}) {
    auto altered = sealed_data(dialler, 4 + at);
    altered[at] ^= std::byte{1};
    const auto verdict = acceptor.open(altered).verdict;
    CHECK((verdict == lp::DatagramCrypto::Verdict::kUnauthentic || verdict == lp::DatagramCrypto::Verdict::kMalformed));
  }
  // Garbage of every length is refused without a throw.
  for (std::size_t size = 0; size < 80; ++size) {
    std::vector<std::byte> junk(size, std::byte{0x4c});
    CHECK(acceptor.open(junk).verdict != lp::DatagramCrypto::Verdict::kOpened);
  }
}

TEST_CASE("datagram wire: the replay window slides", "[datagram][wire]") {
  lp::ReplayWindow window;
  CHECK(window.fresh(10));
  window.mark(10);
  CHECK_FALSE(window.fresh(10));
  CHECK(window.fresh(9));
  window.mark(10 + lp::ReplayWindow::kSize);
  CHECK_FALSE(window.fresh(10));  // too old to tell
  CHECK(window.fresh(11 + lp::ReplayWindow::kSize / 2));
  window.mark(1'000'000);
  CHECK(window.fresh(999'999));
  CHECK_FALSE(window.fresh(1'000'000 - lp::ReplayWindow::kSize));
}

TEST_CASE("datagram channel: messages split into units and joined back", "[datagram][channel]") {
  const lp::Config config = udp_config();
  lp::ArqConfig arq_config;
  arq_config.mode = lp::ArqMode::kDatagram;
  arq_config.send_window_messages = arq_config.receive_window_messages = 100'000;
  lp::Arq sender(arq_config), receiver(arq_config);
  lp::DatagramChannel channel(config);
  const std::vector<std::size_t> sizes = {20, 21, 1399, 1400, 1401, 1420, 2800, 2801, 100'000, 1 << 20};
  for (std::size_t size : sizes) {
    lp::ArqPayload packed(size);
    for (std::size_t i = 0; i < size; ++i) packed[i] = std::byte(size + i * 7);
    channel.submit(sender, packed);
  }
  const auto now = lp::ArqTime{};
  while (auto frame = sender.poll_transmit(now)) {
    REQUIRE(frame->payload.size() <= lp::kDatagramUnit + 1);
    REQUIRE(frame->payload.size() >= 1 + lp::kMessageTrailerSize);
    REQUIRE(receiver.on_data(frame->seq, lp::ArqPayload(frame->payload.begin(), frame->payload.end()), now));
  }
  std::vector<lp::ArqPayload> messages;
  REQUIRE(channel.take_received(receiver, messages));
  REQUIRE(messages.size() == sizes.size());
  for (std::size_t m = 0; m < sizes.size(); ++m) {
    REQUIRE(messages[m].size() == sizes[m]);
    for (std::size_t i = 0; i < sizes[m]; ++i) REQUIRE(messages[m][i] == std::byte(sizes[m] + i * 7));
  }
}

TEST_CASE("datagram channel: new keys while a window is in flight do not stall the sender", "[datagram][channel]") {
  // Both ends dialling at once: a sends a window of datagrams under the keys of the control
  // connection it installed first; b holds the other connection and refuses them; the tie-break
  // then gives both ends the same connection (new keys) and a's ARQ re-sends (carrier_reset).
  // Before the fix a's pacer still counted the refused datagrams in flight, its window stayed
  // shut, nothing was transmitted, so no retransmission timer ran either: a's messages never came.
  const lp::Config config = udp_config();
  lp::ArqConfig arq_config;
  configure_for_datagrams(arq_config, config);
  lp::Arq a_arq(arq_config), b_arq(arq_config);
  lp::DatagramChannel a(config), b(config);
  lp::TrafficKeys losing = keys(), winning = keys();
  losing.dialler_to_acceptor[0] = losing.acceptor_to_dialler[0] = std::byte{0x99};
  use_keys(a, 1, losing, true);   // a's first control connection (it dialled)
  use_keys(b, 2, winning, false);  // b kept the one a accepted... in the end both do
  lp::ArqPayload packed(400'000, std::byte{5});
  a.submit(a_arq, packed);
  lp::ArqTime now{};
  std::string why;
  std::size_t refused = 0;
  for (int step = 0; step < 50; ++step, now += 1ms) {  // well within the first RTO (1 s)
    a.pump(a_arq, now);
    for (auto& datagram : a.outgoing()) {
      CHECK(b.on_datagram(b_arq, datagram, kernel_time(now), now, why) == lp::DatagramChannel::Verdict::kUnauthentic);
      ++refused;
    }
    a.outgoing().clear();
  }
  REQUIRE(refused > 0);
  REQUIRE_FALSE(a.pacer().window_open());  // a window in flight: nothing more may go yet
  // The tie-break's winner reaches a: new keys, everything unacknowledged goes again.
  use_keys(a, 2, winning, true);
  a_arq.carrier_reset(now);
  // From here a plain lossless exchange must deliver the message, without waiting for a timeout.
  std::vector<lp::ArqPayload> messages;
  for (int step = 0; step < 2000 && messages.empty(); ++step) {
    now += 1ms;
    a.pump(a_arq, now);
    for (auto& datagram : a.outgoing()) REQUIRE(b.on_datagram(b_arq, datagram, kernel_time(now), now, why) == lp::DatagramChannel::Verdict::kAccepted);
    a.outgoing().clear();
    b.pump(b_arq, now);
    for (auto& datagram : b.outgoing()) REQUIRE(a.on_datagram(a_arq, datagram, kernel_time(now), now, why) == lp::DatagramChannel::Verdict::kAccepted);
    b.outgoing().clear();
    REQUIRE(b.take_received(b_arq, messages));
  }
  REQUIRE(messages.size() == 1);
  CHECK(messages[0] == packed);
  CHECK(a_arq.stats().timeouts == 0);
  CHECK(a.pacer().lost_datagrams() == 0);  // the keys changed; the path lost nothing
}

namespace {

// Datagrams between two channels with a one-way delay of 50 ms (fake clock); `drop` decides which
// of a's datagrams are lost (the frame type is in the clear: datagram byte 15).
struct DelayedPair {
  static constexpr auto kDelay = std::chrono::milliseconds(50);
  lp::Config config;
  lp::ArqConfig arq_config;
  lp::Arq a_arq, b_arq;
  lp::DatagramChannel a, b;
  std::deque<std::pair<lp::ArqTime, std::vector<std::byte>>> to_b, to_a;
  lp::ArqTime now{};
  std::uint64_t data_sent = 0;  // a's DATA datagrams so far
  bool acks_flow = true;

  explicit DelayedPair(const lp::Config& c)
      : config(c), arq_config(configured(c)), a_arq(arq_config), b_arq(arq_config), a(config), b(config) {
    use_keys(a, 1, keys(), true);
    use_keys(b, 1, keys(), false);
  }
  static lp::ArqConfig configured(const lp::Config& c) {
    lp::ArqConfig arq;
    configure_for_datagrams(arq, c);
    return arq;
  }
  // One millisecond: a's datagrams (less the dropped ones) and b's ACKs cross; b's messages out.
  template <typename Drop>
  void step(std::vector<lp::ArqPayload>& messages, Drop drop) {
    now += std::chrono::milliseconds(1);
    a.pump(a_arq, now);
    for (auto& datagram : a.outgoing()) {
      const bool data = datagram[15] == std::byte{static_cast<std::uint8_t>(lp::FrameType::kData)};
      if (!(data && drop(data_sent))) to_b.emplace_back(now + kDelay, std::move(datagram));
      if (data) ++data_sent;
    }
    a.outgoing().clear();
    std::string why;
    while (!to_b.empty() && to_b.front().first <= now) {
      REQUIRE(b.on_datagram(b_arq, to_b.front().second, kernel_time(now), now, why) == lp::DatagramChannel::Verdict::kAccepted);
      to_b.pop_front();
    }
    REQUIRE(b.take_received(b_arq, messages));
    b.pump(b_arq, now);
    for (auto& datagram : b.outgoing()) {
      if (acks_flow) to_a.emplace_back(now + kDelay, std::move(datagram));
    }
    b.outgoing().clear();
    while (!to_a.empty() && to_a.front().first <= now) {
      REQUIRE(a.on_datagram(a_arq, to_a.front().second, kernel_time(now), now, why) == lp::DatagramChannel::Verdict::kAccepted);
      to_a.pop_front();
    }
  }
};

}  // namespace

TEST_CASE("datagram channel: repairs recover a burst's lost tail without a round trip", "[datagram][channel][fec]") {
  // A first message of 1500 units loses every 40th on the way (the sender learns the loss rate
  // from its fast re-sends); of a second one of 300 units three are lost, among them the last, and
  // no ACK comes back: only the repairs can make it whole before a timeout.
  lp::Config config = udp_config();
  const bool fec = GENERATE(true, false);
  CAPTURE(fec);
  config.datagram_fec = fec;
  DelayedPair pair(config);
  std::vector<lp::ArqPayload> messages;
  lp::ArqPayload first(1500 * lp::kDatagramUnit);
  for (std::size_t i = 0; i < first.size(); ++i) first[i] = std::byte(i * 7);
  pair.a.submit(pair.a_arq, first);
  for (int step = 0; step < 20000 && messages.empty(); ++step) pair.step(messages, [](std::uint64_t n) { return n % 40 == 39; });
  REQUIRE(messages.size() == 1);
  REQUIRE(messages[0] == first);
  for (int step = 0; step < 200; ++step) pair.step(messages, [](std::uint64_t) { return false; });  // settle
  REQUIRE(pair.a_arq.all_acknowledged());
  messages.clear();
  lp::ArqPayload second(300 * lp::kDatagramUnit);
  for (std::size_t i = 0; i < second.size(); ++i) second[i] = std::byte(i * 13 + 1);
  pair.a.submit(pair.a_arq, second);
  pair.acks_flow = false;
  const std::uint64_t base = pair.data_sent;
  const std::uint64_t recovered_before = pair.b.statistics().units_recovered;
  const std::uint64_t duplicates_before = pair.b_arq.stats().duplicates_dropped;
  const auto lost = [base](std::uint64_t n) { return n == base + 100 || n == base + 250 || n == base + 299; };
  for (int step = 0; step < 150; ++step) pair.step(messages, lost);  // a round trip is 100 ms
  CHECK(pair.a_arq.stats().timeouts == 0);
  const lp::DatagramStatistics received = pair.b.statistics();
  if (fec) {
    REQUIRE(messages.size() == 1);
    CHECK(messages[0] == second);
    CHECK(received.units_recovered - recovered_before == 3);
    CHECK(pair.a.statistics().repairs_sent > 0);
    CHECK(pair.b_arq.stats().duplicates_dropped == duplicates_before);  // each unit once
  } else {
    CHECK(messages.empty());
    CHECK(pair.a.statistics().repairs_sent == 0);
  }
}

TEST_CASE("datagram channel: a tail's repairs follow its last unit, however slowly the units came", "[datagram][channel][fec]") {
  // The application submits a unit a millisecond, slower than the pacer lets them go: each pump
  // ends in the pacer's gap after its one unit, and the pump that finds the ARQ empty (and makes
  // the repairs) never came after the last one. Measured on geo at 5 % loss: the repairs 300 ms
  // after the data, when the receiver's SACKs had long asked for the unit they would recover.
  lp::Config config = udp_config();
  config.rtt = 540ms;  // start-up paces a new path's first window over this: ~1.4 ms a unit
  DelayedPair pair(config);
  lp::Arq& arq = pair.a_arq;
  lp::DatagramChannel& a = pair.a;
  for (int unit = 0; unit < 100; ++unit) {
    a.submit(arq, lp::ArqPayload(1000, std::byte{9}));
    pair.now += 2ms;
    a.pump(arq, pair.now);
    a.outgoing().clear();
  }
  REQUIRE(arq.transmitted_end() == 100);  // every unit left as it came
  const std::uint64_t repairs_before = a.statistics().repairs_sent;
  const auto deadline = a.next_deadline(arq, pair.now);
  REQUIRE(deadline.has_value());
  CHECK(*deadline - pair.now <= 10ms);  // the pacer's gap, not the retransmission timer
  a.pump(arq, *deadline);
  CHECK(a.statistics().repairs_sent > repairs_before);
}

TEST_CASE("datagram channel: a first flight that fills the window has its repairs right behind it", "[datagram][channel][fec]") {
  // lp-perf's 100 x 1 KiB batch on a new path fills the first window (96 datagrams' worth). The
  // repairs waited for an open window, which only an ACK brings a round trip later, or for another
  // timer: 40 ms behind the flight on geo, 140 ms behind the re-sent flight after a reseal, and
  // the units they would have recovered had been asked for meanwhile.
  lp::Config config = udp_config();
  config.rtt = 540ms;
  std::size_t datagram_bytes = 0;
  {
    DelayedPair probe(config);
    probe.a.submit(probe.a_arq, lp::ArqPayload(1000, std::byte{9}));
    probe.a.pump(probe.a_arq, probe.now);
    REQUIRE_FALSE(probe.a.outgoing().empty());
    datagram_bytes = probe.a.outgoing().front().size() + lp::DatagramChannel::kIpUdpOverhead;
  }
  DelayedPair pair(config);
  const std::size_t units = pair.a.pacer().window_bytes() / datagram_bytes + 1;  // the last one fills it
  for (std::size_t unit = 0; unit < units; ++unit) pair.a.submit(pair.a_arq, lp::ArqPayload(1000, std::byte{9}));
  // The flight leaves (a train, then paced); no ACK comes back.
  pair.a.pump(pair.a_arq, pair.now);
  while (pair.a_arq.transmitted_end() < units) {
    const auto deadline = pair.a.next_deadline(pair.a_arq, pair.now);
    REQUIRE(deadline.has_value());
    REQUIRE(*deadline - pair.now <= 10ms);
    pair.now = *deadline;
    pair.a.pump(pair.a_arq, pair.now);
  }
  REQUIRE_FALSE(pair.a.pacer().window_open());
  const lp::ArqTime last_unit = pair.now;
  // The repairs at the pacer's pace behind it, not at the retransmission timer.
  while (pair.a.statistics().repairs_sent == 0) {
    const auto deadline = pair.a.next_deadline(pair.a_arq, pair.now);
    REQUIRE(deadline.has_value());
    REQUIRE(*deadline - last_unit <= 10ms);
    pair.now = *deadline;
    pair.a.pump(pair.a_arq, pair.now);
  }
  CHECK(pair.a_arq.transmitted_end() == units);  // repairs only: no unit past the window
  CHECK(pair.a_arq.stats().messages_sent == units);
}

TEST_CASE("datagram channel: an ACK of several datagrams waits for data or kMultiAckWait", "[datagram][channel]") {
  // Sent once per read turn, ACKs of ~350 holes (five datagrams each) filled geo's return path at
  // 5 % loss, and the pacer read their queue as a standing one.
  using Channel = lp::DatagramChannel;
  ReceivingChannel receiving;
  lp::Arq& arq = receiving.arq;
  Channel& b = receiving.channel;
  const lp::ArqTime now{};
  auto arrive = [&](std::uint64_t seq) { receiving.arrive(seq, now); };
  for (std::uint64_t seq = 1; seq < 400; seq += 2) arrive(seq);  // 200 holes: three ACK datagrams
  b.pump(arq, now);
  CHECK(b.outgoing().size() == 3);  // 200 data datagrams came since the last ACK
  b.outgoing().clear();
  arrive(401);  // one more hole: an ACK is owed at once, but waits
  b.pump(arq, now);
  CHECK(b.outgoing().empty());
  CHECK(b.next_deadline(arq, now) == now + Channel::kMultiAckWait);  // no busy wait meanwhile
  SECTION("until kDatagramsPerAckPart data datagrams per ACK datagram came") {
    for (std::uint64_t seq = 403; seq < 403 + 2 * (3 * Channel::kDatagramsPerAckPart - 2); seq += 2) arrive(seq);
    b.pump(arq, now);
    CHECK(b.outgoing().empty());
    arrive(1000);
    b.pump(arq, now);
    CHECK(b.outgoing().size() == 3);
  }
  SECTION("or kMultiAckWait passed") {
    b.pump(arq, now + Channel::kMultiAckWait);
    CHECK(b.outgoing().size() == 3);
  }
}

TEST_CASE("datagram channel: one ACK per kDatagramAckEvery units, at once on a new or filled hole", "[datagram][channel][ack]") {
  // A receiver woken for every datagram (the emulated link spaces them 76 us apart at 155 Mbit/s)
  // sent an ACK per datagram, and with 1 % loss (a hole open nearly always) even per read turn:
  // ~8200 wake-ups/s of the sending thread on geo (docs/engine/datagram-carrier.md, "Fewer ACKs").
  using Channel = lp::DatagramChannel;
  ReceivingChannel receiving;
  lp::Arq& arq = receiving.arq;
  Channel& b = receiving.channel;
  lp::ArqTime now{};
  std::vector<lp::ArqPayload> messages;
  std::size_t acks = 0;
  // One datagram per read turn, the ACK (if any) pumped after each, as the engine does.
  auto arrive = [&](std::uint64_t seq) {
    receiving.arrive(seq, now);
    REQUIRE(b.take_received(arq, messages));
    b.pump(arq, now);
    const std::size_t sent = b.outgoing().size();
    acks += sent;
    b.outgoing().clear();
    return sent;
  };
  constexpr std::uint64_t kLossFree = 1000;
  for (std::uint64_t seq = 0; seq < kLossFree; ++seq, now += 76us) arrive(seq);
  CHECK(acks <= kLossFree / lp::kDatagramAckEvery);
  CHECK(acks >= kLossFree / lp::kDatagramAckEvery - 1);
  CHECK_FALSE(arq.ack_deadline());  // 1000 is a multiple of 4: nothing owed
  // 1 % loss: unit 1000 is lost, 1001 opens the hole (ACK at once), the units after it continue
  // the highest held one (one ACK per 4), the re-send fills the hole (ACK at once).
  acks = 0;
  CHECK(arrive(1001) == 1);
  for (std::uint64_t seq = 1002; seq < 1100; ++seq, now += 76us) arrive(seq);
  CHECK(acks <= 1 + 98 / lp::kDatagramAckEvery);
  CHECK(arrive(1100) == 0);  // 98 = 24 x 4 + 2 units after 1001: the third since the last ACK
  CHECK(arrive(1000) == 1);
  CHECK(arq.received_below() == 1101);
  // A lone unit: acknowledged kDatagramAckDelay later.
  now += 10ms;
  CHECK(arrive(1101) == 0);
  CHECK(b.next_deadline(arq, now) == now + lp::kDatagramAckDelay);
  b.pump(arq, now + lp::kDatagramAckDelay - 1us);
  CHECK(b.outgoing().empty());
  b.pump(arq, now + lp::kDatagramAckDelay);
  CHECK(b.outgoing().size() == 1);
  b.outgoing().clear();
  // ... unless data of our own goes (a reply): the ACK owed goes with it, not after it.
  now += 10ms;
  CHECK(arrive(1102) == 0);
  b.submit(arq, lp::ArqPayload(100, std::byte{3}));
  b.pump(arq, now);
  CHECK(b.outgoing().size() == 2);
  CHECK_FALSE(arq.ack_deadline());
}

TEST_CASE("datagram channel: an ACK reports when its DATA arrived, not when it was read", "[datagram][channel][ack]") {
  // A loaded receiver reads a burst late and in one turn; the sender's packet train measures the
  // path by the arrival times the ACK carries (datagram_pacer.h, start-up jump).
  ReceivingChannel receiving;
  lp::DatagramChannel& channel = receiving.channel;
  std::vector<lp::ArqPayload> messages;
  const lp::ArqTime read_at = lp::ArqTime{} + 5s;
  const std::int64_t arrived = 1'700'000'000'000'000'000;  // the kernel's clock (CLOCK_REALTIME), not ours
  const auto ack_read = [&](lp::ArqTime now) {
    REQUIRE(channel.take_received(receiving.arq, messages));
    channel.pump(receiving.arq, now);
    REQUIRE(channel.outgoing().size() == 1);
    auto opened = receiving.peer.open(channel.outgoing().front());
    REQUIRE(opened.verdict == lp::DatagramCrypto::Verdict::kOpened);
    REQUIRE(opened.frame->type == lp::FrameType::kAck);
    const lp::AckFrame ack = lp::decode_ack(opened.frame->payload);
    channel.outgoing().clear();
    return ack;
  };
  for (std::uint64_t seq = 0; seq < 8; ++seq) receiving.arrive(seq, arrived + static_cast<std::int64_t>(seq) * 76'000, read_at);
  const lp::AckFrame first = ack_read(read_at);
  CHECK(first.cumulative == 8);
  CHECK(first.arrivals.newest_ns == static_cast<std::uint64_t>(arrived + 7 * 76'000));
  CHECK(first.arrivals.first_ns == 7 * 76'000u);
  CHECK(first.arrivals.count == 8);
  // The next ACK counts from there; the newest arrival carries on.
  receiving.arrive(8, arrived + 9'000'000, read_at + 10ms);
  const lp::AckFrame second = ack_read(read_at + 10ms + lp::kDatagramAckDelay);
  CHECK(second.arrivals.newest_ns == static_cast<std::uint64_t>(arrived + 9'000'000));
  CHECK(second.arrivals.first_ns == 0u);
  CHECK(second.arrivals.count == 1);
}

TEST_CASE("the UDP carrier dates each datagram by when the kernel received it, not when it was read",
          "[datagram][socket]") {
  lp::Config config = udp_config();
  lp::UdpCarrier carrier(config, 0);
  sockaddr_in to{};
  socklen_t length = sizeof to;
  REQUIRE(::getsockname(carrier.fd(), reinterpret_cast<sockaddr*>(&to), &length) == 0);
  const int sender = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  REQUIRE(sender >= 0);
  const auto send_one = [&](char tag) {
    REQUIRE(::sendto(sender, &tag, 1, 0, reinterpret_cast<const sockaddr*>(&to), sizeof to) == 1);
  };
  const auto realtime_ns = [] {
    timespec now{};
    ::clock_gettime(CLOCK_REALTIME, &now);
    return std::int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
  };
  // The kernel turns receive times on a moment after the socket asks (deferred work): until then
  // a datagram is dated when it is read. Wait for that with probes.
  bool dated = false;
  for (int probe = 0; probe < 100 && !dated; ++probe) {
    send_one('p');
    std::this_thread::sleep_for(20ms);
    carrier.receive([&](const lp::DatagramAddress&, std::span<std::byte>, std::int64_t arrival_ns) {
      dated = realtime_ns() - arrival_ns >= 10'000'000;
    }, 16);
  }
  REQUIRE(dated);
  send_one('a');
  std::this_thread::sleep_for(40ms);
  send_one('b');
  std::this_thread::sleep_for(40ms);  // both wait in the socket, read in one turn below
  // By tag: under load the loopback may queue them in the other order (each waits in the backlog
  // of the CPU that sent it), dated when they reached it.
  std::map<char, std::int64_t> arrivals;
  carrier.receive([&](const lp::DatagramAddress&, std::span<std::byte> bytes, std::int64_t arrival_ns) {
    REQUIRE(bytes.size() == 1u);
    arrivals[static_cast<char>(bytes[0])] = arrival_ns;
  }, 16);
  ::close(sender);
  const std::int64_t read_ns = realtime_ns();
  REQUIRE(arrivals.size() == 2u);
  CHECK(arrivals['b'] - arrivals['a'] >= 35'000'000);  // 40 ms apart, though read together
  CHECK(read_ns - arrivals['b'] >= 35'000'000);        // ... and before they were read
}

TEST_CASE("LONGPIPE_CARRIER is validated and names what it accepts", "[datagram][config]") {
  CHECK(lp::Config::from_variables({{"LONGPIPE_CARRIER", "udp"}}).carrier == lp::CarrierChoice::kUdp);
  CHECK(lp::Config::from_variables({{"LONGPIPE_CARRIER", "auto"}}).carrier == lp::CarrierChoice::kAuto);
  CHECK_FALSE(lp::Config::from_variables({{"LONGPIPE_CARRIER", "auto"}}).datagram_carrier());  // decided per session
  CHECK(lp::Config::from_variables({}).carrier == lp::CarrierChoice::kAuto);  // decided by the dialler
  CHECK_THROWS_WITH(lp::Config::from_variables({{"LONGPIPE_CARRIER", "quic"}}),
                    Catch::Contains("LONGPIPE_CARRIER") && Catch::Contains("tcp, udp, auto"));
}

TEST_CASE("two engines on the datagram carrier: every size arrives once, in order", "[datagram][engine]") {
  lp::Engine a(udp_config());
  lp::Engine b(udp_config());
  const std::vector<std::size_t> sizes = {0, 1, 1000, 1400, 5000, 64 * 1024, 1 << 20};
  std::uint32_t sent = 0;
  for (int round = 0; round < 3; ++round) {
    for (std::size_t size : sizes) a.send(b.local_endpoint(), numbered(sent++, size));
  }
  b.send(a.local_endpoint(), numbered(0, 10));  // the other direction at the same moment: both dial
  std::uint32_t next = 0;
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (next < sent && std::chrono::steady_clock::now() < deadline) {
    auto message = b.try_receive();
    if (!message) {
      b.wait_receive(100ms);
      continue;
    }
    REQUIRE(message->tag == static_cast<std::int32_t>(next));
    REQUIRE(message->body == numbered(next, sizes[next % sizes.size()]).body);
    ++next;
  }
  if (next != sent) {
    UNSCOPED_INFO("a: " << a.stats_json());
    UNSCOPED_INFO("b: " << b.stats_json());
  }
  CHECK(next == sent);
  REQUIRE(a.wait_receive(10s));
  CHECK(a.try_receive()->body == numbered(0, 10).body);
  CHECK(a.flush(10s));
  const std::string stats = a.stats_json();
  CHECK(stats.find("\"carrier\":\"udp\"") != std::string::npos);
}

TEST_CASE("the datagram carrier drops forged datagrams and counts them", "[datagram][engine][security]") {
  lp::Engine a(udp_config());
  lp::Engine b(udp_config());
  a.send(b.local_endpoint(), numbered(0, 100));
  REQUIRE(b.wait_receive(10s));
  REQUIRE(b.try_receive());
  // Garbage to b's datagram port from an address no session has: dropped, counted.
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<std::uint16_t>(std::stoi(port_of(b.local_endpoint()))));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  for (int i = 0; i < 50; ++i) {
    std::vector<char> junk(static_cast<std::size_t>(i * 29 % 1500), static_cast<char>(i));
    ::sendto(fd, junk.data(), junk.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to);
  }
  ::close(fd);
  // The session goes on.
  a.send(b.local_endpoint(), numbered(1, 100));
  REQUIRE(b.wait_receive(10s));
  CHECK(b.try_receive()->tag == 1);
  std::this_thread::sleep_for(300ms);
  // The engine-wide count (the first "refused_frames" of the report, before the sessions').
  const std::string stats = b.stats_json();
  const std::string key = "\"refused_frames\":";
  CHECK(std::stoul(stats.substr(stats.find(key) + key.size())) >= 50);
}

namespace {

lp::Config carrier_config(lp::CarrierChoice carrier) {
  lp::Config config = lp::test::loopback_engine_config("datagram-key", 3000ms);
  config.carrier = carrier;
  return config;
}

// a sends to b and b to a at once; both arrive. Returns the engines' statistics.
std::pair<std::string, std::string> exchange(lp::Engine& a, lp::Engine& b) {
  a.send(b.local_endpoint(), numbered(1, 70'000));
  b.send(a.local_endpoint(), numbered(2, 100));
  REQUIRE(b.wait_receive(10s));
  CHECK(b.try_receive()->body == numbered(1, 70'000).body);
  REQUIRE(a.wait_receive(10s));
  CHECK(a.try_receive()->body == numbered(2, 100).body);
  CHECK(a.flush(10s));
  CHECK(b.flush(10s));
  return {a.stats_json(), b.stats_json()};
}

bool on_datagrams(const std::string& stats) { return stats.find("\"carrier\":\"udp\"") != std::string::npos; }

}  // namespace

TEST_CASE("carrier negotiation: tcp at one end and udp at the other fail the session with a clear error",
          "[datagram][engine][carrier]") {
  const bool tcp_dials = GENERATE(true, false);
  lp::Engine tcp(carrier_config(lp::CarrierChoice::kTcp));
  lp::Engine udp(carrier_config(lp::CarrierChoice::kUdp));
  lp::Engine& dialler = tcp_dials ? tcp : udp;
  lp::Engine& acceptor = tcp_dials ? udp : tcp;
  dialler.send(acceptor.local_endpoint(), numbered(0, 10));
  const std::vector<lp::PeerFailure> failures = lp::test::next_failures(dialler);
  REQUIRE(failures.size() == 1);
  CHECK_THAT(failures[0].reason, Catch::Contains(tcp_dials ? "LONGPIPE_CARRIER is tcp here and udp at the peer"
                                                           : "LONGPIPE_CARRIER is udp here and tcp at the peer"));
  CHECK(failures[0].messages_lost == 1);
  CHECK_FALSE(acceptor.wait_receive(300ms));  // nothing delivered on a carrier the ends did not agree
}

TEST_CASE("carrier negotiation: auto follows the peer's explicit choice; auto with auto is tcp",
          "[datagram][engine][carrier]") {
  SECTION("udp dialling an auto acceptor: datagrams at both ends") {
    lp::Engine a(carrier_config(lp::CarrierChoice::kAuto));
    lp::Engine b(carrier_config(lp::CarrierChoice::kUdp));
    b.send(a.local_endpoint(), numbered(0, 10));  // b dials: a accepts, and follows
    REQUIRE(a.wait_receive(10s));
    CHECK(a.try_receive()->body == numbered(0, 10).body);
    const auto [at_a, at_b] = exchange(a, b);
    CHECK(on_datagrams(at_a));
    CHECK(on_datagrams(at_b));
  }
  SECTION("auto dialling an acceptor set to udp on a path it does not know: the clear error") {
    // The dialler decides before it hears the acceptor (carrier_choice.h): tcp, sent at once.
    lp::Engine a(carrier_config(lp::CarrierChoice::kAuto));
    lp::Engine b(carrier_config(lp::CarrierChoice::kUdp));
    a.send(b.local_endpoint(), numbered(0, 10));
    const std::vector<lp::PeerFailure> failures = lp::test::next_failures(a);
    REQUIRE(failures.size() == 1);
    CHECK_THAT(failures[0].reason, Catch::Contains("LONGPIPE_CARRIER is auto here, which chose tcp"));
    CHECK_FALSE(b.wait_receive(300ms));
  }
  SECTION("auto and tcp: tcp") {
    lp::Engine a(carrier_config(lp::CarrierChoice::kAuto));
    lp::Engine b(carrier_config(lp::CarrierChoice::kTcp));
    const auto [at_a, at_b] = exchange(a, b);
    CHECK_FALSE(on_datagrams(at_a));
    CHECK_FALSE(on_datagrams(at_b));
  }
  SECTION("auto and auto: a cache entry of a long lossy path whose round trip disagrees is not used: tcp") {
    // 540 ms and 1 % loss (would say datagrams), but the handshake on loopback measures well under
    // a millisecond: another path (the warm start's validation), so the entry decides nothing.
    char directory[] = "/tmp/lp-carrier-cache.XXXXXX";
    REQUIRE(::mkdtemp(directory) != nullptr);
    const std::string file = std::string(directory) + "/paths";
    {
      std::ofstream out(file);
      out << "# longpipe path cache 1\n127.0.0.1 " << std::time(nullptr) << " 540000 19000000 120 1048576 4194304 10000\n";
    }
    lp::Config config = carrier_config(lp::CarrierChoice::kAuto);
    config.path_cache = file;
    {
      lp::Engine a(config);
      lp::Engine b(config);
      const auto [at_a, at_b] = exchange(a, b);
      CHECK_FALSE(on_datagrams(at_a));
      CHECK_FALSE(on_datagrams(at_b));
    }
    std::remove(file.c_str());
    ::rmdir(directory);
  }
  SECTION("auto and auto, nothing known of the path (no path cache): tcp") {
    lp::Engine a(carrier_config(lp::CarrierChoice::kAuto));
    lp::Engine b(carrier_config(lp::CarrierChoice::kAuto));
    const auto [at_a, at_b] = exchange(a, b);
    CHECK_FALSE(on_datagrams(at_a));
    CHECK_FALSE(on_datagrams(at_b));
  }
}

namespace {

// A raw dialler (raw_peer.h) on the datagram carrier: its own UDP socket on 127.0.0.1 (the port
// its claimed endpoint names, as an engine's sits beside its listener) and a datagram channel
// keyed by its handshake, which seals `count` one-unit messages (tags 0 .. count - 1).
struct EarlyDatagrams {
  explicit EarlyDatagrams(std::string acceptor) : acceptor_endpoint(std::move(acceptor)) {
    fd = ::socket(AF_INET, SOCK_DGRAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_in own{};
    own.sin_family = AF_INET;
    own.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&own), sizeof own) == 0);
    socklen_t length = sizeof own;
    REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&own), &length) == 0);
    endpoint = "127.0.0.1:" + std::to_string(ntohs(own.sin_port));
  }
  ~EarlyDatagrams() { ::close(fd); }

  // Seals the messages under the handshake's datagram keys, as the engine's first flight would.
  void seal(const lp::Handshake& handshake, std::size_t count) {
    channel.add_keys(1, handshake);
    REQUIRE(channel.seal_with(1));
    for (std::size_t i = 0; i < count; ++i) {
      channel.submit(arq, lp::pack_message(numbered(static_cast<std::uint32_t>(i), 100)));
    }
    // The pacer lets a millisecond's worth go per pump: the clock is ours to move.
    auto now = lp::ArqTime{} + 1s;
    while (sealed.size() < count && now < lp::ArqTime{} + 60s) {
      channel.pump(arq, now);
      while (!channel.outgoing().empty()) {
        sealed.push_back(std::move(channel.outgoing().front()));
        channel.outgoing().pop_front();
      }
      now += 1ms;
    }
    REQUIRE(sealed.size() == count);
  }
  void send(std::size_t from, std::size_t to) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(std::stoi(port_of(acceptor_endpoint))));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    for (std::size_t i = from; i < to; ++i) {
      REQUIRE(::sendto(fd, sealed[i].data(), sealed[i].size(), 0, reinterpret_cast<sockaddr*>(&address),
                       sizeof address) == static_cast<ssize_t>(sealed[i].size()));
    }
  }

  std::string acceptor_endpoint;
  int fd = -1;
  std::string endpoint;
  const lp::Config config = udp_config_without_repairs();
  lp::Arq arq{ReceivingChannel::datagram_arq_config(config)};
  lp::DatagramChannel channel{config};
  std::vector<std::vector<std::byte>> sealed;
};

std::uint64_t held_counter(const std::string& stats, const std::string& name) {
  const std::string object = "\"held_datagrams\":{";
  const std::size_t at = stats.find("\"" + name + "\":", stats.find(object));
  return std::stoull(stats.substr(at + name.size() + 3));
}

// Receives `count` messages at `engine`, tags 0 .. count - 1 in order, and then nothing more.
void expect_in_order_once(lp::Engine& engine, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    REQUIRE(engine.wait_receive(10s));
    auto message = engine.try_receive();
    REQUIRE(message);
    CHECK(message->tag == static_cast<std::int32_t>(i));
    CHECK(message->body == numbered(static_cast<std::uint32_t>(i), 100).body);
  }
  std::this_thread::sleep_for(300ms);
  CHECK_FALSE(engine.try_receive());  // exactly once
}

}  // namespace

TEST_CASE("datagrams read before the IDENTIFY they came with wait for its keys: delivered in order, once",
          "[datagram][engine][early]") {
  lp::Engine b(udp_config());
  EarlyDatagrams dialler(b.local_endpoint());
  constexpr std::size_t kCount = 40;
  lp::test::RawPeer peer(b.local_endpoint());
  peer.set_carrier_offer(lp::CarrierOffer{lp::CarrierChoice::kUdp, true, false}.encode());
  peer.before_identify = [&](const lp::Handshake& handshake) {
    // The acceptor's offer came in CHALLENGE: a dialler may agree the carrier now.
    CHECK(handshake.peer_carrier_offer_known());
    CHECK(lp::CarrierOffer::decode(handshake.peer_carrier_offer()).setting == lp::CarrierChoice::kUdp);
    dialler.seal(handshake, kCount);
    // Every datagram twice (the network may duplicate), all before our AUTH and IDENTIFY leave:
    // b reads them first, as when they overtake the IDENTIFY.
    dialler.send(0, kCount);
    dialler.send(0, kCount);
    std::this_thread::sleep_for(200ms);
  };
  REQUIRE(peer.handshake("datagram-key", dialler.endpoint, lp::test::random_token()) ==
          lp::test::RawPeer::Outcome::kEstablished);
  expect_in_order_once(b, kCount);
  const std::string stats = b.stats_json();
  INFO(stats);
  CHECK(held_counter(stats, "held") == 2 * kCount);
  CHECK(held_counter(stats, "released") == 2 * kCount);
  CHECK(held_counter(stats, "expired") == 0);
  CHECK(held_counter(stats, "overflowed") == 0);
}

TEST_CASE("the pen of early datagrams: what overflows or waits too long is dropped and counted, nothing closed",
          "[datagram][engine][early]") {
  lp::Engine b(udp_config());
  EarlyDatagrams dialler(b.local_endpoint());
  lp::test::RawPeer peer(b.local_endpoint());
  peer.set_carrier_offer(lp::CarrierOffer{lp::CarrierChoice::kUdp, true, false}.encode());
  // Overflow (the newest beyond the pen's room), or expiry (held longer than the hold time): a
  // generator, not sections, since a section that only sets up asserts nothing of its own.
  const bool overflow = GENERATE(true, false);
  CAPTURE(overflow);
  std::size_t count = 0, resend_from = 0;
  if (overflow) {
    count = lp::DatagramPen::kMaxDatagrams + 20;
    resend_from = lp::DatagramPen::kMaxDatagrams;
    peer.before_identify = [&](const lp::Handshake& handshake) {
      dialler.seal(handshake, count);
      dialler.send(0, count);
      std::this_thread::sleep_for(200ms);
    };
  } else {
    count = 6;
    resend_from = 0;
    peer.before_identify = [&](const lp::Handshake& handshake) {
      dialler.seal(handshake, count);
      dialler.send(0, count - 1);
      std::this_thread::sleep_for(lp::DatagramPen::kHoldTime + 200ms);
      dialler.send(count - 1, count);  // the pen drops the expired ones when it takes this one
      std::this_thread::sleep_for(200ms);
    };
  }
  REQUIRE(peer.handshake("datagram-key", dialler.endpoint, lp::test::random_token()) ==
          lp::test::RawPeer::Outcome::kEstablished);
  // What the pen dropped comes again, as the dialler's ARQ would re-send it.
  std::this_thread::sleep_for(200ms);
  dialler.send(resend_from, count - (resend_from == 0 ? 1 : 0));
  expect_in_order_once(b, count);
  const std::string stats = b.stats_json();
  INFO(stats);
  if (resend_from > 0) {
    CHECK(held_counter(stats, "overflowed") == count - resend_from);
  } else {
    CHECK(held_counter(stats, "expired") == count - 1);
  }
  // Nothing closed: the connection is alive and the session carries on.
  CHECK(peer.send_bytes(peer.sealed_keepalive()));
  CHECK(b.take_peer_failures().empty());
}

TEST_CASE("datagram pen: held per address in arrival order, bounded, expired after the hold time", "[datagram][pen]") {
  using Clock = lp::DatagramPen::Clock;
  const auto address = [](std::uint16_t port) {
    lp::DatagramAddress a;
    auto* in = reinterpret_cast<sockaddr_in*>(&a.storage);
    in->sin_family = AF_INET;
    in->sin_port = htons(port);
    in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.length = sizeof(sockaddr_in);
    return a;
  };
  const auto bytes = [](std::uint8_t fill) { return std::vector<std::byte>(100, std::byte{fill}); };
  const Clock::time_point t0{};
  lp::DatagramPen pen;
  CHECK(pen.hold(address(1), bytes(1), 101, t0));
  CHECK(pen.hold(address(2), bytes(9), 109, t0));
  CHECK(pen.hold(address(1), bytes(2), 102, t0 + 1ms));
  SECTION("released to its address only, oldest first") {
    const auto released = pen.release(address(1), t0 + 2ms);
    REQUIRE(released.size() == 2u);
    CHECK(released[0].bytes == bytes(1));
    CHECK(released[1].bytes == bytes(2));
    // Each keeps the kernel's receive time: the ACKs report it (a held first flight is measured too).
    CHECK(released[0].arrival_ns == 101);
    CHECK(released[1].arrival_ns == 102);
    CHECK(pen.size() == 1u);
    CHECK(pen.counters().released == 2u);
  }
  SECTION("dropped and counted after the hold time") {
    CHECK(pen.release(address(1), t0 + lp::DatagramPen::kHoldTime + 1ms).empty());
    CHECK(pen.empty());
    CHECK(pen.bytes() == 0u);
    CHECK(pen.counters().expired == 3u);
  }
  SECTION("bounded: the newest beyond the room is dropped and counted") {
    std::size_t taken = 0;
    for (std::size_t i = 0; i < lp::DatagramPen::kMaxDatagrams + 10; ++i) taken += pen.hold(address(3), bytes(3), 0, t0 + 1ms);
    CHECK(pen.size() == lp::DatagramPen::kMaxDatagrams);
    CHECK(taken == lp::DatagramPen::kMaxDatagrams - 3);
    CHECK(pen.counters().overflowed == 13u);
    // Bytes too: one datagram of the most a pen may hold in bytes does not fit beside the others.
    lp::DatagramPen by_bytes;
    CHECK(by_bytes.hold(address(4), std::vector<std::byte>(lp::DatagramPen::kMaxBytes - 10), 0, t0));
    CHECK_FALSE(by_bytes.hold(address(4), bytes(4), 0, t0));
    CHECK(by_bytes.counters().overflowed == 1u);
  }
}
