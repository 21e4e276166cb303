// The datagram carrier's keys when handshakes lose segments, on a fake clock: sealed again under the
// keys the acceptor proved, proofs arriving apart, a spill stream that carries the session, and the
// key backup stream, kept and then closed.
#include "session_test_support.h"

using namespace lp;
using namespace lp::session_test;
using namespace std::chrono_literals;

namespace {

// Two auto endpoints on a path both judge worth datagrams, each connection with its own nonces (so
// its own keys); the dialler's session has dialled its two first streams, each answered with a
// CHALLENGE, so both carry its 0.5-RTT data's keys. Its first message is sealed under stream 0's.
struct TwoFirstDials {
  static Config datagram_config() {
    Config config;
    config.key = "secret";
    config.carrier = CarrierChoice::kAuto;
    config.spill_streams = 0;
    return config;
  }
  static std::function<std::vector<std::byte>()> counting_nonces() {
    return [n = 0]() mutable { return std::vector<std::byte>(32, std::byte(++n)); };
  }
  const Config config = datagram_config();
  Endpoint dialler{config, "a:1", counting_nonces()};
  Endpoint acceptor{config, "b:1", counting_nonces()};
  Session& session = dialler.session_for("b:1", kStart);
  Connection* out[2] = {};
  Connection* in[2] = {};
  const Clock::time_point challenged = kStart + 1080ms;
  Message message;

  TwoFirstDials() {
    const auto worth_datagrams = [](const Connection&, const std::string&, bool) { return true; };
    dialler.set_carrier_capability(true, worth_datagrams);
    acceptor.set_carrier_capability(true, worth_datagrams);
    session.allow_dialling();
    dialler.service(session, kStart, false);
    const auto dials = dialler.take_dials();
    REQUIRE(dials.size() == 2u);
    const auto connected = kStart + 540ms;
    for (std::size_t i = 0; i < 2; ++i) {
      out[i] = dials[i];
      out[i]->link = std::make_unique<FastOpenLink>(false, false, 0);
      dialler.on_connected(*out[i], "", connected);
      in[i] = acceptor.on_accepted(std::make_unique<FastOpenLink>(false, false, 0), connected);
      REQUIRE(in[i] != nullptr);
      deliver(*out[i], acceptor, *in[i], connected);  // HELLO -> CHALLENGE
    }
    for (std::size_t i = 0; i < 2; ++i) deliver(*in[i], dialler, *out[i], challenged);  // -> AUTH + IDENTIFY
    REQUIRE(session.datagram() != nullptr);
    REQUIRE(session.datagram_keys_connection() == out[0]);  // the first up seals
    message.tag = 7;
    message.body.assign(100, std::byte{0x5a});
    session.datagram()->submit(session.arq(), pack_message(message));
    dialler.service(session, challenged, false);
    REQUIRE_FALSE(session.datagram()->outgoing().empty());  // the unit (and its tail repairs)
  }

  // The dialler's datagrams so far, at the acceptor's session: how many it opened.
  std::size_t datagrams_to_acceptor(Clock::time_point now) {
    return open_at(*acceptor.sessions().at("a:1"), session.datagram()->outgoing(), now);
  }
};

}  // namespace

TEST_CASE("endpoint: a first dial's lost AUTH does not hold up the datagrams: sealed again under the keys the acceptor proved") {
  TwoFirstDials t;
  // Stream 0's AUTH + IDENTIFY are lost; stream 1's arrive: the acceptor holds stream 1's keys only.
  t.out[0]->consume(t.out[0]->unsent().size());
  const auto arrived = t.challenged + 270ms;
  deliver(*t.out[1], t.acceptor, *t.in[1], arrived);
  REQUIRE(t.acceptor.sessions().count("a:1") == 1u);
  CHECK(t.datagrams_to_acceptor(arrived) == 0u);  // sealed under stream 0's keys: refused

  // The acceptor's proof on stream 1 comes back; stream 0's does not.
  const auto proven = t.challenged + 540ms;
  deliver(*t.in[1], t.dialler, *t.out[1], proven);
  CHECK(t.out[1]->authenticated());
  CHECK(t.out[0]->awaiting_peer_proof);
  t.dialler.service(t.session, proven, false);
  CHECK(t.session.counters().datagram_reseals == 0u);  // within the wait: stream 0's may be on its way
  const auto waited = proven + 540ms / Session::kResealWaitShare + 1ms;  // an eighth of the round trip
  CHECK(t.session.next_deadline(proven) <= waited);

  t.dialler.service(t.session, waited, false);
  CHECK(t.session.counters().datagram_reseals == 1u);
  CHECK(t.session.datagram_keys_connection() == t.out[1]);
  REQUIRE_FALSE(t.session.datagram()->outgoing().empty());  // the message again, at once
  CHECK(t.datagrams_to_acceptor(waited) >= 1u);
  Session& accepted = *t.acceptor.sessions().at("a:1");
  std::vector<Message> received;
  accepted.take_received(received);
  REQUIRE(received.size() == 1u);
  CHECK(received[0].body == t.message.body);
  CHECK_FALSE(t.session.failed());
}

