// Spill streams on a fake clock: when a session dials them, how a cold burst spills and a warm
// window keeps it; the endpoint's limit on spilling sessions, auto's decision before the first dial
// on a known path, and an acceptor under a dial storm.
#include "session_test_support.h"

using namespace lp;
using namespace lp::session_test;
using namespace std::chrono_literals;

TEST_CASE("session: spill streams are dialled with the first streams until one connection is up") {
  Config config = SpillingSession::make_config(8);
  Session session("b:1", arq_config_from(config), config, kStart);
  session.allow_dialling();
  const Session::TimeoutActions first = session.handle_timeout(kStart, false);
  CHECK(first.dial == std::vector<std::size_t>{0, 1, 8, 9, 10, 11, 12, 13, 14, 15});
  // Every attempt refused (the peer not listening yet): the redial brings the spill streams again.
  std::vector<std::unique_ptr<Connection>> attempts;
  for (std::size_t slot : first.dial) {
    attempts.push_back(dialled(slot, kStart));
    session.streams().add_attempt(slot, attempts.back().get());
  }
  for (auto& attempt : attempts) session.detach(*attempt, true, "connect: Connection refused", kStart);
  const Session::TimeoutActions again = session.handle_timeout(kStart + 1s, false);
  CHECK(again.dial == first.dial);
}

TEST_CASE("session: a new session dials its spill streams once, with its first streams") {
  SpillingSession s(8);
  std::vector<std::size_t> slots;
  for (auto& stream : s.streams) slots.push_back(stream->stream);
  CHECK(slots == std::vector<std::size_t>{0, 1, 8, 9, 10, 11, 12, 13, 14, 15});
  CHECK(s.session.streams().spill_established() == 8);
  // A lost spill stream is not redialled; a lost regular one is.
  s.session.detach(s.stream(9), false, "reset", kStart + 1s);
  s.session.detach(s.stream(1), false, "reset", kStart + 1s);
  const Session::TimeoutActions later = s.session.handle_timeout(kStart + 2s, false);
  CHECK(later.dial == std::vector<std::size_t>{1});
}

TEST_CASE("session: a cold burst fills the first window, then spills; a warm window keeps it") {
  constexpr std::size_t kBurst = 100;
  SpillingSession s(8);
  std::map<std::size_t, StreamWindow> windows;  // by slot
  s.session.window_of = [&](const Connection& c) { return windows[c.stream]; };
  for (auto& stream : s.streams) windows[stream->stream] = fake_window(10, 1);  // initial window, AUTH in flight
  for (std::size_t i = 0; i < kBurst; ++i) s.session.arq().submit(ArqPayload(1024 + kMessageTrailerSize));

  SECTION("cold: every initial window carries a share, none beyond its room") {
    s.session.pump(kStart);
    CHECK(s.session.arq().stats().messages_sent == kBurst);
    CHECK(s.session.counters().spilled_messages >= 80);
    CHECK(s.stream(0).pending_output() >= 9 * 1448 - 1100);
    for (std::size_t slot = kFirstSpillStream; slot < kFirstSpillStream + 8; ++slot) {
      CHECK(s.stream(slot).pending_output() > 0);
      CHECK(s.stream(slot).pending_output() <= 9 * 1448);
    }
    CHECK(s.stream(1).pending_output() == 0);  // the large-message stream takes no small ones
  }
  SECTION("warm: a window that covers the burst takes all of it") {
    windows[0] = fake_window(116, 0);
    s.session.pump(kStart);
    CHECK(s.session.arq().stats().messages_sent == kBurst);
    CHECK(s.session.counters().spilled_messages == 0);
    for (std::size_t slot = kFirstSpillStream; slot < kFirstSpillStream + 8; ++slot) {
      CHECK(s.stream(slot).pending_output() == 0);
    }
  }
  SECTION("a window that covers the path's BDP does not spill either") {
    windows[0] = fake_window(80, 80);  // full, but 116 KB: more than 155 Mbit/s x 5 ms
    s.session.path().on_handshake_rtt(std::chrono::microseconds(5000));
    s.session.pump(kStart);
    CHECK(s.session.arq().stats().messages_sent == kBurst);
    CHECK(s.session.counters().spilled_messages == 0);
  }
  SECTION("without a window reader nothing spills") {
    s.session.window_of = nullptr;
    s.session.pump(kStart);
    CHECK(s.session.counters().spilled_messages == 0);
  }
}

