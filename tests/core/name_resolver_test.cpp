// Peers' names are looked up off the progress thread (driver/name_resolver.h): a lookup that blocks
// holds neither the resolver's caller nor the other names, nor an engine's other sessions.
#include <catch2/catch.hpp>

#include <poll.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "driver/name_resolver.h"
#include "engine.h"
#include "loopback_engine_config.h"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// A fake name service: "stuck.test" blocks until released; "here.test" is 127.0.0.1; any other
// name does not exist. Shared (a worker may still hold it after the test's resolver is gone).
struct FakeNames {
  std::mutex mutex;
  std::condition_variable released_signal;
  bool released = false;
  std::atomic<int> lookups{0};

  lp::ResolvedName lookup(const lp::HostPort& where) {
    ++lookups;
    if (where.host == "stuck.test") {
      std::unique_lock lock(mutex);
      released_signal.wait(lock, [&] { return released; });
    }
    if (where.host == "here.test" || where.host == "stuck.test") {
      return *lp::numeric_name({"", "127.0.0.1", where.port});
    }
    lp::ResolvedName missing;
    missing.error = "cannot resolve '" + where.host + "': no such name";
    return missing;
  }
  void release() {
    std::lock_guard lock(mutex);
    released = true;
    released_signal.notify_all();
  }
};

lp::NameLookup lookup_of(const std::shared_ptr<FakeNames>& names) {
  return [names](const lp::HostPort& where) { return names->lookup(where); };
}

// Waits (up to 10 s) until the resolver has answers and takes them.
bool await_answers(lp::NameResolver& resolver) {
  pollfd ready{resolver.event_fd(), POLLIN, 0};
  if (::poll(&ready, 1, 10000) != 1) return false;
  return resolver.take_answers(Clock::now());
}

// Releases the fake's blocked lookups however the test ends.
struct ReleaseAtEnd {
  std::shared_ptr<FakeNames> names;
  ~ReleaseAtEnd() { names->release(); }
};

}  // namespace

TEST_CASE("a numeric address needs no lookup") {
  auto names = std::make_shared<FakeNames>();
  lp::NameResolver resolver(lookup_of(names));
  const auto v4 = resolver.find({"", "10.1.2.3", 7000}, Clock::now());
  REQUIRE(v4);
  CHECK(lp::numeric_endpoint(*v4) == "10.1.2.3:7000");
  const auto v6 = resolver.find({"", "::1", 7001}, Clock::now());
  REQUIRE(v6);
  CHECK(lp::numeric_endpoint(*v6) == "[::1]:7001");
  CHECK(names->lookups == 0);
}

TEST_CASE("a lookup that blocks holds neither the caller nor the next names") {
  auto names = std::make_shared<FakeNames>();
  ReleaseAtEnd release{names};
  lp::NameResolver resolver(lookup_of(names));
  const auto started = Clock::now();
  CHECK_FALSE(resolver.find({"", "stuck.test", 7000}, started));  // being looked up: no wait
  CHECK_FALSE(resolver.find({"", "here.test", 7001}, started));
  REQUIRE(await_answers(resolver));  // here.test's, from a second worker, while stuck.test blocks
  const auto here = resolver.find({"", "here.test", 7001}, Clock::now());
  REQUIRE(here);
  CHECK(lp::numeric_endpoint(*here) == "127.0.0.1:7001");
  CHECK_FALSE(resolver.find({"", "stuck.test", 7000}, Clock::now()));  // still in progress, not asked twice

  names->release();
  REQUIRE(await_answers(resolver));
  const auto stuck = resolver.find({"", "stuck.test", 7000}, Clock::now());
  REQUIRE(stuck);
  CHECK(stuck->ok());
  CHECK(names->lookups == 2);  // each name once: the answers are cached
  CHECK(resolver.find({"", "here.test", 7001}, Clock::now()));
  CHECK(names->lookups == 2);
}

TEST_CASE("a name that does not resolve comes back with the reason, and is asked again later") {
  auto names = std::make_shared<FakeNames>();
  lp::NameResolver resolver(lookup_of(names));
  const auto now = Clock::now();
  CHECK_FALSE(resolver.find({"", "nowhere.test", 7000}, now));
  REQUIRE(await_answers(resolver));
  const auto missing = resolver.find({"", "nowhere.test", 7000}, Clock::now());
  REQUIRE(missing);
  CHECK_FALSE(missing->ok());
  CHECK(missing->error.find("no such name") != std::string::npos);
  // After kRetryFailed the failure is no answer any more: the name is looked up again.
  CHECK_FALSE(resolver.find({"", "nowhere.test", 7000}, Clock::now() + lp::NameResolver::kRetryFailed));
  REQUIRE(await_answers(resolver));
  CHECK(names->lookups == 2);
}

TEST_CASE("an engine whose peer's name lookup blocks still serves its other peers") {
  auto names = std::make_shared<FakeNames>();
  ReleaseAtEnd release{names};
  lp::set_name_lookup_for_testing(lookup_of(names));
  struct Restore {
    ~Restore() { lp::set_name_lookup_for_testing(nullptr); }
  } restore;
  auto config = lp::test::loopback_engine_config("name-resolver-test-key", 5000ms);
  lp::Engine client(config);
  lp::Engine near(config);     // reached as here.test
  lp::Engine blocked(config);  // reached as stuck.test
  const auto port_of = [](const lp::Engine& engine) {
    return engine.local_endpoint().substr(engine.local_endpoint().rfind(':') + 1);
  };

  lp::Message first;
  first.tag = 1;
  client.send("stuck.test:" + port_of(blocked), first);  // its dial waits for the name, off the thread
  std::this_thread::sleep_for(50ms);                      // the progress thread has taken it up
  for (std::int32_t tag = 2; tag <= 4; ++tag) {
    lp::Message message;
    message.tag = tag;
    client.send("here.test:" + port_of(near), message);
  }
  for (std::int32_t tag = 2; tag <= 4; ++tag) {
    auto message = lp::test::next_message(near);
    REQUIRE(message);  // the progress thread never waited for stuck.test
    CHECK(message->tag == tag);
  }
  CHECK_FALSE(blocked.try_receive());  // stuck.test's message waits for its name

  names->release();  // the name resolves: its session dials, and its message arrives
  auto late = lp::test::next_message(blocked);
  REQUIRE(late);
  CHECK(late->tag == 1);
}
