// The engine end to end on loopback: two engines in one process exchange messages over real
// authenticated TCP sessions. Checks delivery, order, no loss, no duplicates, and clear errors.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "engine.h"
#include "loopback_engine_config.h"
#include "raw_peer.h"

namespace {

using namespace std::chrono_literals;

lp::Config loopback_config(const std::string& key = "test-key") {
  return lp::test::loopback_engine_config(key, 2000ms);
}

lp::Message numbered(std::uint32_t index, std::size_t size) {
  lp::Message m;
  m.source = 7;
  m.destination = 9;
  m.tag = static_cast<std::int32_t>(index);
  m.context = 3;
  m.body.resize(size);
  for (std::size_t i = 0; i < size; ++i) m.body[i] = static_cast<std::byte>((index * 31 + i) & 0xff);
  return m;
}

// Receives `count` messages from `engine`, checking order and content; returns how many arrived.
std::size_t receive_in_order(lp::Engine& engine, std::uint32_t count, std::size_t size,
                             std::chrono::milliseconds limit = 20000ms) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::uint32_t next = 0;
  while (next < count && std::chrono::steady_clock::now() < deadline) {
    auto message = engine.try_receive();
    if (!message) {
      engine.wait_receive(100ms);
      continue;
    }
    REQUIRE(message->tag == static_cast<std::int32_t>(next));
    REQUIRE(message->source == 7);
    REQUIRE(message->destination == 9);
    REQUIRE(message->context == 3);
    REQUIRE(message->body == numbered(next, size).body);
    ++next;
  }
  return next;
}

}  // namespace

TEST_CASE("messages arrive once, in order, with header and body intact") {
  lp::Engine a(loopback_config());
  lp::Engine b(loopback_config());
  constexpr std::uint32_t kCount = 2000;
  for (std::uint32_t i = 0; i < kCount; ++i) a.send(b.local_endpoint(), numbered(i, i % 300));
  std::uint32_t next = 0;
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (next < kCount && std::chrono::steady_clock::now() < deadline) {
    if (auto m = b.try_receive()) {
      REQUIRE(m->tag == static_cast<std::int32_t>(next));
      REQUIRE(m->body == numbered(next, next % 300).body);
      REQUIRE(m->peer_endpoint == a.local_endpoint());
      ++next;
    } else {
      b.wait_receive(100ms);
    }
  }
  CHECK(next == kCount);
  CHECK(a.flush(5s));
  CHECK_FALSE(b.try_receive().has_value());  // nothing duplicated
}

TEST_CASE("both directions and large messages") {
  lp::Config config = loopback_config();
  config.streams = GENERATE(1, 4);
  lp::Engine a(config);
  lp::Engine b(config);
  constexpr std::size_t kSize = 1u << 20;
  for (std::uint32_t i = 0; i < 20; ++i) a.send(b.local_endpoint(), numbered(i, kSize));
  for (std::uint32_t i = 0; i < 20; ++i) b.send(a.local_endpoint(), numbered(i, 100));
  CHECK(receive_in_order(b, 20, kSize) == 20);
  CHECK(receive_in_order(a, 20, 100) == 20);
}

TEST_CASE("with the spill streams up, messages arrive once, in order, both ways") {
  // Whether a frame spills depends on TCP_INFO at that moment; on loopback the windows hardly ever
  // fill (engine_itest.sh spill shows spilling across the emulated link). Here: the spill streams
  // come up with the session, the peer holds them, and they are reported apart from the streams.
  lp::Engine a(loopback_config());
  lp::Engine b(loopback_config());
  constexpr std::uint32_t kCount = 200;
  constexpr std::size_t kSize = 200 * 1024;
  for (std::uint32_t i = 0; i < kCount; ++i) a.send(b.local_endpoint(), numbered(i, kSize));
  for (std::uint32_t i = 0; i < kCount; ++i) b.send(a.local_endpoint(), numbered(i, 100));
  CHECK(receive_in_order(b, kCount, kSize) == kCount);
  CHECK(receive_in_order(a, kCount, 100) == kCount);
  CHECK(a.flush(5s));
  CHECK_FALSE(b.try_receive().has_value());  // nothing duplicated
  for (const lp::Engine* engine : {&a, &b}) {
    const std::string stats = engine->stats_json();
    INFO(stats);
    CHECK(stats.find("\"spill_streams\":8") != std::string::npos);
    CHECK(stats.find("\"streams\":2,") != std::string::npos);
  }
}

