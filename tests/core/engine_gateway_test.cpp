// An engine behind a site gateway (LONGPIPE_GATEWAY; docs/engine/gateway.md): endpoints
// "<site>/host:port", the setting's checks, and two engines on loopback, one dialling the other
// through a fake gateway (fake_gateway.h) that relays each CONNECT to its host:port. Messages go
// both ways once and in order, also while the gateway drops every stream or restarts; a refused
// CONNECT fails the peer with the gateway's reason; a peer with another job key refuses our
// handshake and the session fails with that at once; no gateway at the path fails the constructor.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "config.h"
#include "engine.h"
#include "fake_gateway.h"
#include "loopback_engine_config.h"
#include "path/path_cache.h"
#include "wire/host_port.h"

namespace {

using namespace std::chrono_literals;

std::string socket_path(const std::string& name) {
  return "/tmp/lp-gateway-test-" + std::to_string(::getpid()) + "-" + name + ".sock";
}

lp::Config gateway_config(const std::string& gateway) {
  lp::Config config = lp::test::loopback_engine_config("gateway-test-key", 3000ms);
  config.gateway = gateway;
  config.connect_retry_max = 200ms;
  return config;
}

lp::Message numbered(std::uint32_t index) {
  lp::Message m;
  m.tag = static_cast<std::int32_t>(index);
  m.body.resize(static_cast<std::size_t>((index * 37) % 5000));
  for (std::size_t i = 0; i < m.body.size(); ++i) m.body[i] = static_cast<std::byte>((index * 31 + i) & 0xff);
  return m;
}

// Receives messages numbered `next`.. from `engine` until message `count` - 1 arrived or `limit`
// passed; each must be the next one, intact, from `from` (a duplicate or a gap fails). Returns the
// number of the next message expected (`count` once all arrived).
std::uint32_t receive_numbered(lp::Engine& engine, std::uint32_t count, const std::string& from,
                               std::uint32_t next = 0, std::chrono::milliseconds limit = 30000ms) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (next < count && std::chrono::steady_clock::now() < deadline) {
    auto message = engine.try_receive();
    if (!message) {
      engine.wait_receive(50ms);
      continue;
    }
    REQUIRE(message->peer_endpoint == from);
    REQUIRE(message->tag == static_cast<std::int32_t>(next));
    REQUIRE(message->body == numbered(next).body);
    ++next;
  }
  return next;
}

// Sends `count` numbered messages from `engine` to `peer`, calling `during(i)` before each.
template <typename During>
void send_numbered(lp::Engine& engine, const std::string& peer, std::uint32_t count, During during) {
  for (std::uint32_t i = 0; i < count; ++i) {
    during(i);
    engine.send(peer, numbered(i));
  }
}

}  // namespace

TEST_CASE("endpoints behind a gateway: <site>/host:port") {
  const lp::HostPort behind = lp::parse_host_port("site-B_2/10.0.0.7:7447", true);
  CHECK(behind.site == "site-B_2");
  CHECK(behind.host == "10.0.0.7");
  CHECK(behind.port == 7447);
  const lp::HostPort v6 = lp::parse_host_port("A/[::1]:80", true);
  CHECK(v6.site == "A");
  CHECK(v6.host == "::1");
  CHECK(lp::parse_host_port("host:1", true).site.empty());
  CHECK(lp::site_of_endpoint("A/host:1") == "A");
  CHECK(lp::site_of_endpoint("host:1").empty());
  CHECK_THROWS_AS(lp::parse_host_port("/host:1", true), std::invalid_argument);
  CHECK_THROWS_AS(lp::parse_host_port("a.b/host:1", true), std::invalid_argument);
  CHECK_THROWS_AS(lp::parse_host_port(std::string(33, 's') + "/host:1", true), std::invalid_argument);
  CHECK_THROWS_AS(lp::parse_host_port("A/host", true), std::invalid_argument);
  CHECK(lp::valid_site_name(std::string(32, 's')));
  // Through a gateway the process sees only its hop to the gateway: no warm-start entry.
  CHECK(lp::path_cache_key("10.0.0.1", "A/host:1").empty());
  CHECK(lp::path_cache_key("", "A/host:1").empty());
}