TEST_CASE("endpoint: the first dials' proofs arriving a little apart change no keys") {
  TwoFirstDials t;
  const auto arrived = t.challenged + 270ms;
  deliver(*t.out[1], t.acceptor, *t.in[1], arrived);  // the acceptor reads stream 1 first
  deliver(*t.out[0], t.acceptor, *t.in[0], arrived + 1ms);
  CHECK(t.datagrams_to_acceptor(arrived + 1ms) >= 1u);  // opened under stream 0's keys, though stream 1 was first
  deliver(*t.in[1], t.dialler, *t.out[1], t.challenged + 540ms);
  deliver(*t.in[0], t.dialler, *t.out[0], t.challenged + 545ms);
  for (auto now = t.challenged + 540ms; now < t.challenged + 2s; now += 10ms) t.dialler.service(t.session, now, false);
  CHECK(t.session.counters().datagram_reseals == 0u);
  CHECK(t.session.datagram_keys_connection() == t.out[0]);
  // The acceptor seals under the keys of the first it proved (stream 1's); the dialler opens them.
  Session& accepted = *t.acceptor.sessions().at("a:1");
  CHECK(accepted.datagram_keys_connection() == t.in[1]);
  Message answer;
  answer.tag = 8;
  answer.body.assign(10, std::byte{1});
  accepted.datagram()->submit(accepted.arq(), pack_message(answer));
  t.acceptor.service(accepted, t.challenged + 2s, false);
  REQUIRE_FALSE(accepted.datagram()->outgoing().empty());
  CHECK(open_at(t.session, accepted.datagram()->outgoing(), t.challenged + 2s) >= 1u);
  std::vector<Message> received;
  t.session.take_received(received);
  REQUIRE(received.size() == 1u);
  CHECK(received[0].tag == 8);
}

TEST_CASE("endpoint: a spill stream whose CHALLENGE came first carries a datagram session: the first streams' were lost") {
  Config config = TwoFirstDials::datagram_config();
  config.spill_streams = 2;
  Endpoint dialler(config, "a:1", TwoFirstDials::counting_nonces());
  Endpoint acceptor(config, "b:1", TwoFirstDials::counting_nonces());
  const auto worth_datagrams = [](const Connection&, const std::string&, bool) { return true; };
  dialler.set_carrier_capability(true, worth_datagrams);
  acceptor.set_carrier_capability(true, worth_datagrams);
  Session& session = dialler.session_for("b:1", kStart);
  session.allow_dialling();
  dialler.service(session, kStart, false);
  const auto dials = dialler.take_dials();
  REQUIRE(dials.size() == 4u);  // streams 0 and 1, two spill streams
  const auto connected = kStart + 540ms;
  std::vector<Connection*> in;
  for (Connection* out : dials) {
    out->link = std::make_unique<FastOpenLink>(false, false, 0);
    dialler.on_connected(*out, "", connected);
    in.push_back(acceptor.on_accepted(std::make_unique<FastOpenLink>(false, false, 0), connected));
    REQUIRE(in.back() != nullptr);
    deliver(*out, acceptor, *in.back(), connected);  // HELLO -> CHALLENGE
  }
  // Only the first spill stream's CHALLENGE gets through (the others' SYN-ACKs were lost).
  const auto challenged = connected + 540ms;
  Connection& spill = *dials[2];
  REQUIRE(StreamScheduler::is_spill_slot(spill.stream));
  deliver(*in[2], dialler, spill, challenged);
  CHECK(session.carrier_agreed());
  CHECK(spill.state == ConnectionState::kEstablished);  // kept: AUTH + IDENTIFY, then 0.5-RTT data
  CHECK(dials[3]->state != ConnectionState::kClosed);   // a key backup if its CHALLENGE comes
  CHECK(session.datagram_keys_connection() == &spill);
  Message message;
  message.tag = 9;
  message.body.assign(50, std::byte{3});
  session.datagram()->submit(session.arq(), pack_message(message));
  dialler.service(session, challenged, false);
  REQUIRE_FALSE(session.datagram()->outgoing().empty());

  deliver(spill, acceptor, *in[2], challenged + 270ms);  // AUTH + IDENTIFY
  REQUIRE(acceptor.sessions().count("a:1") == 1u);
  Session& accepted = *acceptor.sessions().at("a:1");
  CHECK(open_at(accepted, session.datagram()->outgoing(), challenged + 270ms) >= 1u);
  std::vector<Message> received;
  accepted.take_received(received);
  REQUIRE(received.size() == 1u);
  CHECK(received[0].tag == 9);
  deliver(*in[2], dialler, spill, challenged + 540ms);  // the acceptor's proof
  CHECK(spill.authenticated());
  CHECK(spill.state == ConnectionState::kEstablished);  // it seals: it stays
  CHECK(dials[3]->state == ConnectionState::kClosed);   // the keys are proven: not needed
  CHECK_FALSE(session.failed());
}

