// A session's streams on a fake clock: a burst beyond a stream's high-water mark, several probes
// of a silent path at once, a redial's single attempt, and a new session's first DATA waiting for
// the streams dialled with it.
#include "session_test_support.h"

using namespace lp;
using namespace lp::session_test;
using namespace std::chrono_literals;

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