TEST_CASE("LONGPIPE_GATEWAY is checked") {
  using Variables = std::map<std::string, std::string>;
  CHECK(lp::Config::from_variables({{"LONGPIPE_GATEWAY", "/run/longpipe/A.sock"}}).gateway == "/run/longpipe/A.sock");
  CHECK(lp::Config::from_variables({}).gateway.empty());
  CHECK_THROWS_WITH(lp::Config::from_variables(Variables{{"LONGPIPE_GATEWAY", "A.sock"}}),
                    Catch::Contains("LONGPIPE_GATEWAY='A.sock' is invalid"));
  CHECK_THROWS_AS(lp::Config::from_variables(Variables{{"LONGPIPE_GATEWAY", "/" + std::string(107, 'x')}}),
                  lp::ConfigError);
  CHECK_THROWS_WITH(
      lp::Config::from_variables(Variables{{"LONGPIPE_GATEWAY", "/run/A.sock"}, {"LONGPIPE_CARRIER", "udp"}}),
      Catch::Contains("LONGPIPE_CARRIER=udp with LONGPIPE_GATEWAY"));
  CHECK(lp::Config::from_variables({{"LONGPIPE_GATEWAY", "/run/A.sock"}, {"LONGPIPE_CARRIER", "auto"}}).gateway ==
        "/run/A.sock");
}

TEST_CASE("no gateway at LONGPIPE_GATEWAY: the engine's constructor says so") {
  const std::string path = socket_path("missing");
  ::unlink(path.c_str());
  try {
    lp::Engine engine(gateway_config(path));
    FAIL("the engine started without its gateway");
  } catch (const std::exception& e) {
    CHECK_THAT(e.what(), Catch::Contains("LONGPIPE_GATEWAY=" + path));
  }
  CHECK_THROWS_WITH(lp::Engine::gateway_site(gateway_config(path)), Catch::Contains("LONGPIPE_GATEWAY"));
}

TEST_CASE("through a gateway, messages go both ways once and in order") {
  const std::string path = socket_path("both-ways");
  lp::test::FakeGateway gateway(path, "A", {"A", "B"});
  lp::Engine a(gateway_config(path));
  lp::Engine b(lp::test::loopback_engine_config("gateway-test-key", 3000ms));
  REQUIRE(a.local_endpoint().rfind("A/127.0.0.1:", 0) == 0);
  CHECK(lp::Engine::gateway_site(gateway_config(path)) == "A");
  CHECK(b.local_endpoint().find('/') == std::string::npos);
  const std::string b_behind = "B/" + b.local_endpoint();  // reached through the gateway
  constexpr std::uint32_t kCount = 1500;
  std::thread sender([&] { send_numbered(a, b_behind, kCount, [](std::uint32_t) {}); });
  auto first = lp::test::next_message(b);
  REQUIRE(first);
  CHECK(first->peer_endpoint == a.local_endpoint());
  CHECK(first->tag == 0);
  // b answers on the streams a opened through the gateway: b itself cannot dial "A/...".
  std::thread answer([&] { send_numbered(b, a.local_endpoint(), kCount, [](std::uint32_t) {}); });
  const std::uint32_t at_b = receive_numbered(b, kCount, a.local_endpoint(), 1);
  INFO("a: " << a.stats_json() << "\nb: " << b.stats_json());
  CHECK(at_b == kCount);
  CHECK(receive_numbered(a, kCount, b_behind) == kCount);
  sender.join();
  answer.join();
  CHECK(a.flush(10s));
  CHECK(b.flush(10s));
  // The session's two streams through the gateway and no spill stream: exactly 2 in a clean run,
  // one more for a spare control stream, and one more per probe when a scheduling stall (a loaded
  // sanitizer build) made the path look silent.
  CHECK(lp::test::stats_counter(a, "spill_streams") == 0);
  CHECK(gateway.connects() >= 2);
  CHECK(gateway.connects() <= 3 + lp::test::stats_counter(a, "path_probes"));
  CHECK(a.take_peer_failures().empty());
  CHECK(b.take_peer_failures().empty());
  CHECK_THAT(a.stats_json(), Catch::Contains("LONGPIPE_CARRIER: tcp through LONGPIPE_GATEWAY"));
}

