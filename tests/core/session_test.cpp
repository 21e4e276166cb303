// A session on a fake clock, without sockets: redial back-off, dead-peer detection, silent paths
// (probes, suspect streams), goodbye, keep-alives, the reconnect counter and the one next deadline.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <stdexcept>

#include "session/connection.h"
#include "session/endpoint.h"
#include "session/session.h"
#include "session/stream_scheduler.h"

using namespace lp;
using namespace std::chrono_literals;

namespace {

using Clock = Session::Clock;
const Clock::time_point kStart = Clock::time_point{} + 1000s;
const Authenticator kKey("secret");

Config one_stream_config() {
  Config config;
  config.streams = 1;
  config.spill_streams = 0;  // the spill streams have tests of their own (below)
  config.connect_retry_initial = 100ms;
  config.connect_retry_max = 400ms;
  config.dead_peer_timeout = 15000ms;
  config.keepalive_interval = 2000ms;
  return config;
}

std::unique_ptr<Connection> dialled(std::size_t stream, Clock::time_point now) {
  auto connection = std::make_unique<Connection>(
      Handshake::dialler(kKey, "a:1", stream, std::vector<std::byte>(kNonceSize), Protection::kEncrypt,
                         std::vector<std::byte>(kIdentityTokenSize), now + 5s),
      now);
  connection->stream = stream;
  connection->state = ConnectionState::kEstablished;
  return connection;
}

// Plays the acceptor's side of the handshake up to the CHALLENGE: the dialler answers it with
// AUTH and IDENTIFY, after which the acceptor may hold the connection as established.
void answer_hello(Connection& dial) {
  std::vector<std::byte> hello, challenge, reply;
  dial.handshake().start(hello);
  Handshake acceptor = Handshake::acceptor(kKey, std::vector<std::byte>(kNonceSize), Protection::kEncrypt, kStart + 5s);
  FrameReader acceptor_inbox(kMaxHandshakePayload), dialler_inbox(kMaxHandshakePayload);
  std::memcpy(acceptor_inbox.write_area(hello.size()).data(), hello.data(), hello.size());
  acceptor_inbox.commit(hello.size());
  REQUIRE(acceptor.on_frame(*acceptor_inbox.next(), challenge) == HandshakeStep::kIdentified);
  std::memcpy(dialler_inbox.write_area(challenge.size()).data(), challenge.data(), challenge.size());
  dialler_inbox.commit(challenge.size());
  REQUIRE(dial.handshake().on_frame(*dialler_inbox.next(), reply) == HandshakeStep::kPending);
}

}  // namespace

TEST_CASE("session: redials back off by doubling up to the ceiling") {
  const Config config = one_stream_config();
  Session session("b:1", arq_config_from(config), config, kStart);
  session.allow_dialling();  // the application named the peer
  std::vector<Clock::duration> gaps;
  Clock::time_point now = kStart, last = kStart;
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto actions = session.handle_timeout(now, false);
    REQUIRE(actions.dial == std::vector<std::size_t>{0});
    if (attempt > 0) gaps.push_back(now - last);
    last = now;
    // Our dial fails at once; nothing more until the deadline.
    auto dial = dialled(0, now);
    session.streams().add_attempt(0, dial.get());
    session.detach(*dial, true, "connect: refused", now);
    CHECK(session.handle_timeout(now, false).dial.empty());
    now = session.next_deadline(now);
  }
  CHECK(gaps == std::vector<Clock::duration>{100ms, 200ms, 400ms, 400ms});
  CHECK(session.counters().connect_failures == 5);
  CHECK(session.last_error() == "connect: refused");
}

TEST_CASE("session: a dead peer (silent for LONGPIPE_DEAD_PEER_MS, its host refusing) is given up on, not before") {
  const Config config = one_stream_config();
  Session session("b:1", arq_config_from(config), config, kStart);
  session.allow_dialling();  // the application named the peer
  auto stream = dialled(0, kStart);
  session.attach(*stream, "a:1", kStart);
  session.heard_from_peer(kStart + 1s);
  session.note_refused();  // e.g. a redial answered with ECONNREFUSED: the process is gone
  CHECK_FALSE(session.handle_timeout(kStart + 16s, false).failure);  // exactly the timeout: not yet
  CHECK(session.next_deadline(kStart + 16s) <= kStart + 16s + 1ms);
  auto actions = session.handle_timeout(kStart + 16s + 1ms, false);
  REQUIRE(actions.failure);
  CHECK(actions.failure->find("LONGPIPE_DEAD_PEER_MS") != std::string::npos);

  SECTION("our own back-pressure is not the peer's silence") {
    Session paused("b:1", arq_config_from(config), config, kStart);
    CHECK_FALSE(paused.handle_timeout(kStart + 60s, true).failure);
  }
}