namespace {

// An auto session on a new path that both ends judge worth datagrams: two first dials and two
// spill streams (dialled in case it turned out tcp), each connected and its HELLO answered with a
// CHALLENGE at the acceptor. Each connection has its own nonces, so its own keys.
struct DialsWithSpill {
  const Config config = [] {
    Config c = TwoFirstDials::datagram_config();
    c.spill_streams = 2;
    return c;
  }();
  Endpoint dialler{config, "a:1", TwoFirstDials::counting_nonces()};
  Endpoint acceptor{config, "b:1", TwoFirstDials::counting_nonces()};
  Session& session = dialler.session_for("b:1", kStart);
  std::vector<Connection*> out, in;  // streams 0 and 1, spill streams A and B
  const Clock::time_point challenged = kStart + 1080ms;
  Message message;

  DialsWithSpill() {
    const auto worth_datagrams = [](const Connection&, const std::string&, bool) { return true; };
    dialler.set_carrier_capability(true, worth_datagrams);
    acceptor.set_carrier_capability(true, worth_datagrams);
    session.allow_dialling();
    dialler.service(session, kStart, false);
    out = dialler.take_dials();
    REQUIRE(out.size() == 4u);
    REQUIRE(StreamScheduler::is_spill_slot(out[2]->stream));
    REQUIRE(StreamScheduler::is_spill_slot(out[3]->stream));
    const auto connected = kStart + 540ms;
    for (Connection* dial : out) {
      dial->link = std::make_unique<FastOpenLink>(false, false, 0);
      dialler.on_connected(*dial, "", connected);
      in.push_back(acceptor.on_accepted(std::make_unique<FastOpenLink>(false, false, 0), connected));
      REQUIRE(in.back() != nullptr);
      deliver(*dial, acceptor, *in.back(), connected);  // HELLO -> CHALLENGE
    }
    message.tag = 11;
    message.body.assign(80, std::byte{6});
  }

  // The dialler's datagrams so far, at the acceptor's session: how many it opened.
  std::size_t datagrams_to_acceptor(Clock::time_point now) {
    return open_at(*acceptor.sessions().at("a:1"), session.datagram()->outgoing(), now);
  }
};

}  // namespace

TEST_CASE("endpoint: a spill stream goes on as a key backup when a session chooses datagrams; the rest are closed") {
  DialsWithSpill t;
  // Stream 0's CHALLENGE decides datagrams; stream 1's is lost; both spill streams' come.
  deliver(*t.in[0], t.dialler, *t.out[0], t.challenged);
  REQUIRE(t.session.datagram() != nullptr);
  deliver(*t.in[2], t.dialler, *t.out[2], t.challenged);
  deliver(*t.in[3], t.dialler, *t.out[3], t.challenged);
  CHECK(t.out[2]->handshake().identity_sent());         // the backup: AUTH + IDENTIFY
  CHECK(t.out[2]->state != ConnectionState::kClosed);
  CHECK(t.out[3]->state == ConnectionState::kClosed);   // kKeyBackups = 1: not needed
  CHECK(t.out[1]->state != ConnectionState::kClosed);   // a first dial: left to its handshake
  CHECK(t.session.datagram_keys_connection() == t.out[0]);
  CHECK_FALSE(t.session.failed());
}