TEST_CASE("a gateway that drops every stream or restarts mid-stream loses and duplicates nothing") {
  const std::string path = socket_path("restart");
  lp::test::FakeGateway gateway(path, "A", {"A", "B"});
  lp::Engine a(gateway_config(path));
  lp::Engine b(lp::test::loopback_engine_config("gateway-test-key", 3000ms));
  const std::string b_behind = "B/" + b.local_endpoint();
  constexpr std::uint32_t kCount = 6000;
  // a -> b while the gateway drops its streams twice and restarts once (its socket gone 300 ms).
  std::thread sender([&] {
    send_numbered(a, b_behind, kCount, [&](std::uint32_t i) {
      if (i == 1500 || i == 3000) gateway.close_all();
      if (i == 4500) gateway.restart(300ms);
      if (i % 500 == 0) std::this_thread::sleep_for(20ms);  // spread the sends over the faults
    });
  });
  auto first = lp::test::next_message(b);
  REQUIRE(first);
  REQUIRE(first->tag == 0);
  // b -> a on the streams a dials, through the same faults.
  std::thread answer([&] {
    send_numbered(b, a.local_endpoint(), kCount, [](std::uint32_t i) {
      if (i % 500 == 0) std::this_thread::sleep_for(20ms);
    });
  });
  const std::uint32_t at_b = receive_numbered(b, kCount, a.local_endpoint(), 1);
  INFO("a: " << a.stats_json() << "\nb: " << b.stats_json());
  CHECK(at_b == kCount);
  CHECK(receive_numbered(a, kCount, b_behind) == kCount);
  sender.join();
  answer.join();
  CHECK(a.flush(10s));
  CHECK(b.flush(10s));
  CHECK(gateway.connects() > 2);  // redialled through the gateway after each fault
  // Nothing more arrives: a re-sent message is never delivered twice.
  std::this_thread::sleep_for(300ms);
  CHECK_FALSE(a.try_receive());
  CHECK_FALSE(b.try_receive());
  CHECK(a.take_peer_failures().empty());
  CHECK(b.take_peer_failures().empty());
}

TEST_CASE("a CONNECT the gateway refuses fails the peer with the gateway's reason") {
  const std::string path = socket_path("refused");
  lp::test::FakeGateway gateway(path, "A", {"A"});
  lp::Config config = gateway_config(path);
  config.dead_peer_timeout = 800ms;
  lp::Engine a(config);
  a.send("Z/127.0.0.1:9", numbered(0));
  const auto failures = lp::test::next_failures(a, 15s);
  REQUIRE(failures.size() == 1);
  CHECK(failures[0].peer_endpoint == "Z/127.0.0.1:9");
  CHECK_THAT(failures[0].reason, Catch::Contains("refused by the gateway") && Catch::Contains("unknown site"));
  CHECK(failures[0].messages_lost == 1);
  CHECK(gateway.refusals() > 0);
  CHECK_THROWS_AS(a.send("Z/127.0.0.1:9", numbered(1)), lp::PeerFailed);
}

TEST_CASE("a peer with another job key refuses us through the gateway: a clear failure, long before LONGPIPE_DEAD_PEER_MS") {
  const std::string path = socket_path("other-key");
  lp::test::FakeGateway gateway(path, "A", {"A", "B"});
  lp::Config config = gateway_config(path);
  config.dead_peer_timeout = 60000ms;  // were the refusals only a host refusing, this would be the wait
  lp::Engine a(config);
  lp::Engine b(lp::test::loopback_engine_config("another job's key", 3000ms));
  const std::string b_behind = "B/" + b.local_endpoint();
  a.send(b_behind, numbered(0));
  const auto failures = lp::test::next_failures(a, 20s);  // a third of LONGPIPE_DEAD_PEER_MS
  REQUIRE(failures.size() == 1);
  CHECK(failures[0].peer_endpoint == b_behind);
  CHECK_THAT(failures[0].reason, Catch::StartsWith("the peer refused our handshake") && Catch::Contains("LONGPIPE_KEY") &&
                                     Catch::Contains("authentication failed"));
  CHECK(gateway.connects() >= 3);
  CHECK_FALSE(b.try_receive().has_value());
  CHECK_THROWS_AS(a.send(b_behind, numbered(1)), lp::PeerFailed);
}

TEST_CASE("an engine without a gateway does not dial a peer behind one, and says why") {
  lp::Config config = lp::test::loopback_engine_config("gateway-test-key", 800ms);
  config.silent_path_timeout = 1500ms;
  lp::Engine b(config);
  b.send("A/127.0.0.1:9", numbered(0));
  const auto failures = lp::test::next_failures(b, 15s);
  REQUIRE(failures.size() == 1);
  CHECK_THAT(failures[0].reason, Catch::Contains("behind the gateway of site A"));
}
