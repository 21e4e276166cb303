// 0-RTT data (security/handshake.h, security/early_gate.h): the gate's rules, and two endpoints in
// memory with clocks of their own: what a first flight delivers, that a replayed one (to the same
// acceptor, to a restarted one, to another process of the job) delivers nothing twice, and that
// every refusal falls back to the acceptor's nonce with the data arriving once.
#include <catch2/catch.hpp>

#include <cstring>
#include <memory>

#include "message.h"
#include "security/early_gate.h"
#include "session/connection.h"
#include "session/endpoint.h"
#include "session/session.h"

using namespace lp;
using namespace std::chrono_literals;

namespace {

using Clock = Session::Clock;
using Verdict = EarlyGate::Verdict;
const Clock::time_point kStart = Clock::time_point{} + 1000s;
constexpr EarlyGate::WallMs kWall = 1'800'000'000'000;  // ms since the Unix epoch
constexpr EarlyGate::WallMs kPast = EarlyGate::kPast, kFuture = EarlyGate::kFuture;

std::vector<std::byte> nonce(std::uint8_t fill) { return std::vector<std::byte>(kNonceSize, std::byte{fill}); }

Config make_config(const std::string& key) {
  Config config;
  config.key = key;
  config.carrier = CarrierChoice::kTcp;
  config.streams = 1;
  config.spill_streams = 0;
  return config;
}

// Moves what `from` has written so far into `to`'s reader and lets `to`'s endpoint read it.
void deliver(Connection& from, Endpoint& to_endpoint, Connection& to, Clock::time_point now) {
  const auto bytes = from.unsent();
  auto area = to.reader().write_area(bytes.size());
  std::memcpy(area.data(), bytes.data(), bytes.size());
  to.reader().commit(bytes.size());
  from.consume(bytes.size());
  to_endpoint.on_read(to, IoStatus::kOk, "", now);
}

// Feeds recorded bytes to a connection the endpoint just accepted.
void replay(const std::vector<std::byte>& bytes, Endpoint& to_endpoint, Connection& to, Clock::time_point now) {
  auto area = to.reader().write_area(bytes.size());
  std::memcpy(area.data(), bytes.data(), bytes.size());
  to.reader().commit(bytes.size());
  to_endpoint.on_read(to, IoStatus::kOk, "", now);
}

// Each process with its own wall clock; nonces unique across all of them.
struct Job {
  std::uint8_t next_nonce = 1;
  Endpoint::NonceSource nonces() {
    return [this] { return nonce(next_nonce++); };
  }
};

// A dialler at a:1 whose first flight carries one 100-byte message to b:1, sent at its wall clock
// `dialler_wall` (its acceptor started at kWall).
struct Flight {
  Job& job;
  Config config;
  EarlyGate::WallMs wall;
  Endpoint dialler;
  Session& session;
  Connection* out = nullptr;
  std::vector<std::byte> bytes;  // the first flight, as a recorder on the path saw it

  Flight(Job& j, EarlyGate::WallMs dialler_wall)
      : job(j),
        config(make_config("secret")),
        wall(dialler_wall),
        dialler(config, "a:1", job.nonces(), [this] { return wall; }),
        session(dialler.session_for("b:1", kStart)) {
    session.allow_dialling();
    Message message;
    message.tag = 7;
    message.body.assign(100, std::byte{0x5a});
    session.arq().submit(pack_message(message));
    dialler.service(session, kStart, false);
    const auto dials = dialler.take_dials();
    REQUIRE(dials.size() == 1u);
    out = dials.front();
    dialler.on_connected(*out, "", kStart + 1ms);
    dialler.service(session, kStart + 1ms, false);
    const auto unsent = out->unsent();
    bytes.assign(unsent.begin(), unsent.end());
  }
};

std::size_t take_received(Endpoint& endpoint) {
  const std::size_t count = endpoint.received().size();
  endpoint.received().clear();
  return count;
}

}  // namespace

TEST_CASE("early gate: a flight within the window, after the start, is admitted once") {
  EarlyGate gate(kWall);
  const EarlyGate::WallMs now = kWall + 20000;
  CHECK(gate.admit(nonce(1), now, now) == Verdict::kAdmitted);
  CHECK(gate.admit(nonce(1), now, now) == Verdict::kReplayed);
  CHECK(gate.admit(nonce(1), now, now + kPast) == Verdict::kReplayed);  // remembered while in the window
  CHECK(gate.admit(nonce(1), now, now + kPast + 1) == Verdict::kTooOld);
  CHECK(gate.admit(nonce(2), now - kPast - 1, now) == Verdict::kTooOld);
  CHECK(gate.admit(nonce(3), now - kPast, now) == Verdict::kAdmitted);
  // Stamped less than kFuture after the start: a previous process at our endpoint may have seen it.
  CHECK(gate.admit(nonce(4), kWall + kFuture - 1, kWall + 1000) == Verdict::kBeforeStart);
  CHECK(gate.admit(nonce(5), kWall + kFuture, kWall + 1000) == Verdict::kAdmitted);
}

