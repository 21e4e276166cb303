// A session on a fake clock, without sockets: redial back-off, dead-peer detection, silent paths
// (probes, suspect streams), goodbye, keep-alives, the reconnect counter and the one next deadline.
// The other session and endpoint cases are in session_test_*.cpp, one binary.
#include "session_test_support.h"

using namespace lp;
using namespace lp::session_test;
using namespace std::chrono_literals;

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