TEST_CASE("session: a silent path is probed, not given up on; the probe replaces the suspect stream") {
  Config config = one_stream_config();
  config.silent_path_timeout = 60000ms;
  Session session("b:1", arq_config_from(config), config, kStart);
  // The stream was dialled by the peer, whose endpoint wins the tie-break ("b:1" < "z:1").
  auto stream = std::make_unique<Connection>(Handshake::acceptor(kKey, std::vector<std::byte>(kNonceSize), Protection::kEncrypt, kStart + 5s),
                                             kStart);
  stream->state = ConnectionState::kEstablished;
  session.attach(*stream, "z:1", kStart);
  const Clock::time_point silent = kStart + session.silence_threshold();
  CHECK(session.handle_timeout(silent, false).probe.empty());  // exactly the threshold: not yet
  CHECK(session.next_deadline(silent) <= silent + 1ms);
  auto actions = session.handle_timeout(silent + 1ms, false);
  CHECK(actions.probe == std::vector<std::size_t>{0});
  CHECK(actions.probe_limit == session.probe_attempt_limit());
  CHECK(stream->suspect);
  CHECK(session.handle_timeout(silent + 2ms, false).probe.empty());  // the next one after an interval
  CHECK(session.next_deadline(silent + 2ms) <= silent + 1ms + session.probe_start_interval());
  CHECK(session.handle_timeout(silent + 1ms + session.probe_start_interval(), false).probe.size() == 1);

  // Long past LONGPIPE_DEAD_PEER_MS, nothing refused: the session, its window and stream stay.
  CHECK_FALSE(session.handle_timeout(kStart + 30s, false).failure);
  // The first sign of life probes at once (the other direction may still be stuck).
  session.heard_from_peer(kStart + 31s);
  CHECK(session.handle_timeout(kStart + 31s, false).probe == std::vector<std::size_t>{0});
  // Our probe gets through and replaces the suspect stream, although the tie-break favours it.
  auto probe = dialled(0, kStart + 31s);
  const auto attachment = session.attach(*probe, "z:1", kStart + 31s);
  CHECK(attachment.attached);
  CHECK(attachment.loser == stream.get());
  CHECK(session.counters().path_probes == 4);
  CHECK(session.handle_timeout(kStart + 31s + 1ms, false).probe.empty());  // nothing suspect now

  SECTION("LONGPIPE_SILENT_PATH_MS of silence gives up") {
    Session quiet("b:1", arq_config_from(config), config, kStart);
    CHECK_FALSE(quiet.handle_timeout(kStart + 60s, false).failure);
    const auto failure = quiet.handle_timeout(kStart + 60s + 1ms, false).failure;
    REQUIRE(failure);
    CHECK(failure->find("LONGPIPE_SILENT_PATH_MS") != std::string::npos);
  }
}

TEST_CASE("session: a stall of the engine itself is not taken for a silent path; a real silence after it is") {
  Config config = one_stream_config();
  Session session("b:1", arq_config_from(config), config, kStart);
  auto stream = dialled(0, kStart);
  session.attach(*stream, "a:1", kStart);
  // The host froze: the progress thread wakes long after its deadline, past the silence threshold.
  const Clock::time_point woke = kStart + session.silence_threshold() + 3s;
  CHECK(session.note_engine_stall(woke, session.silence_threshold()));
  CHECK(session.counters().engine_stalls == 1);
  CHECK(session.handle_timeout(woke, false).probe.empty());
  CHECK_FALSE(stream->suspect);
  // The silence clock started again at the wake-up: a peer that stays silent a whole threshold after
  // it is probed as before.
  CHECK(session.handle_timeout(woke + session.silence_threshold(), false).probe.empty());
  CHECK(session.handle_timeout(woke + session.silence_threshold() + 1ms, false).probe == std::vector<std::size_t>{0});

  SECTION("an ordinary late wake-up (scheduling) leaves the silence clock alone") {
    Session busy("b:1", arq_config_from(config), config, kStart);
    auto other = dialled(0, kStart);
    busy.attach(*other, "a:1", kStart);
    const Clock::time_point late = kStart + busy.silence_threshold() + 1ms;
    CHECK_FALSE(busy.note_engine_stall(late, busy.stall_tolerance()));
    CHECK(busy.counters().engine_stalls == 0);
    CHECK(busy.handle_timeout(late, false).probe == std::vector<std::size_t>{0});
  }
}

