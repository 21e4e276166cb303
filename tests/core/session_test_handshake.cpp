// The endpoint's handshake on a fake clock: its round trip with HELLO in the SYN (TCP Fast Open),
// auto's decision at CHALLENGE on a path its cache does not know, and the datagram carrier's first
// DATA going with the dialler's IDENTIFY.
#include "session_test_support.h"

using namespace lp;
using namespace lp::session_test;
using namespace std::chrono_literals;

TEST_CASE("endpoint: the handshake round trip with HELLO in the SYN (TCP Fast Open)") {
  Config config;
  config.key = "secret";
  config.spill_streams = 0;
  const auto nonces = [] { return std::vector<std::byte>(32, std::byte{7}); };
  Endpoint dialler(config, "a:1", nonces);
  Endpoint acceptor(config, "b:1", nonces);
  Session& session = dialler.session_for("b:1", kStart);
  session.allow_dialling();
  dialler.service(session, kStart, false);
  const auto dials = dialler.take_dials();
  REQUIRE(!dials.empty());
  Connection& out = *dials.front();
  constexpr auto kRoundTrip = 540ms;
  constexpr std::uint32_t kKernelSynRtt = 541000;  // us: the SYN's round trip as the kernel measured it

  // run(in_syn, accepted, challenge_after): the connect completes 1 ms after the dial (Fast Open:
  // at once), HELLO goes, CHALLENGE comes `challenge_after` later; the dialler's handshake RTT.
  auto run = [&](bool in_syn, bool accepted, Clock::duration challenge_after) {
    out.link = std::make_unique<FastOpenLink>(in_syn, accepted, kKernelSynRtt);
    const auto connected = kStart + (in_syn ? 1ms : kRoundTrip);
    dialler.on_connected(out, "", connected);
    Connection* in = acceptor.on_accepted(std::make_unique<FastOpenLink>(false, accepted, 0), connected);
    REQUIRE(in != nullptr);
    deliver(out, acceptor, *in, connected);  // HELLO -> CHALLENGE
    REQUIRE(in->pending_output() > 0);
    deliver(*in, dialler, out, connected + challenge_after);
    return out.handshake_rtt;
  };
  SECTION("an ordinary connect: SYN -> SYN-ACK and HELLO -> CHALLENGE, one round trip each") {
    CHECK(run(false, false, kRoundTrip) == kRoundTrip);
  }
  SECTION("HELLO in the SYN, taken: the instant connect is no sample; HELLO -> CHALLENGE is one round trip") {
    CHECK(run(true, true, kRoundTrip) == kRoundTrip);
  }
  SECTION("HELLO in a SYN whose data the peer's host did not take: not two round trips, the kernel's SYN RTT") {
    CHECK(run(true, false, 2 * kRoundTrip) == std::chrono::microseconds(kKernelSynRtt));
  }
}

TEST_CASE("endpoint: auto on a path its cache does not know decides at CHALLENGE by the handshake's round trip") {
  Config config = SpillingSession::make_config(8);
  config.key = "secret";
  config.carrier = CarrierChoice::kAuto;
  const auto nonces = [] { return std::vector<std::byte>(32, std::byte{7}); };
  Endpoint dialler(config, "a:1", nonces);
  Endpoint acceptor(config, "b:1", nonces);
  // Neither cache knows the path; the dialler's judge of a known entry would say datagrams, which
  // must not matter here.
  dialler.set_carrier_capability(
      true, [](const Connection&, const std::string&, bool) { return true; },
      [](const std::string&) { return DialJudgement::kAtHandshake; });
  acceptor.set_carrier_capability(true, [](const Connection&, const std::string&, bool) { return false; });
  Session& session = dialler.session_for("b:1", kStart);
  session.allow_dialling();
  dialler.service(session, kStart, false);
  const auto dials = dialler.take_dials();
  REQUIRE(dials.size() == 10u);  // 2 streams and, in case it decides tcp, 8 spill streams
  Connection& out = *dials.front();
  REQUIRE(out.stream == 0);
  const auto spill_attempts = [&] {
    std::size_t attempts = 0;
    for (std::size_t slot = 0; slot < session.streams().slots(); ++slot) {
      if (StreamScheduler::is_spill_slot(slot)) attempts += session.streams().attempts(slot).size();
    }
    return attempts;
  };

  // The connect and HELLO -> CHALLENGE take `round_trip` each (no Fast Open).
  Connection* in = nullptr;
  auto challenge_after = [&](Clock::duration round_trip) {
    out.link = std::make_unique<FastOpenLink>(false, false, 0);
    const auto connected = kStart + round_trip;
    dialler.on_connected(out, "", connected);
    in = acceptor.on_accepted(std::make_unique<FastOpenLink>(false, false, 0), connected);
    REQUIRE(in != nullptr);
    deliver(out, acceptor, *in, connected);  // HELLO -> CHALLENGE
    deliver(*in, dialler, out, connected + round_trip);
    REQUIRE(session.offer);
    return *session.offer;
  };
  SECTION("a long round trip (geo's 540 ms): auto preferring datagrams, no spill streams") {
    const CarrierOffer offer = challenge_after(540ms);
    CHECK(offer.setting == CarrierChoice::kAuto);
    CHECK(offer.prefers_datagrams);
    CHECK_FALSE(session.tcp_certain());
    // Not needed as streams on datagrams; one may become a key backup as its CHALLENGE comes, so
    // they are closed once the acceptor proved stream 0 (whose keys seal the datagrams).
    CHECK(spill_attempts() == 8u);
    CHECK(session.counters().early_messages == 0);  // no tcp DATA on the control connection
    deliver(out, acceptor, *in, kStart + 1350ms);  // AUTH + IDENTIFY
    deliver(*in, dialler, out, kStart + 1620ms);   // the acceptor's proof
    CHECK(out.authenticated());
    CHECK(spill_attempts() == 0);
    CHECK(std::all_of(dials.begin() + 2, dials.end(),
                      [](const Connection* spill) { return spill->state == ConnectionState::kClosed; }));
    CHECK(dialler.take_dials().empty());  // nothing dialled again
  }
  SECTION("a short round trip (20 ms): plain tcp, bound at once, its spill streams kept") {
    const CarrierOffer offer = challenge_after(20ms);
    CHECK(offer.setting == CarrierChoice::kTcp);
    CHECK(session.tcp_certain());
    CHECK(spill_attempts() == 8u);
    CHECK(dialler.take_dials().empty());  // nothing dialled again
  }
}