TEST_CASE("endpoint: both first dials lose a handshake segment: the key backup proven by the acceptor seals the datagrams") {
  DialsWithSpill t;
  deliver(*t.in[0], t.dialler, *t.out[0], t.challenged);  // decides datagrams; stream 1's CHALLENGE lost
  deliver(*t.in[2], t.dialler, *t.out[2], t.challenged);  // the key backup
  REQUIRE(t.session.datagram_keys_connection() == t.out[0]);
  t.session.datagram()->submit(t.session.arq(), pack_message(t.message));
  t.dialler.service(t.session, t.challenged, false);
  REQUIRE_FALSE(t.session.datagram()->outgoing().empty());

  // Stream 0's AUTH + IDENTIFY are lost; the backup's arrive: the acceptor cannot open the datagrams.
  t.out[0]->consume(t.out[0]->unsent().size());
  const auto arrived = t.challenged + 270ms;
  deliver(*t.out[2], t.acceptor, *t.in[2], arrived);
  REQUIRE(t.acceptor.sessions().count("a:1") == 1u);
  CHECK(t.datagrams_to_acceptor(arrived) == 0u);

  // The acceptor's proof on the backup comes back: an eighth of a round trip later, sealed again.
  const auto proven = t.challenged + 540ms;
  deliver(*t.in[2], t.dialler, *t.out[2], proven);
  CHECK(t.out[2]->authenticated());
  const auto waited = proven + 540ms / Session::kResealWaitShare + 1ms;
  t.dialler.service(t.session, waited, false);
  CHECK(t.session.counters().datagram_reseals == 1u);
  CHECK(t.session.datagram_keys_connection() == t.out[2]);
  CHECK(t.out[2]->state == ConnectionState::kEstablished);  // it seals now: not retired
  CHECK(t.datagrams_to_acceptor(waited) >= 1u);
  Session& accepted = *t.acceptor.sessions().at("a:1");
  std::vector<Message> received;
  accepted.take_received(received);
  REQUIRE(received.size() == 1u);
  CHECK(received[0].tag == 11);
  CHECK(received[0].body == t.message.body);
  CHECK_FALSE(t.session.failed());
}

TEST_CASE("endpoint: once the datagrams' keys are proven the key backup is closed, and the acceptor loses nothing by it") {
  DialsWithSpill t;
  for (std::size_t i : {0u, 1u, 2u, 3u}) deliver(*t.in[i], t.dialler, *t.out[i], t.challenged);
  REQUIRE(t.session.datagram_keys_connection() == t.out[0]);
  CHECK(t.out[3]->state == ConnectionState::kClosed);
  t.session.datagram()->submit(t.session.arq(), pack_message(t.message));
  t.dialler.service(t.session, t.challenged, false);

  // The acceptor reads the backup's AUTH first: its keys seal the acceptor's datagrams.
  const auto arrived = t.challenged + 270ms;
  for (std::size_t i : {2u, 0u, 1u}) deliver(*t.out[i], t.acceptor, *t.in[i], arrived);
  Session& accepted = *t.acceptor.sessions().at("a:1");
  REQUIRE(accepted.datagram_keys_connection() == t.in[2]);
  CHECK(t.datagrams_to_acceptor(arrived) >= 1u);
  std::vector<Message> received;
  accepted.take_received(received);
  REQUIRE(received.size() == 1u);
  // An answer in flight under the backup's keys when it goes.
  Message answer;
  answer.tag = 12;
  answer.body.assign(10, std::byte{2});
  accepted.datagram()->submit(accepted.arq(), pack_message(answer));
  t.acceptor.service(accepted, arrived, false);
  auto in_flight = accepted.datagram()->outgoing();
  accepted.datagram()->outgoing().clear();
  REQUIRE_FALSE(in_flight.empty());

  // The proofs come back, the backup's first: stream 0's proof retires it with CLOSE(duplicate).
  const auto proven = t.challenged + 540ms;
  deliver(*t.in[2], t.dialler, *t.out[2], proven);
  CHECK(t.out[2]->state == ConnectionState::kEstablished);
  deliver(*t.in[0], t.dialler, *t.out[0], proven + 1ms);
  deliver(*t.in[1], t.dialler, *t.out[1], proven + 1ms);
  CHECK(t.session.datagram_keys_connection() == t.out[0]);
  CHECK(t.out[2]->state == ConnectionState::kClosed);
  CHECK(t.session.counters().datagram_reseals == 0u);

  // At the acceptor: not a loss. Nothing is re-sent, and its datagrams are sealed under a proven
  // first dial's keys from now on; the one in flight under the backup's still opens at the dialler.
  const std::uint64_t resets = accepted.arq().stats().carrier_resets;
  deliver(*t.out[2], t.acceptor, *t.in[2], proven + 270ms);
  CHECK(t.in[2]->state == ConnectionState::kClosed);
  CHECK(accepted.arq().stats().carrier_resets == resets);
  const Connection* sealer = accepted.datagram_keys_connection();
  CHECK((sealer == t.in[0] || sealer == t.in[1]));
  CHECK_FALSE(accepted.failed());
  CHECK(open_at(t.session, in_flight, proven + 540ms) >= 1u);
  Message later;
  later.tag = 13;
  later.body.assign(10, std::byte{3});
  accepted.datagram()->submit(accepted.arq(), pack_message(later));
  t.acceptor.service(accepted, proven + 270ms, false);
  REQUIRE(open_at(t.session, accepted.datagram()->outgoing(), proven + 540ms) >= 1u);
  std::vector<Message> answers;
  t.session.take_received(answers);
  REQUIRE(answers.size() == 2u);
  CHECK(answers[0].tag == 12);
  CHECK(answers[1].tag == 13);
}