TEST_CASE("a connection reset mid-stream loses and duplicates nothing") {
  lp::Config config = loopback_config();
  config.streams = GENERATE(1, 3);  // also with messages striped over parallel connections
  lp::Engine a(config);
  lp::Engine b(config);
  constexpr std::uint32_t kCount = 20000;
  std::thread sender([&] {
    for (std::uint32_t i = 0; i < kCount; ++i) {
      a.send(b.local_endpoint(), numbered(i, 512));
      if (i % 4000 == 2000) a.reset_connections_for_testing();
      if (i % 4000 == 3000) b.reset_connections_for_testing();
    }
  });
  CHECK(receive_in_order(b, kCount, 512, 60000ms) == kCount);
  sender.join();
  CHECK(a.flush(5s));
  CHECK_FALSE(b.try_receive().has_value());
  CHECK(a.stats_json().find("\"reconnects\":0") == std::string::npos);
}

TEST_CASE("a peer with the wrong key is refused, counted and reported") {
  lp::Engine server(loopback_config("right key"));
  lp::Engine intruder(loopback_config("wrong key"));
  intruder.send(server.local_endpoint(), numbered(0, 10));
  const std::vector<lp::PeerFailure> failures = lp::test::next_failures(intruder);
  REQUIRE(failures.size() == 1);
  CHECK(failures[0].reason.find("authentication") != std::string::npos);
  CHECK(failures[0].reason.find("the peer refused our handshake") == 0);  // a few refusals, not LONGPIPE_DEAD_PEER_MS
  CHECK_FALSE(server.try_receive().has_value());
  CHECK(server.stats_json().find("\"rejected_connections\":0") == std::string::npos);
  CHECK_THROWS_AS(intruder.send(server.local_endpoint(), numbered(1, 10)), lp::PeerFailed);
}

// A new process at the endpoint of one that exited (an ephemeral listen port handed out again):
// the exiting engine said goodbye, so its identity is gone for good and the newcomer, with its
// own identity, gets a session of its own at once (not refused until LONGPIPE_DEAD_PEER_MS).
namespace {

// Reads one message on `server` and answers it to its sender with tag + 100 (as lp-perf serve does,
// which names the sender's endpoint to the server's engine).
void answer_one(lp::Engine& server) {
  const auto message = lp::test::next_message(server);
  REQUIRE(message.has_value());
  server.send(message->peer_endpoint, numbered(static_cast<std::uint32_t>(message->tag) + 100, 10));
}

// An engine listening at `endpoint`, the one an engine before it had.
lp::Config listening_at(lp::Config config, const std::string& endpoint) {
  config.listen = endpoint;
  return config;
}

}  // namespace

TEST_CASE("a new process at the endpoint of one that said goodbye is served at once") {
  lp::Config config = loopback_config();
  config.carrier = GENERATE(lp::CarrierChoice::kTcp, lp::CarrierChoice::kUdp);
  lp::Engine server(config);
  std::string endpoint;
  {
    lp::Engine first(config);
    endpoint = first.local_endpoint();
    first.send(server.local_endpoint(), numbered(0, 10));
    answer_one(server);
    const auto answer = lp::test::next_message(first);
    REQUIRE(answer.has_value());
    CHECK(answer->tag == 100);
    // Leaves at once, on both carriers: nothing waits for the server to hold the answer
    // acknowledged. On udp the ACK owed is delayed and goes before the goodbye; on tcp it went at
    // once, and the server, busy with the goodbye on the other connections, may write to this one
    // (a re-send) before it reads the ACK: the next case (the goodbye's close).
  }  // acknowledges the answer, then says goodbye
  lp::Engine second(listening_at(config, endpoint));
  REQUIRE(second.local_endpoint() == endpoint);
  second.send(server.local_endpoint(), numbered(1, 10));
  answer_one(server);
  const auto answer = lp::test::next_message(second);
  REQUIRE(answer.has_value());
  CHECK(answer->tag == 101);
  CHECK(server.take_peer_failures().empty());  // the process that left had acknowledged everything
  CHECK(server.stats_json().find("\"sessions_replaced\":1") != std::string::npos);
}