TEST_CASE("endpoint: only its first kSpillingSessions sessions dial spill streams") {
  Config config = SpillingSession::make_config(8);
  config.key = "secret";
  Endpoint endpoint(config, "a:1", [] { return std::vector<std::byte>(32, std::byte{7}); });
  std::map<std::string, std::size_t> dialled_by_peer;
  const std::size_t peers = Endpoint::kSpillingSessions + 2;
  for (std::size_t i = 0; i < peers; ++i) {
    const std::string peer = std::string("b").append(std::to_string(i)).append(":1");  // not "b" + ...: GCC 12 -O3 -Wrestrict false positive
    Session& session = endpoint.session_for(peer, kStart);
    session.allow_dialling();
    endpoint.service(session, kStart, false);
    const std::size_t dialled = endpoint.take_dials().size();
    dialled_by_peer[peer] = dialled;
    // Two regular streams always; eight spill streams while the budget lasts.
    CHECK(dialled == (i < Endpoint::kSpillingSessions ? 10u : 2u));
    // A session past the budget does not hold its first DATA back for spill streams it never dials.
    CHECK(session.spill_granted() == (i < Endpoint::kSpillingSessions));
  }
  // A redial of a session past the budget (every attempt refused) still brings no spill streams.
  Session& last = endpoint.session_for("b" + std::to_string(peers - 1) + ":1", kStart);
  for (std::size_t slot : {0, 1}) {
    for (Connection* attempt : std::vector<Connection*>(last.streams().attempts(slot))) {
      last.detach(*attempt, true, "connect: Connection refused", kStart);
    }
  }
  CHECK(last.handle_timeout(kStart + 1s, false).dial == std::vector<std::size_t>{0, 1});
}

TEST_CASE("endpoint: LONGPIPE_CARRIER=auto decided by the dialler before its first dial on a path its cache knows") {
  Config config = SpillingSession::make_config(8);
  config.key = "secret";
  config.carrier = CarrierChoice::kAuto;
  Endpoint endpoint(config, "a:1", [] { return std::vector<std::byte>(32, std::byte{7}); });
  DialJudgement known = DialJudgement::kTcp;  // the path cache's judgement before the dial
  endpoint.set_carrier_capability(
      true, [](const Connection&, const std::string&, bool) { return true; }, [&](const std::string&) { return known; });
  // A session to b:1 whose first service ran with the cache judging its path `judgement`; `dials`
  // counts what that service dialled.
  std::size_t dials = 0;
  const auto first_service = [&](DialJudgement judgement) -> Session& {
    known = judgement;
    Session& session = endpoint.session_for("b:1", kStart);
    session.allow_dialling();
    endpoint.service(session, kStart, false);
    dials = endpoint.take_dials().size();
    return session;
  };
  SECTION("a path the cache knows as tcp's: spill streams with the first dial, messages taken at once, as with tcp") {
    const Session& session = first_service(DialJudgement::kTcp);
    CHECK(dials == 10u);  // 2 streams and 8 spill streams
    CHECK(session.tcp_certain());
  }
  SECTION("a path the cache knows as worth datagrams: no spill streams, the acceptor's offer is awaited") {
    const Session& session = first_service(DialJudgement::kDatagrams);
    CHECK(dials == 2u);
    CHECK_FALSE(session.tcp_certain());
  }
  SECTION("a path the cache does not know: undecided until CHALLENGE, the spill streams dialled in case of tcp") {
    const Session& session = first_service(DialJudgement::kAtHandshake);
    CHECK(dials == 10u);
    CHECK_FALSE(session.tcp_certain());  // no message taken, no 0.5-RTT data before the decision
    CHECK_FALSE(session.offer);
  }
  SECTION("a session the peer dialled first (an acceptor's): not decided here") {
    Session& session = endpoint.session_for("b:1", kStart);
    session.offer = CarrierOffer{CarrierChoice::kAuto, true, false};  // set when the peer's IDENTIFY came
    session.allow_dialling();
    endpoint.service(session, kStart, false);
    CHECK(endpoint.take_dials().size() == 2u);
    CHECK_FALSE(session.judgement_before_dial);
  }
}

TEST_CASE("endpoint: an acceptor admits the first dials of 16 fresh sessions at once (a dial storm)") {
  Config config;  // the defaults: 2 streams and LONGPIPE_SPILL_STREAMS spill streams per session
  config.key = "secret";
  const auto nonces = [] { return std::vector<std::byte>(32, std::byte{7}); };
  Endpoint acceptor(config, "b:1", nonces);
  // 16 processes (the 16 ranks of one site) open their session to the same peer at one instant.
  constexpr std::size_t kDiallers = 16;
  std::size_t dialled = 0, admitted = 0;
  for (std::size_t i = 0; i < kDiallers; ++i) {
    Endpoint dialler(config, "a:" + std::to_string(1000 + i), nonces);
    Session& session = dialler.session_for("b:1", kStart);
    session.allow_dialling();
    dialler.service(session, kStart, false);
    for ([[maybe_unused]] Connection* dial : dialler.take_dials()) {
      ++dialled;
      admitted += acceptor.on_accepted(nullptr, kStart) != nullptr;
    }
  }
  CHECK(dialled == kDiallers * (config.streams + config.spill_streams));
  CHECK(admitted == dialled);  // none turned away: each session's first batch gets all its windows
  CHECK(acceptor.statistics().refused_busy == 0);
  // Beyond the limit new connections are still refused and counted (a flood of unauthenticated ones).
  while (acceptor.on_accepted(nullptr, kStart) != nullptr) ++admitted;
  CHECK(admitted == Endpoint::kMaxHandshakingConnections);
  CHECK(acceptor.statistics().refused_busy == 1);
}
