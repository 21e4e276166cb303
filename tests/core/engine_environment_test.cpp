// The progress thread never reads the process environment. The environment is not thread-safe:
// getenv in one thread while the application calls setenv in another reads freed memory. PVM's
// front end sets PVM_EXPORT in pvm_spawn right after its engine started, while the progress thread
// read the environment inside hwloc (placement): a crash in getenv (CI, about 1 run in 30).
//
// This test binary defines getenv and secure_getenv itself: the executable's definitions come
// before libc's for every library it loads (hwloc, OpenSSL, libstdc++), so each read is seen and
// its thread noted. (glibc's own internal reads, e.g. inside getaddrinfo, are not seen.)
#include <catch2/catch.hpp>

#include <sys/auxv.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "engine.h"
#include "loopback_engine_config.h"

extern char** environ;

namespace {

// Set by the test's own thread before any engine exists; reads on other threads are noted.
std::atomic<bool> g_watching{false};
std::thread::id g_application_thread;
std::atomic<int> g_reads_elsewhere{0};
std::mutex g_first_read_mutex;
std::string g_first_read_elsewhere;

char* look_up(const char* name) {
  if (g_watching.load() && std::this_thread::get_id() != g_application_thread) {
    if (g_reads_elsewhere.fetch_add(1) == 0) {
      std::lock_guard lock(g_first_read_mutex);
      g_first_read_elsewhere = name;
    }
  }
  const std::size_t length = std::strlen(name);
  for (char** variable = environ; variable != nullptr && *variable != nullptr; ++variable) {
    if (std::strncmp(*variable, name, length) == 0 && (*variable)[length] == '=') return *variable + length + 1;
  }
  return nullptr;
}

}  // namespace

extern "C" char* getenv(const char* name) { return look_up(name); }
extern "C" char* secure_getenv(const char* name) { return getauxval(AT_SECURE) != 0 ? nullptr : look_up(name); }

using namespace std::chrono_literals;

TEST_CASE("the progress threads read no environment while they start, pin, shake hands and deliver") {
  g_application_thread = std::this_thread::get_id();
  g_watching = true;
  {
    lp::Config config = lp::test::loopback_engine_config("environment-test-key", 5000ms);
    config.pin = {lp::PinPolicy::Mode::kAuto, -1};  // auto: the topology is read
    lp::Engine client(config);
    lp::Engine server(config);
    lp::Message message;
    message.tag = 7;
    message.body.assign(100000, std::byte{0x5a});
    client.send(server.local_endpoint(), message);
    auto delivered = lp::test::next_message(server);
    REQUIRE(delivered);
    CHECK(delivered->tag == 7);
    CHECK(delivered->body.size() == 100000);
    server.send(client.local_endpoint(), std::move(*delivered));
    REQUIRE(lp::test::next_message(client));
  }  // the engines stop here: their threads' last turns are watched too
  g_watching = false;
  INFO("first variable read on a progress thread: " << g_first_read_elsewhere);
  CHECK(g_reads_elsewhere.load() == 0);
}