// A peer given up on stays refused (PeerFailed) until the application gives it another chance
// (retry_peer, as the site gateway does): then the next send opens a new session, which carries
// only what was sent after the retry.
TEST_CASE("a peer given up on is refused until retry_peer; then a new session carries new messages") {
  const lp::Config config = lp::test::loopback_engine_config("test-key", 500ms);
  std::string endpoint;
  {
    lp::Engine gone(config);
    endpoint = gone.local_endpoint();
  }  // nothing listens there now: dials are refused
  lp::Engine client(config);
  client.send(endpoint, numbered(90, 10));
  const std::vector<lp::PeerFailure> failures = lp::test::next_failures(client);
  REQUIRE(failures.size() == 1);
  CHECK(failures[0].peer_endpoint == endpoint);
  CHECK(failures[0].messages_lost == 1);
  CHECK_THROWS_AS(client.send(endpoint, numbered(91, 10)), lp::PeerFailed);
  client.retry_peer("127.0.0.1:1");  // not given up on: nothing happens
  lp::Engine back(listening_at(config, endpoint));
  REQUIRE(back.local_endpoint() == endpoint);
  CHECK_THROWS_AS(client.send(endpoint, numbered(92, 10)), lp::PeerFailed);  // still refused
  client.retry_peer(endpoint);
  for (std::uint32_t i = 0; i < 3; ++i) client.send(endpoint, numbered(i, 10));
  CHECK(receive_in_order(back, 3, 10) == 3);  // 0, 1, 2: nothing of the failed session's
  CHECK(client.flush(10000ms));
  CHECK_FALSE(back.try_receive().has_value());
  CHECK(client.take_peer_failures().empty());
}

// The goodbye's close (engine.cpp, drain_after_goodbye): bytes the peer still sends after the
// goodbye are read, not answered with RST. A reset made the peer's next send fail, and its engine
// dropped the connection before it read the ACK queued in front of the goodbye (the case above
// lost that ACK about one run in six under ASan). Deterministic: the peer writes only after it read
// the goodbye, when an engine that closed at once has its socket closed already.
TEST_CASE("an exiting engine reads what its peer still sends after the goodbye: the peer's sends are not reset") {
  auto exiting = std::make_unique<lp::Engine>(loopback_config());
  lp::test::RawPeer peer(exiting->local_endpoint());
  REQUIRE(peer.handshake("test-key", "127.0.0.1:1", lp::test::random_token()) ==
          lp::test::RawPeer::Outcome::kEstablished);
  REQUIRE(peer.send_bytes(peer.sealed_data(0)));
  REQUIRE(lp::test::next_message(*exiting).has_value());
  std::thread leaving([&] { exiting.reset(); });  // returns once the peer closed its end (or the bound)
  std::optional<lp::FrameType> type;
  bool acknowledged = false;
  while ((type = peer.next_frame_type()) && *type != lp::FrameType::kClose) acknowledged |= *type == lp::FrameType::kAck;
  CHECK(type == lp::FrameType::kClose);  // the goodbye
  CHECK(acknowledged);                   // after the ACK of what it received
  CHECK(peer.send_bytes(peer.sealed_keepalive()));  // late bytes: a closed socket answers them with RST
  std::this_thread::sleep_for(200ms);               // a reset would be back long before
  CHECK(peer.send_bytes(peer.sealed_keepalive()));  // not refused: the exiting end still reads
  peer.finish_sending();
  leaving.join();
  CHECK_FALSE(peer.next_frame_type().has_value());  // then its end of the stream
}

