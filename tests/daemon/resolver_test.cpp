// Name lookups off the gateway's loop (shell/resolver.h): a lookup that hangs holds up neither the
// caller nor other lookups; and two gateways on localhost, the far one's lookup of an OPEN's host
// name stuck, forward another stream meanwhile and dial the stuck one once its name resolves.
#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "config/gateway_config.h"
#include "shell/gateway.h"
#include "shell/resolver.h"

using namespace lpd;
using namespace std::chrono_literals;

namespace {

// A gate a lookup waits at until the test opens it. Shared: a worker may outlive the Resolver.
struct Gate {
  std::mutex mutex;
  std::condition_variable opened_cv;
  bool opened = false;
  std::atomic<bool> entered{false};
  void open() {
    std::lock_guard lock(mutex);
    opened = true;
    opened_cv.notify_all();
  }
  void wait() {
    entered = true;
    std::unique_lock lock(mutex);
    opened_cv.wait(lock, [&] { return opened; });
  }
};

// "stuck.test" waits at the gate, then resolves to 127.0.0.1; every other name to 127.0.0.1 at once.
Resolver::Lookup gated_lookup(std::shared_ptr<Gate> gate) {
  return [gate](const HostPort& where) {
    if (where.host == "stuck.test") gate->wait();
    return *numeric_address(HostPort{"127.0.0.1", where.port});
  };
}

// The results of `resolver` once its descriptor says so, waiting at most 5 s.
std::vector<std::pair<std::uint64_t, Resolved>> next_results(Resolver& resolver) {
  pollfd entry{resolver.event_fd(), POLLIN, 0};
  if (::poll(&entry, 1, 5000) != 1) return {};
  return resolver.take_results();
}

}  // namespace

TEST_CASE("numeric addresses need no lookup; names do") {
  CHECK(numeric_address(HostPort{"127.0.0.1", 80})->address.ss_family == AF_INET);
  CHECK(numeric_address(HostPort{"::1", 80})->address.ss_family == AF_INET6);
  CHECK_FALSE(numeric_address(HostPort{"localhost", 80}));
  CHECK(system_lookup(HostPort{"localhost", 80}).length > 0);  // /etc/hosts: no network
}

TEST_CASE("a lookup that hangs holds up neither the caller nor the next lookups") {
  auto gate = std::make_shared<Gate>();
  auto resolver = std::make_unique<Resolver>(gated_lookup(gate));
  resolver->resolve(1, HostPort{"stuck.test", 7});
  for (int i = 0; i < 500 && !gate->entered; ++i) std::this_thread::sleep_for(10ms);
  REQUIRE(gate->entered);  // its lookup hangs from here on
  resolver->resolve(2, HostPort{"quick.test", 8});  // returns at once: nothing here waits
  const auto results = next_results(*resolver);
  REQUIRE(results.size() == 1);
  CHECK(results[0].first == 2);
  CHECK(results[0].second.length > 0);
  SECTION("the stuck one comes back once its lookup ends") {
    gate->open();
    const auto late = next_results(*resolver);
    REQUIRE(late.size() == 1);
    CHECK(late[0].first == 1);
  }
  SECTION("the resolver goes away without waiting for it") {
    resolver.reset();
    CHECK_FALSE(resolver);
    gate->open();  // its worker ends on its own and drops the result
  }
}

namespace {

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

// A TCP echo server on 127.0.0.1 (one thread per connection, all detached; they end with the test).
int start_echo_server() {
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  REQUIRE(::listen(listener, 16) == 0);
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);
  std::thread([listener] {
    for (int conn; (conn = ::accept(listener, nullptr, nullptr)) >= 0;) {
      std::thread([conn] {
        char buffer[4096];
        for (ssize_t n; (n = ::recv(conn, buffer, sizeof buffer, 0)) > 0;) ::send(conn, buffer, static_cast<std::size_t>(n), MSG_NOSIGNAL);
        ::close(conn);
      }).detach();
    }
  }).detach();
  return ntohs(address.sin_port);
}