TEST_CASE("endpoint: on the datagram carrier the dialler's first DATA datagrams go with its IDENTIFY, before the acceptor's") {
  Config config;
  config.key = "secret";
  config.carrier = CarrierChoice::kUdp;
  const auto nonces = [] { return std::vector<std::byte>(32, std::byte{7}); };
  Endpoint dialler(config, "a:1", nonces);
  Endpoint acceptor(config, "b:1", nonces);
  const auto no_judgement = [](const Connection&, const std::string&, bool) { return false; };
  dialler.set_carrier_capability(true, no_judgement);
  acceptor.set_carrier_capability(true, no_judgement);
  Session& session = dialler.session_for("b:1", kStart);
  session.allow_dialling();
  REQUIRE(session.datagram() != nullptr);
  Message message;
  message.tag = 7;
  message.body.assign(100, std::byte{0x5a});
  session.datagram()->submit(session.arq(), pack_message(message));  // as the driver moves the outbox
  dialler.service(session, kStart, false);
  const auto dials = dialler.take_dials();
  REQUIRE(dials.size() == 2u);  // the control connection and its spare (Session::spare_control_slot_to_dial)
  CHECK(dials[1]->stream == 1u);
  Connection& out = *dials.front();
  out.link = std::make_unique<FastOpenLink>(false, false, 0);
  const auto connected = kStart + 540ms;
  dialler.on_connected(out, "", connected);
  Connection* in = acceptor.on_accepted(std::make_unique<FastOpenLink>(false, false, 0), connected);
  REQUIRE(in != nullptr);
  deliver(out, acceptor, *in, connected);  // HELLO -> CHALLENGE, with the acceptor's offer
  dialler.service(session, connected, false);
  CHECK(session.datagram()->outgoing().empty());  // no keys before CHALLENGE

  const auto challenged = connected + 540ms;
  deliver(*in, dialler, out, challenged);  // CHALLENGE -> AUTH + IDENTIFY
  CHECK(session.carrier_agreed());         // from the offer in CHALLENGE
  CHECK(out.handshake().identity_sent());
  CHECK(out.awaiting_peer_proof);          // the acceptor's proof and IDENTIFY are a round trip away
  dialler.service(session, challenged, false);  // the same turn: the first DATA datagram is sealed
  REQUIRE_FALSE(session.datagram()->outgoing().empty());
  CHECK(session.arq().stats().messages_sent == 1u);
  const std::vector<std::byte> first_datagram = session.datagram()->outgoing().front();

  // At the acceptor (after the IDENTIFY, as the engine hands it held datagrams): delivered.
  const auto arrived = challenged + 270ms;
  deliver(out, acceptor, *in, arrived);  // AUTH + IDENTIFY
  REQUIRE(acceptor.sessions().count("a:1") == 1u);
  Session& accepted = *acceptor.sessions().at("a:1");
  REQUIRE(accepted.datagram() != nullptr);
  REQUIRE(accepted.datagram()->keyed());
  std::vector<std::byte> datagram = first_datagram;
  std::string why;
  CHECK(accepted.datagram()->on_datagram(accepted.arq(), datagram, 0, arrived, why) == DatagramChannel::Verdict::kAccepted);
  std::vector<Message> received;
  accepted.take_received(received);
  REQUIRE(received.size() == 1u);
  CHECK(received[0].tag == 7);
  CHECK(received[0].body == message.body);

  // The acceptor's IDENTIFY comes back: compared with its CHALLENGE, no second agreement.
  deliver(*in, dialler, out, challenged + 540ms);
  CHECK(out.state == ConnectionState::kEstablished);
  CHECK_FALSE(out.awaiting_peer_proof);
  CHECK_FALSE(session.failed());
  CHECK(session.counters().early_messages == 1u);
}