TEST_CASE("what was sent to a process that left is reported lost, never delivered to a new process at its endpoint") {
  lp::Engine server(loopback_config());
  std::string endpoint;
  {
    lp::Engine first(loopback_config());
    endpoint = first.local_endpoint();
    first.send(server.local_endpoint(), numbered(0, 10));
    answer_one(server);
    REQUIRE(lp::test::next_message(first).has_value());
  }
  server.send(endpoint, numbered(50, 10));  // nobody there to acknowledge it
  lp::Engine second(listening_at(loopback_config(), endpoint));
  second.send(server.local_endpoint(), numbered(1, 10));
  answer_one(server);
  const auto answer = lp::test::next_message(second);
  REQUIRE(answer.has_value());
  CHECK(answer->tag == 101);  // the answer to its own message, not the one meant for the process before it
  const std::vector<lp::PeerFailure> failures = lp::test::next_failures(server);
  REQUIRE(failures.size() == 1);
  CHECK(failures[0].peer_endpoint == endpoint);
  CHECK(failures[0].messages_lost == 1);
  std::this_thread::sleep_for(300ms);
  CHECK_FALSE(second.try_receive().has_value());
}

TEST_CASE("a message to the engine's own endpoint is delivered locally, in order") {
  lp::Engine a(loopback_config());
  for (std::uint32_t i = 0; i < 3; ++i) a.send(a.local_endpoint(), numbered(i, 5));
  CHECK(receive_in_order(a, 3, 5) == 3);
  CHECK_FALSE(a.try_receive().has_value());
}

TEST_CASE("send validates its arguments") {
  lp::Config config = loopback_config();
  config.max_message = 1000;
  lp::Engine a(config);
  CHECK_THROWS_AS(a.send("no-port", numbered(0, 1)), std::invalid_argument);
  CHECK_THROWS_AS(a.send(a.local_endpoint(), numbered(0, 1001)), std::invalid_argument);
}

TEST_CASE("striped streams deliver in order and all carry traffic") {
  lp::Config config = loopback_config();
  config.streams = 4;
  lp::Engine a(config);
  lp::Engine b(config);
  constexpr std::uint32_t kCount = 5000;
  for (std::uint32_t i = 0; i < kCount; ++i) a.send(b.local_endpoint(), numbered(i, 1000));
  CHECK(receive_in_order(b, kCount, 1000) == kCount);
  CHECK(a.flush(5s));
  const std::string stats = a.stats_json();
  CHECK(stats.find("\"streams\":4") != std::string::npos);
  CHECK(stats.find("\"reconnects\":0") != std::string::npos);
}

TEST_CASE("window-full policies: fail throws, keep-latest keeps only the newest untransmitted") {
  lp::Config config = loopback_config();
  config.window_messages = 2;
  config.window_full = lp::WindowFullPolicy::kFail;
  lp::Engine a(config);
  // No peer listens on this port: nothing is ever acknowledged, so the queue fills.
  const std::string nowhere = "127.0.0.1:1";
  a.send(nowhere, numbered(0, 1));
  a.send(nowhere, numbered(1, 1));
  bool threw = false;
  for (int i = 0; i < 5 && !threw; ++i) {
    try {
      a.send(nowhere, numbered(2, 1));
    } catch (const lp::WindowFull& e) {
      threw = std::string(e.what()).find("full") != std::string::npos;
    }
  }
  CHECK(threw);
}