// A gateway on its own thread, stopped (as by SIGTERM) when the test ends.
struct RunningGateway {
  int stop[2] = {-1, -1};
  std::unique_ptr<Gateway> gateway;
  std::thread thread;
  RunningGateway(const std::string& text, Resolver::Lookup lookup) {
    REQUIRE(::pipe(stop) == 0);
    gateway = std::make_unique<Gateway>(parse_config(text, "test.conf"), "test.conf", std::move(lookup));
    thread = std::thread([this] { gateway->run(stop[0]); });
  }
  ~RunningGateway() {
    signalfd_siginfo info{};
    info.ssi_signo = SIGTERM;
    [[maybe_unused]] auto written = ::write(stop[1], &info, sizeof info);
    thread.join();
    ::close(stop[0]);
    ::close(stop[1]);
  }
};

// A CONNECT through the gateway at `socket_path` (waiting up to 2 s for the socket); the socket
// times out its reads after 10 s, so that nothing here hangs.
int connect_through(const std::string& socket_path, const std::string& target) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, socket_path.c_str(), sizeof address.sun_path - 1);
  for (int i = 0; i < 200 && ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0; ++i) {
    std::this_thread::sleep_for(10ms);
  }
  const timeval limit{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  const std::string request = "LONGPIPE-GATEWAY/1 CONNECT " + target + "\n";
  ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  return fd;
}

// Reads exactly `size` bytes (or fewer, on an error, end or timeout).
std::string read_exactly(int fd, std::size_t size) {
  std::string data;
  char buffer[4096];
  while (data.size() < size) {
    const ssize_t n = ::recv(fd, buffer, std::min(sizeof buffer, size - data.size()), 0);
    if (n <= 0) break;
    data.append(buffer, static_cast<std::size_t>(n));
  }
  return data;
}

}  // namespace

TEST_CASE("a far gateway whose lookup of an OPEN's host hangs forwards another stream meanwhile") {
  std::signal(SIGPIPE, SIG_IGN);
  const std::string dir = "/tmp/lpd-resolve-" + std::to_string(::getpid());
  REQUIRE(::system(("mkdir -p " + dir).c_str()) == 0);
  const std::string key = dir + "/federation.key";
  std::ofstream(key) << "federation key of the resolver test\n";
  ::chmod(key.c_str(), 0600);
  const int port_a = free_port(), port_b = free_port(), echo = start_echo_server();
  auto config = [&](const std::string& site, int listen, const std::string& peer, int peer_port) {
    return "site " + site + "\nsocket " + dir + "/" + site + ".sock\nlisten 127.0.0.1:" + std::to_string(listen) +
           "\nkey-file " + key + "\npeer " + peer + " 127.0.0.1:" + std::to_string(peer_port) +
           "\nengine LONGPIPE_RTT=1\nengine LONGPIPE_PATH_CACHE=off\n";
  };
  auto gate = std::make_shared<Gate>();
  {
    RunningGateway a(config("A", port_a, "B", port_b), system_lookup);
    RunningGateway b(config("B", port_b, "A", port_a), gated_lookup(gate));  // B dials for A's OPENs
    const int stuck = connect_through(dir + "/A.sock", "B/stuck.test:" + std::to_string(echo));
    CHECK(read_exactly(stuck, 3) == "OK\n");
    ::send(stuck, "late", 4, MSG_NOSIGNAL);
    for (int i = 0; i < 1000 && !gate->entered; ++i) std::this_thread::sleep_for(10ms);
    REQUIRE(gate->entered);  // B's lookup for the stuck stream hangs from here on
    const int flowing = connect_through(dir + "/A.sock", "B/127.0.0.1:" + std::to_string(echo));
    const std::string words(100000, 'w');
    ::send(flowing, words.data(), words.size(), MSG_NOSIGNAL);
    CHECK(read_exactly(flowing, 3 + words.size()) == "OK\n" + words);
    gate->open();
    CHECK(read_exactly(stuck, 4) == "late");  // dialled once its name resolved
    ::close(stuck);
    ::close(flowing);
  }
  REQUIRE(::system(("rm -rf " + dir).c_str()) == 0);
}