TEST_CASE("session: after the peer said goodbye it is not redialled until there is something to send") {
  const Config config = one_stream_config();
  Session session("b:1", arq_config_from(config), config, kStart);
  session.allow_dialling();  // the application named the peer
  auto stream = dialled(0, kStart);
  session.attach(*stream, "a:1", kStart);
  std::vector<std::byte> wire;
  encode_close(wire, CloseReason::kShutdown, "engine shutting down");
  FrameReader reader(1 << 20);
  auto area = reader.write_area(wire.size());
  std::copy(wire.begin(), wire.end(), area.begin());
  reader.commit(wire.size());
  auto frame = reader.next();
  REQUIRE(frame);
  CHECK(session.on_frame(*stream, *frame, kStart + 1s));
  session.detach(*stream, false, "peer closed", kStart + 1s);
  CHECK(session.peer_said_goodbye());
  CHECK(session.handle_timeout(kStart + 100s, false).dial.empty());  // and it is not dead either
  CHECK_FALSE(session.handle_timeout(kStart + 100s, false).failure);

  session.arq().submit(std::vector<std::byte>(kMessageTrailerSize));
  CHECK(session.handle_timeout(kStart + 100s, false).dial == std::vector<std::size_t>{0});
}

TEST_CASE("session: an idle stream sends a keep-alive after LONGPIPE_KEEPALIVE_MS") {
  const Config config = one_stream_config();
  Session session("b:1", arq_config_from(config), config, kStart);
  session.allow_dialling();  // the application named the peer
  auto stream = dialled(0, kStart);
  session.attach(*stream, "a:1", kStart);
  session.pump(kStart);  // the ACK a fresh carrier sends
  stream->consume(stream->pending_output());
  session.pump(kStart + 1s);
  CHECK(stream->pending_output() == 0);
  CHECK(session.next_deadline(kStart + 1s) == kStart + 2s);
  session.pump(kStart + 2s);
  FrameReader reader(1 << 20);
  auto area = reader.write_area(stream->pending_output());
  std::copy(stream->unsent().begin(), stream->unsent().end(), area.begin());
  reader.commit(stream->pending_output());
  auto frame = reader.next();
  REQUIRE(frame);
  CHECK(frame->type == FrameType::kKeepalive);
}

TEST_CASE("session: a reconnect after a loss is counted; a tie-break replacement is not") {
  const Config config = one_stream_config();
  Session session("b:1", arq_config_from(config), config, kStart);
  session.allow_dialling();  // the application named the peer
  auto first = dialled(0, kStart);
  session.attach(*first, "a:1", kStart);
  auto second = dialled(0, kStart);  // our own redial replaces the older one
  auto attachment = session.attach(*second, "a:1", kStart);
  CHECK(attachment.attached);
  CHECK(attachment.loser == first.get());
  CHECK(session.counters().reconnects == 0);
  session.detach(*second, false, "connection closed by peer", kStart + 1s);
  auto third = dialled(0, kStart + 2s);
  session.attach(*third, "a:1", kStart + 2s);
  CHECK(session.counters().reconnects == 1);
  CHECK(session.counters().connections_established == 3);
}

TEST_CASE("session: a peer that refuses our key a few times in a row fails the session at once, until it is bound") {
  const Config config = one_stream_config();
  Session session("b:1", arq_config_from(config), config, kStart);
  session.allow_dialling();
  for (int i = 1; i < Session::kHandshakeRefusalsToFail; ++i) CHECK_FALSE(session.note_handshake_refused("authentication failed"));
  SECTION("three in a row: a clear failure, long before LONGPIPE_DEAD_PEER_MS") {
    const auto why = session.note_handshake_refused("authentication failed");
    REQUIRE(why);
    CHECK(why->find("the peer refused our handshake 3 times: do the job keys (LONGPIPE_KEY") == 0);
    CHECK(why->find("authentication failed") != std::string::npos);
  }
  SECTION("an authenticated frame between starts the count again") {
    session.heard_from_peer(kStart + 1s);
    for (int i = 1; i < Session::kHandshakeRefusalsToFail; ++i) CHECK_FALSE(session.note_handshake_refused(""));
    const auto why = session.note_handshake_refused("");
    REQUIRE(why);
    CHECK(why->find("(its reason: authentication failed)") != std::string::npos);
  }
  SECTION("a session bound to its peer's identity is never failed by refusals (only by the dead-peer rule)") {
    CHECK(session.identity_matches(std::vector<std::byte>(kIdentityTokenSize, std::byte{1})));
    for (int i = 0; i < 10; ++i) CHECK_FALSE(session.note_handshake_refused("authentication failed"));
    CHECK(session.handle_timeout(kStart + 16s + 1ms, false).failure);  // the refusals count as a host refusing
  }
}

