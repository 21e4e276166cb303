// Wake-ups of the progress thread (one eventfd signal per burst, SCHED_BATCH scheduling): no
// message is left waiting whether it is sent while the thread is busy, just as it finishes, or
// long after it went to sleep; an idle engine really blocks.
#include <catch2/catch.hpp>

#include <time.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>

#include "engine.h"
#include "loopback_engine_config.h"

namespace {

using namespace std::chrono_literals;

lp::Config loopback_config() { return lp::test::loopback_engine_config("wakeup-test-key", 5000ms); }

lp::Message tagged(std::int32_t tag) {
  lp::Message message;
  message.tag = tag;
  message.body.assign(16, static_cast<std::byte>(tag & 0xff));
  return message;
}

// The next message on `engine`, waiting up to `limit`.

double process_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
}

}  // namespace

TEST_CASE("requests and replies separated by pauses around the poll window all arrive, in order") {
  lp::Engine client(loopback_config());
  lp::Engine server(loopback_config());
  // Pauses from none to longer than a scheduler tick, so that a message reaches each progress
  // thread while it is busy, as it goes to sleep, and while it sleeps.
  const std::chrono::microseconds pauses[] = {0us, 10us, 45us, 60us, 200us, 3000us};
  std::int32_t tag = 0;
  for (int round = 0; round < 20; ++round) {
    for (const auto pause : pauses) {
      std::this_thread::sleep_for(pause);
      client.send(server.local_endpoint(), tagged(tag));
      auto request = lp::test::next_message(server);
      REQUIRE(request);
      REQUIRE(request->tag == tag);
      server.send(client.local_endpoint(), tagged(-tag - 1));
      auto reply = lp::test::next_message(client);
      REQUIRE(reply);
      REQUIRE(reply->tag == -tag - 1);
      ++tag;
    }
  }
  CHECK(!client.try_receive());
  CHECK(!server.try_receive());
}

TEST_CASE("a burst is delivered completely after the engines have gone idle") {
  lp::Engine a(loopback_config());
  lp::Engine b(loopback_config());
  a.send(b.local_endpoint(), tagged(-1));
  REQUIRE(lp::test::next_message(b));
  std::this_thread::sleep_for(100ms);  // both progress threads are blocked by now
  constexpr std::int32_t kBurst = 500;
  for (std::int32_t i = 0; i < kBurst; ++i) a.send(b.local_endpoint(), tagged(i));
  for (std::int32_t i = 0; i < kBurst; ++i) {
    auto message = lp::test::next_message(b);
    REQUIRE(message);
    REQUIRE(message->tag == i);
  }
  REQUIRE(a.flush(5000ms));
}

TEST_CASE("the progress thread reports its scheduling and placement") {
  lp::Engine engine(loopback_config());
  // The thread fills this in as it starts: wait for it.
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  std::string stats = engine.stats_json();
  while (stats.find("\"progress_thread\":\"\"") != std::string::npos && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
    stats = engine.stats_json();
  }
  INFO(stats);
  CHECK(stats.find("not pinned (LONGPIPE_PIN=off); SCHED_BATCH") != std::string::npos);
}

TEST_CASE("an idle engine blocks instead of polling on") {
  lp::Engine a(loopback_config());
  lp::Engine b(loopback_config());
  for (std::int32_t i = 0; i < 200; ++i) a.send(b.local_endpoint(), tagged(i));
  for (std::int32_t i = 0; i < 200; ++i) REQUIRE(lp::test::next_message(b));
  REQUIRE(a.flush(5000ms));
  // Connected and idle (keep-alives every 200 ms): two progress threads that kept polling would
  // use about a second of CPU in this half second; blocked, they use almost none.
  const double cpu_before = process_cpu_seconds();
  const auto wall_before = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(500ms);
  const double cpu_used = process_cpu_seconds() - cpu_before;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_before).count();
  INFO("CPU " << cpu_used << " s in " << wall << " s of idleness");
  CHECK(cpu_used < 0.2 * wall);
}