TEST_CASE("early gate: a flight from the future stays refused once the clock has caught up with it") {
  EarlyGate gate(kWall);
  const EarlyGate::WallMs now = kWall + 5000;
  CHECK(gate.admit(nonce(1), now + kFuture + 1, now) == Verdict::kFromTheFuture);
  CHECK(gate.admit(nonce(1), now + kFuture + 1, now + kFuture + 1) == Verdict::kFromTheFuture);  // replayed
  CHECK(gate.admit(nonce(2), now + kFuture, now + kFuture) == Verdict::kFromTheFuture);  // stamped before it
  CHECK(gate.admit(nonce(3), now + kFuture + 2, now + kFuture + 2) == Verdict::kAdmitted);
  CHECK(gate.admit(nonce(4), std::uint64_t{1} << 63, now) == Verdict::kFromTheFuture);  // absurd: 0-RTT is off
  CHECK(gate.admit(nonce(5), now + 10000, now + 10000) == Verdict::kFromTheFuture);
}

TEST_CASE("early gate: a full strike register refuses rather than grows, and has room again as nonces leave the window") {
  EarlyGate gate(kWall, 3);
  const EarlyGate::WallMs now = kWall + 5000;
  for (std::uint8_t i = 1; i <= 3; ++i) CHECK(gate.admit(nonce(i), now, now) == Verdict::kAdmitted);
  CHECK(gate.admit(nonce(4), now, now) == Verdict::kFull);
  CHECK(gate.remembered() == 3u);
  CHECK(gate.admit(nonce(5), now + kPast + 1, now + kPast + 1) == Verdict::kAdmitted);
  CHECK(gate.remembered() == 1u);
}

TEST_CASE("0-RTT: an admitted first flight delivers its data before the acceptor's nonce went out, once") {
  Job job;
  Config config = make_config("secret");
  EarlyGate::WallMs acceptor_wall = kWall;
  Endpoint acceptor(config, "b:1", job.nonces(), [&] { return acceptor_wall; });
  acceptor_wall = kWall + 2000;
  Flight flight(job, kWall + 2000);
  REQUIRE(flight.out->handshake().early());
  CHECK(flight.out->awaiting_peer_proof);  // attached at the connect: the DATA is in the first flight
  CHECK(flight.dialler.statistics().early_sent == 1u);

  Connection* in = acceptor.on_accepted(nullptr, kStart + 1ms);
  REQUIRE(in != nullptr);
  deliver(*flight.out, acceptor, *in, kStart + 50ms);
  CHECK(take_received(acceptor) == 1u);  // with the first flight: no round trip before it
  CHECK(acceptor.statistics().early_admitted == 1u);
  CHECK(in->authenticated());
  deliver(*in, flight.dialler, *flight.out, kStart + 100ms);  // CHALLENGE, proof, IDENTIFY, ACK
  CHECK(flight.out->authenticated());
  CHECK(flight.out->handshake().early_accepted());
  CHECK(flight.dialler.statistics().early_sent_refused == 0u);
  flight.dialler.service(flight.session, kStart + 100ms, false);
  deliver(*flight.out, acceptor, *in, kStart + 150ms);  // nothing is sent again
  CHECK(take_received(acceptor) == 0u);

  SECTION("the same bytes again, to the same acceptor: refused, nothing delivered") {
    Connection* again = acceptor.on_accepted(nullptr, kStart + 200ms);
    REQUIRE(again != nullptr);
    replay(flight.bytes, acceptor, *again, kStart + 200ms);
    CHECK(take_received(acceptor) == 0u);
    CHECK(acceptor.statistics().early_refused == 1u);
    CHECK_FALSE(again->authenticated());  // it waits for a proof over its new nonce, which never comes
  }
  SECTION("the same bytes to a restarted acceptor at that endpoint: refused, nothing delivered") {
    Endpoint restarted(config, "b:1", job.nonces(), [&] { return acceptor_wall; });
    Connection* again = restarted.on_accepted(nullptr, kStart + 200ms);
    REQUIRE(again != nullptr);
    replay(flight.bytes, restarted, *again, kStart + 200ms);
    CHECK(take_received(restarted) == 0u);
    CHECK(restarted.statistics().early_refused == 1u);
  }
  SECTION("the same bytes to another process of the job: refused (dialled another endpoint), nothing delivered") {
    Endpoint other(config, "c:1", job.nonces(), [&] { return kWall; });
    Connection* again = other.on_accepted(nullptr, kStart + 200ms);
    REQUIRE(again != nullptr);
    replay(flight.bytes, other, *again, kStart + 200ms);
    CHECK(take_received(other) == 0u);
    CHECK(other.statistics().early_refused == 1u);
  }
}