TEST_CASE("session: a session only the peer opened never dials; it binds the peer's identity once") {
  const Config config = one_stream_config();
  Session session("b:1", arq_config_from(config), config, kStart);
  CHECK(session.handle_timeout(kStart + 10s, false).dial.empty());
  CHECK(session.identity_matches(std::vector<std::byte>(kIdentityTokenSize, std::byte{1})));
  CHECK(session.identity_matches(std::vector<std::byte>(kIdentityTokenSize, std::byte{1})));
  CHECK_FALSE(session.identity_matches(std::vector<std::byte>(kIdentityTokenSize, std::byte{2})));
  session.allow_dialling();
  CHECK(session.handle_timeout(kStart + 10s, false).dial == std::vector<std::size_t>{0});
}

// pump() encodes DATA only up to a stream's high-water mark; the rest waits in the ARQ for the
// carrier. A write that takes the whole output leaves the socket nothing to report (no EPOLLOUT is
// asked for), so the session itself must say "now" through its deadline, or the rest of a burst
// waits for the next unrelated wake-up (a peer's ACK: one round trip; seen in the MPI bench as
// batches of two round trips at 16 KiB).
TEST_CASE("session: a burst beyond a stream's high-water mark goes on as soon as the carrier took the output") {
  constexpr std::size_t kHighWater = StreamScheduler::kOutputHighWater;
  Config config = one_stream_config();
  SECTION("one stream, 16 KiB messages") {
    Session session("b:1", arq_config_from(config), config, kStart);
    session.allow_dialling();
    auto stream = dialled(0, kStart);
    session.attach(*stream, "a:1", kStart);
    constexpr std::uint64_t kBurst = 100;  // 1.6 MB: more than one high-water mark
    for (std::uint64_t i = 0; i < kBurst; ++i) session.arq().submit(ArqPayload(16384 + kMessageTrailerSize));
    int rounds = 0;
    while (session.arq().stats().messages_sent < kBurst) {
      REQUIRE(session.next_deadline(kStart) == kStart);  // something to encode: at once
      session.pump(kStart);
      REQUIRE(stream->pending_output() > 0);
      if (session.arq().stats().messages_sent < kBurst) {
        CHECK(stream->pending_output() >= kHighWater);
        CHECK(session.next_deadline(kStart) > kStart);  // full: wait for the carrier, no busy loop
      }
      stream->consume(stream->pending_output());  // the carrier took all of it
      ++rounds;
    }
    CHECK(rounds == 2);
    CHECK(session.next_deadline(kStart) > kStart);  // all sent: nothing to do now
  }
  SECTION("small and large streams: a large message waits only for the large stream") {
    config.streams = 2;
    Session session("b:1", arq_config_from(config), config, kStart);
    session.allow_dialling();
    auto small = dialled(0, kStart);
    auto large = dialled(1, kStart);
    session.attach(*small, "a:1", kStart);
    session.attach(*large, "a:1", kStart);
    session.pump(kStart);
    small->consume(small->pending_output());
    large->consume(large->pending_output());
    for (int i = 0; i < 3; ++i) session.arq().submit(ArqPayload(kHighWater + kMessageTrailerSize));
    REQUIRE(session.next_deadline(kStart) == kStart);
    session.pump(kStart);
    CHECK(session.arq().stats().messages_sent == 1);
    CHECK(small->pending_output() == 0);
    CHECK(session.next_deadline(kStart) > kStart);  // the small stream's room does not count
    large->consume(large->pending_output());
    CHECK(session.next_deadline(kStart) == kStart);
    session.pump(kStart);
    CHECK(session.arq().stats().messages_sent == 2);
  }
}