TEST_CASE("small and large messages on streams of their own stay in one order") {
  lp::Config config = loopback_config();
  config.streams = 3;
  config.congestion = "cubic,bbr";
  config.small_message = 4096;
  config.congestion_fallback.clear();  // keep each stream's choice, so the stats can be checked
  lp::Engine a(config);
  lp::Engine b(config);
  constexpr std::uint32_t kCount = 3000;
  // Sizes alternate irregularly around the threshold, so consecutive messages take different streams.
  auto size_of = [](std::uint32_t i) { return static_cast<std::size_t>((i * 7919u) % 3 == 0 ? 20000 + i : i % 200); };
  for (std::uint32_t i = 0; i < kCount; ++i) a.send(b.local_endpoint(), numbered(i, size_of(i)));
  std::uint32_t next = 0;
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (next < kCount && std::chrono::steady_clock::now() < deadline) {
    if (auto m = b.try_receive()) {
      REQUIRE(m->tag == static_cast<std::int32_t>(next));
      REQUIRE(m->body == numbered(next, size_of(next)).body);
      ++next;
    } else {
      b.wait_receive(100ms);
    }
  }
  CHECK(next == kCount);
  CHECK(a.stats_json().find("\"streams\":3") != std::string::npos);
  std::this_thread::sleep_for(600ms);  // the stats read each stream's TCP state every 500 ms
  CHECK(a.stats_json().find("\"congestion\":\"cubic,bbr,cubic\"") != std::string::npos);
}

namespace {
std::uint64_t dropped_by_policy(const lp::Engine& engine) {
  const std::string stats = engine.stats_json();
  const auto at = stats.find("\"dropped_by_policy\":");
  return at == std::string::npos ? 0 : std::stoull(stats.substr(at + 20));
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}
}  // namespace

TEST_CASE("drop policies never block and discard only untransmitted messages") {
  lp::Config config = loopback_config();
  config.window_messages = 2;
  config.window_full = GENERATE(lp::WindowFullPolicy::kDropOldest, lp::WindowFullPolicy::kKeepLatest);
  lp::Engine a(config);
  const std::string nowhere = "127.0.0.1:1";  // never acknowledges: the window stays full
  for (std::uint32_t i = 0; i < 10; ++i) a.send(nowhere, numbered(i, 8));
  // At most 2 in the ARQ window and 2 queued: at least 6 of 10 were discarded, none sent twice.
  CHECK(dropped_by_policy(a) >= 6);
  CHECK(dropped_by_policy(a) <= 8);
}

TEST_CASE("statistics are written on SIGUSR1 and at exit") {
  const std::string path = "engine_loopback_test.stats.json";
  std::remove(path.c_str());
  lp::Config config = loopback_config();
  config.stats_path = path;
  {
    lp::Engine a(config);
    lp::Engine b(loopback_config());
    a.send(b.local_endpoint(), numbered(0, 10));
    REQUIRE(receive_in_order(b, 1, 10) == 1);
    std::raise(SIGUSR1);
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (read_file(path).find("local_endpoint") == std::string::npos && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(20ms);
    }
    CHECK(read_file(path).find("\"local_endpoint\":\"" + a.local_endpoint()) != std::string::npos);
    std::remove(path.c_str());
  }
  // Written again when the engine went away, with the session's final counters.
  const std::string final_stats = read_file(path);
  CHECK(final_stats.find("\"messages_acked\":1") != std::string::npos);
  std::remove(path.c_str());
}

TEST_CASE("a forked child abandons the engine; the parent's sessions carry on") {
  auto a = std::make_unique<lp::Engine>(loopback_config());
  lp::Engine b(loopback_config());
  a->send(b.local_endpoint(), numbered(0, 10));
  REQUIRE(receive_in_order(b, 1, 10) == 1);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    a->abandon_after_fork();
    a.reset();  // must neither join the parent's thread nor touch its sockets
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  for (std::uint32_t i = 0; i < 100; ++i) a->send(b.local_endpoint(), numbered(i, 100));
  CHECK(receive_in_order(b, 100, 100) == 100);
  CHECK(a->stats_json().find("\"reconnects\":0") != std::string::npos);
}