TEST_CASE("0-RTT: a refused first flight falls back to the acceptor's nonce, and the data arrives once") {
  Job job;
  Config config = make_config("secret");
  EarlyGate::WallMs acceptor_wall = kWall;
  Endpoint acceptor(config, "b:1", job.nonces(), [&] { return acceptor_wall; });
  // A process that names itself otherwise than the dialler names it (a host alias).
  Endpoint alias(config, "b-alias:1", job.nonces(), [&] { return acceptor_wall; });
  acceptor_wall = kWall + 30000;
  // The dialler's clock behind (an old timestamp), ahead (a timestamp from the future), or right
  // but the acceptor dialled under another name than its own.
  const int refusal = GENERATE(0, 1, 2);
  const EarlyGate::WallMs dialler_wall =
      refusal == 0 ? acceptor_wall - kPast - 1000 : refusal == 1 ? acceptor_wall + kFuture + 1000 : acceptor_wall;
  Endpoint* target = refusal == 2 ? &alias : &acceptor;
  Flight flight(job, dialler_wall);
  Connection* in = target->on_accepted(nullptr, kStart + 1ms);
  REQUIRE(in != nullptr);
  deliver(*flight.out, *target, *in, kStart + 50ms);
  CHECK(take_received(*target) == 0u);  // dropped unread
  CHECK(target->statistics().early_refused == 1u);
  deliver(*in, flight.dialler, *flight.out, kStart + 100ms);  // CHALLENGE: the dialler proves, re-sends
  CHECK(flight.dialler.statistics().early_sent_refused == 1u);
  CHECK_FALSE(flight.out->handshake().early_accepted());
  deliver(*flight.out, *target, *in, kStart + 150ms);  // 0.5-RTT data
  CHECK(take_received(*target) == 1u);
  CHECK(in->authenticated());
  deliver(*in, flight.dialler, *flight.out, kStart + 200ms);
  CHECK(flight.out->authenticated());
  flight.dialler.service(flight.session, kStart + 200ms, false);
  deliver(*flight.out, *target, *in, kStart + 250ms);
  CHECK(take_received(*target) == 0u);  // once
  CHECK(target->statistics().rejected == 0u);
}

TEST_CASE("0-RTT: a first flight under another job key is refused as today, and delivers nothing") {
  Job job;
  Config other_key = make_config("another key");
  Endpoint acceptor(other_key, "b:1", job.nonces(), [] { return kWall; });
  Flight flight(job, kWall + 2000);
  Connection* in = acceptor.on_accepted(nullptr, kStart + 1ms);
  REQUIRE(in != nullptr);
  deliver(*flight.out, acceptor, *in, kStart + 50ms);
  CHECK(take_received(acceptor) == 0u);
  CHECK(acceptor.statistics().rejected == 1u);
  CHECK(in->state == ConnectionState::kClosed);
  deliver(*in, flight.dialler, *flight.out, kStart + 100ms);  // CLOSE(authentication failed)
  CHECK(flight.out->state == ConnectionState::kClosed);
  CHECK(flight.dialler.statistics().rejected == 1u);
  CHECK(flight.session.counters().rejected_connections == 1u);
}

TEST_CASE("0-RTT: a verdict altered on the way fails that connection, and delivers nothing twice") {
  Job job;
  Config config = make_config("secret");
  EarlyGate::WallMs acceptor_wall = kWall;
  Endpoint acceptor(config, "b:1", job.nonces(), [&] { return acceptor_wall; });
  acceptor_wall = kWall + 2000;
  Flight flight(job, kWall + 2000);
  Connection* in = acceptor.on_accepted(nullptr, kStart + 1ms);
  REQUIRE(in != nullptr);
  deliver(*flight.out, acceptor, *in, kStart + 50ms);
  CHECK(take_received(acceptor) == 1u);
  // CHALLENGE leads the acceptor's output: its last byte is the verdict, turned to "refused".
  constexpr std::size_t kVerdict = kFrameHeaderSize + kNonceSize + 2;
  REQUIRE(in->pending_output() > kVerdict);
  REQUIRE(in->output()[kVerdict] == std::byte{1});
  in->output()[kVerdict] = std::byte{0};
  deliver(*in, flight.dialler, *flight.out, kStart + 100ms);
  // The acceptor's proof is of an accepted flight: the dialler refuses it.
  CHECK(flight.out->state == ConnectionState::kClosed);
  CHECK(flight.dialler.statistics().rejected == 1u);
  deliver(*flight.out, acceptor, *in, kStart + 150ms);  // what the dialler wrote before it closed
  CHECK(take_received(acceptor) == 0u);
}