TEST_CASE("session: a silent path has a few probes in progress at once; the first up replaces the stream") {
  Config config = one_stream_config();
  config.connect_retry_max = 2000ms;
  config.connect_timeout = 10000ms;
  config.rtt = 540ms;  // geo: a probe starts every 2 round trips and may take 6
  Session session("b:1", arq_config_from(config), config, kStart);
  session.allow_dialling();
  auto stream = dialled(0, kStart);
  session.attach(*stream, "a:1", kStart);
  CHECK(session.probe_start_interval() == 1080ms);
  CHECK(session.probe_attempt_limit() == 1080ms * Session::kMaxProbeAttemptsPerSlot);
  CHECK(session.probe_attempt_limit() <= config.connect_timeout);

  // Every start interval one more probe, as the endpoint dials them, until the bound is reached.
  std::vector<std::unique_ptr<Connection>> probes;
  Clock::time_point now = kStart + session.silence_threshold() + 1ms;
  for (int round = 0; round < 6; ++round, now += session.probe_start_interval()) {
    const auto actions = session.handle_timeout(now, false);
    CHECK(actions.probe.size() == (probes.size() < Session::kMaxProbeAttemptsPerSlot ? 1u : 0u));
    for (std::size_t slot : actions.probe) {
      probes.push_back(dialled(slot, now));
      probes.back()->state = ConnectionState::kHandshaking;
      session.streams().add_attempt(slot, probes.back().get());
    }
    CHECK(session.streams().attempts(0).size() == std::min<std::size_t>(round + 1, Session::kMaxProbeAttemptsPerSlot));
  }
  REQUIRE(probes.size() == Session::kMaxProbeAttemptsPerSlot);
  CHECK(session.counters().path_probes == Session::kMaxProbeAttemptsPerSlot);

  SECTION("the first probe up replaces the suspect stream; the others are abandoned, not failures") {
    probes[1]->state = ConnectionState::kEstablished;
    const auto attachment = session.attach(*probes[1], "a:1", now);
    CHECK(attachment.attached);
    CHECK(attachment.loser == stream.get());
    CHECK(attachment.abandoned == std::vector<Connection*>{probes[0].get(), probes[2].get()});
    CHECK(session.streams().stream(0) == probes[1].get());
    CHECK(session.streams().attempts(0).empty());
    CHECK(session.counters().connect_failures == 0);
    CHECK(session.handle_timeout(now + 1ms, false).probe.empty());  // nothing suspect now
  }
  SECTION("a probe whose IDENTIFY is out (the peer may hold it) goes on; when up, it replaces the first") {
    answer_hello(*probes[2]);
    REQUIRE(probes[2]->handshake().identity_sent());
    probes[0]->state = ConnectionState::kEstablished;
    const auto first = session.attach(*probes[0], "a:1", now);
    CHECK(first.abandoned == std::vector<Connection*>{probes[1].get()});
    CHECK(session.streams().attempts(0) == std::vector<Connection*>{probes[2].get()});
    probes[2]->state = ConnectionState::kEstablished;
    const auto second = session.attach(*probes[2], "a:1", now + 1s);
    CHECK(second.attached);
    CHECK(second.loser == probes[0].get());  // the newer of two of ours wins, on both ends
    CHECK(session.streams().attempts(0).empty());
  }
  SECTION("a probe that fails makes room for the next") {
    session.detach(*probes[0], true, "connect or authentication timed out", now);
    CHECK(session.streams().attempts(0).size() == Session::kMaxProbeAttemptsPerSlot - 1);
    CHECK(session.handle_timeout(now, false).probe == std::vector<std::size_t>{0});
  }
  SECTION("fail() returns the stream and every probe in progress, to be closed") {
    const std::vector<Connection*> closing = session.fail();
    CHECK(closing.size() == 1 + Session::kMaxProbeAttemptsPerSlot);
    CHECK(std::find(closing.begin(), closing.end(), stream.get()) != closing.end());
    for (const auto& probe : probes) CHECK(std::find(closing.begin(), closing.end(), probe.get()) != closing.end());
  }
}

TEST_CASE("session: a redial that is not a probe stays one attempt, with LONGPIPE_CONNECT_TIMEOUT_MS") {
  Config config = one_stream_config();
  config.connect_timeout = 10000ms;
  Session session("b:1", arq_config_from(config), config, kStart);
  session.allow_dialling();
  const auto actions = session.handle_timeout(kStart, false);
  REQUIRE(actions.dial == std::vector<std::size_t>{0});
  CHECK(actions.attempt_limit == config.connect_timeout);
  auto dial = dialled(0, kStart);
  dial->state = ConnectionState::kConnecting;
  session.streams().add_attempt(0, dial.get());
  CHECK(session.handle_timeout(kStart + 5s, false).dial.empty());  // one attempt per slot
  dial->state = ConnectionState::kEstablished;
  const auto attachment = session.attach(*dial, "a:1", kStart + 5s);
  CHECK(attachment.attached);
  CHECK(attachment.abandoned.empty());
}

TEST_CASE("session: a new session's first DATA waits for the streams dialled with it, a quarter round trip at most") {
  Config config = one_stream_config();
  config.streams = 4;
  config.small_message = 0;  // striped over every stream
  config.rtt = 400ms;        // no handshake round trip measured here: the gathering lasts 100 ms at most
  Session session("b:1", arq_config_from(config), config, kStart);
  session.allow_dialling();
  const Session::TimeoutActions actions = session.handle_timeout(kStart, false);
  REQUIRE(actions.dial.size() == 4);
  std::vector<std::unique_ptr<Connection>> streams;
  for (std::size_t slot : actions.dial) {
    streams.push_back(dialled(slot, kStart));
    session.streams().add_attempt(slot, streams.back().get());
  }
  constexpr std::uint64_t kBurst = 100;
  for (std::uint64_t i = 0; i < kBurst; ++i) session.arq().submit(ArqPayload(1024 + kMessageTrailerSize));
  session.attach(*streams[0], "a:1", kStart);
  session.pump(kStart);
  CHECK(session.arq().stats().messages_sent == 0);  // the others are on their way
  CHECK(session.next_deadline(kStart) == kStart + 100ms);
  session.attach(*streams[1], "a:1", kStart + 1ms);
  session.attach(*streams[2], "a:1", kStart + 2ms);
  SECTION("every stream comes up: the burst is striped over all of them") {
    session.pump(kStart + 2ms);
    CHECK(session.arq().stats().messages_sent == 0);
    session.attach(*streams[3], "a:1", kStart + 3ms);
    session.pump(kStart + 3ms);
    CHECK(session.arq().stats().messages_sent == kBurst);
    for (const auto& stream : streams) CHECK(stream->pending_output() >= kBurst / 4 * 1024);  // a quarter each
  }
  SECTION("one stream does not come: the burst goes on the others once the quarter round trip is over") {
    session.pump(kStart + 99ms);
    CHECK(session.arq().stats().messages_sent == 0);
    session.pump(kStart + 100ms);
    CHECK(session.arq().stats().messages_sent == kBurst);
    CHECK(streams[3]->pending_output() == 0);
    CHECK(streams[0]->pending_output() > 0);
  }
  SECTION("later bursts do not wait, even while a stream is down") {
    session.pump(kStart + 100ms);
    REQUIRE(session.arq().stats().messages_sent == kBurst);
    session.arq().submit(ArqPayload(1024 + kMessageTrailerSize));
    CHECK(session.next_deadline(kStart + 101ms) == kStart + 101ms);
    session.pump(kStart + 101ms);
    CHECK(session.arq().stats().messages_sent == kBurst + 1);
  }
}

TEST_CASE("session: with the split by size a new session's first large message waits for its stream") {
  Config config = one_stream_config();
  config.streams = 2;  // LONGPIPE_SMALL_MESSAGE's default: small on stream 0, large on stream 1
  Session session("b:1", arq_config_from(config), config, kStart);
  session.allow_dialling();
  const Session::TimeoutActions actions = session.handle_timeout(kStart, false);
  REQUIRE(actions.dial.size() == 2);
  auto small = dialled(0, kStart);
  auto large = dialled(1, kStart);
  session.streams().add_attempt(0, small.get());
  session.streams().add_attempt(1, large.get());
  session.arq().submit(ArqPayload((1u << 20) + kMessageTrailerSize));
  session.arq().submit(ArqPayload(100));
  session.attach(*small, "a:1", kStart);
  session.pump(kStart);
  CHECK(session.arq().stats().messages_sent == 0);  // not on the small-message stream, ahead of the small one
  session.attach(*large, "a:1", kStart + 1ms);
  session.pump(kStart + 1ms);
  CHECK(session.arq().stats().messages_sent == 1);
  CHECK(large->pending_output() >= (1u << 20));
  CHECK(session.next_deadline(kStart + 1ms) == kStart + 1ms);  // the small one goes next, on its stream
  session.pump(kStart + 1ms);
  CHECK(session.arq().stats().messages_sent == 2);
  CHECK(small->pending_output() > 0);
  CHECK(small->pending_output() < 1024);
}

namespace {

// A new session with LONGPIPE_STREAMS=2 and `spill` spill streams, all up (dialled together).
struct SpillingSession {
  explicit SpillingSession(std::size_t spill) : config(make_config(spill)), session("b:1", arq_config_from(config), config, kStart) {
    session.allow_dialling();
    const Session::TimeoutActions actions = session.handle_timeout(kStart, false);
    for (std::size_t slot : actions.dial) {
      streams.push_back(dialled(slot, kStart));
      session.streams().add_attempt(slot, streams.back().get());
    }
    for (auto& stream : streams) session.attach(*stream, "a:1", kStart);
  }
  static Config make_config(std::size_t spill) {
    Config config = one_stream_config();
    config.streams = 2;
    config.spill_streams = spill;
    config.carrier = CarrierChoice::kTcp;  // an auto session's spill streams wait for the endpoint's decision
    return config;
  }
  Connection& stream(std::size_t slot) {
    for (auto& s : streams) {
      if (s->stream == slot) return *s;
    }
    FAIL("no stream " << slot);
    throw std::logic_error("unreachable");
  }
  Config config;
  Session session;
  std::vector<std::unique_ptr<Connection>> streams;
};

// TCP_INFO of a stream: `cwnd` segments of 1448 bytes, `in_flight` of them unacknowledged.
StreamWindow fake_window(std::size_t cwnd, std::size_t in_flight) { return StreamWindow{true, cwnd * 1448, in_flight * 1448, 0}; }

}  // namespace

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

namespace {

// A TCP link as the endpoint sees it with TCP Fast Open: whether HELLO leaves in the SYN, whether
// the peer's host took the SYN's data, and the kernel's smallest RTT sample. Moves no bytes.
class FastOpenLink : public CarrierLink {
 public:
  FastOpenLink(bool in_syn, bool accepted, std::uint32_t min_rtt_us)
      : in_syn_(in_syn), accepted_(accepted), min_rtt_us_(min_rtt_us) {}
  int poll_fd() const override { return -1; }
  std::string take_connect_error() override { return ""; }
  IoStatus write(std::span<const std::byte>, bool, std::size_t& written, std::string&) override {
    written = 0;
    return IoStatus::kOk;
  }
  IoStatus read(FrameReader&, std::size_t, std::size_t& bytes_read, std::string&) override {
    bytes_read = 0;
    return IoStatus::kOk;
  }
  void after_read() override {}
  void use_stream(std::size_t) override {}
  void abort_on_close() override {}
  const SocketTuning& tuning() const override { return tuning_; }
  TcpWindowInfo window_info() const override { return {}; }
  LinkPathInfo path_info() const override {
    LinkPathInfo info;
    info.valid = true;
    info.min_rtt_us = min_rtt_us_;
    return info;
  }
  bool first_write_in_syn() const override { return in_syn_; }
  FastOpenResult fast_open() const override { return {in_syn_, accepted_}; }

 private:
  bool in_syn_, accepted_;
  std::uint32_t min_rtt_us_;
  SocketTuning tuning_;
};

// Moves what `from` has written so far into `to`'s reader and lets `to`'s endpoint read it.
void deliver(Connection& from, Endpoint& to_endpoint, Connection& to, Clock::time_point now) {
  const auto bytes = from.unsent();
  auto area = to.reader().write_area(bytes.size());
  std::memcpy(area.data(), bytes.data(), bytes.size());
  to.reader().commit(bytes.size());
  from.consume(bytes.size());
  to_endpoint.on_read(to, IoStatus::kOk, "", now);
}

// Datagrams one session sealed, arriving at another (emptied): how many it opened.
std::size_t open_at(Session& to, std::deque<std::vector<std::byte>>& datagrams, Clock::time_point now) {
  std::size_t opened = 0;
  for (auto& datagram : datagrams) {
    std::string why;
    if (to.datagram()->on_datagram(to.arq(), datagram, 0, now, why) == DatagramChannel::Verdict::kAccepted) ++opened;
  }
  datagrams.clear();
  return opened;
}

}  // namespace

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
