// lp-engine-probe: the two ends of the engine's integration tests (tests/core/engine_itest.sh),
// run in the two emulated sites. `receive` verifies what arrives: exactly the numbered messages,
// in order, with their content (a per-message pattern), and nothing more; `send` sends them and
// waits until all are acknowledged, or (--expect-failure) until the engine reports the peer lost
// (and then, with --then-peer, sends them all again to another peer: a restarted process).
// `receive` also reports the longest pause between two arrivals and when the message after it
// arrived (fault tests: how soon traffic resumed after an outage).
// A dial storm: `send --engines N` starts N engines (N endpoints, as N processes would be) that
// all begin at one instant, each sending the numbered messages to the peer; `receive --senders N`
// checks them per sending peer.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <latch>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "engine.h"

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

struct Arguments {
  std::string mode;
  std::string peer;
  std::string listen;
  std::size_t count = 1000;
  std::size_t size = 1024;
  long interval_us = 0;        // pause between sends
  long timeout_s = 60;
  std::string expect_failure;  // text the failure reason must contain
  std::string then_peer;       // after the expected failure, send everything to this peer
  std::size_t pause_after = 0;  // receive: stop taking messages after this many ...
  long pause_ms = 0;            // ... for this long (the application busy elsewhere)
  std::size_t engines = 1;      // send: this many engines at once (a dial storm)
  std::size_t senders = 1;      // receive: from this many peers, each checked on its own
};

[[noreturn]] void usage_error(const std::string& what) {
  std::cerr << "lp-engine-probe: " << what
            << "\nusage: lp-engine-probe receive --listen [HOST]:PORT --count N --size S [--timeout-s T]\n"
               "                               [--pause-after N --pause-ms M] [--senders N]\n"
               "       lp-engine-probe send --peer HOST:PORT --count N --size S [--interval-us U] [--timeout-s T]\n"
               "                            [--engines N]\n"
               "                            [--expect-failure TEXT [--then-peer HOST:PORT]]\n";
  std::exit(2);
}

Arguments parse(int argc, char** argv) {
  if (argc < 2) usage_error("missing mode");
  Arguments a;
  a.mode = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string option = argv[i];
    if (i + 1 >= argc) usage_error(option + " needs a value");
    const std::string value = argv[++i];
    if (option == "--peer") a.peer = value;
    else if (option == "--listen") a.listen = value;
    else if (option == "--count") a.count = std::stoul(value);
    else if (option == "--size") a.size = std::stoul(value);
    else if (option == "--interval-us") a.interval_us = std::stol(value);
    else if (option == "--timeout-s") a.timeout_s = std::stol(value);
    else if (option == "--expect-failure") a.expect_failure = value;
    else if (option == "--then-peer") a.then_peer = value;
    else if (option == "--pause-after") a.pause_after = std::stoul(value);
    else if (option == "--pause-ms") a.pause_ms = std::stol(value);
    else if (option == "--engines") a.engines = std::stoul(value);
    else if (option == "--senders") a.senders = std::stoul(value);
    else usage_error("unknown option " + option);
  }
  return a;
}

std::byte pattern(std::size_t index, std::size_t offset) {
  return static_cast<std::byte>((index * 131 + offset * 7 + (index >> 8)) & 0xff);
}

lp::Message numbered(std::size_t index, std::size_t size) {
  lp::Message m;
  m.tag = static_cast<std::int32_t>(index);
  m.source = static_cast<std::uint32_t>(index ^ 0xa5a5a5a5u);
  m.body.resize(size + index % 7);  // sizes vary a little so frame boundaries move
  for (std::size_t i = 0; i < m.body.size(); ++i) m.body[i] = pattern(index, i);
  return m;
}

long long epoch_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// From --senders N peers: each peer's messages exactly the numbered ones, in order, intact, and
// nothing more.
int receive_from_many(const Arguments& a, lp::Config config) {
  config.listen = a.listen;
  lp::Engine engine(config);
  std::cout << "listening " << engine.local_endpoint() << std::endl;
  const auto deadline = Clock::now() + std::chrono::seconds(a.timeout_s);
  std::map<std::string, std::size_t> next;  // per sending peer
  std::size_t complete = 0;
  while (complete < a.senders && Clock::now() < deadline) {
    auto m = engine.try_receive();
    if (!m) {
      engine.wait_receive(100ms);
      continue;
    }
    std::size_t& index = next[m->peer_endpoint];
    const lp::Message expected = numbered(index, a.size);
    if (next.size() > a.senders || index >= a.count || m->tag != expected.tag || m->source != expected.source ||
        m->body != expected.body) {
      std::cerr << "FAIL: from " << m->peer_endpoint << " message " << index << " expected, got tag " << m->tag
                << ": lost, duplicated, reordered, corrupted or from an unexpected peer" << std::endl;
      return 1;
    }
    if (++index == a.count) ++complete;
  }
  const std::string session_stats = engine.stats_json();
  if (complete < a.senders) {
    std::cerr << "FAIL: " << complete << " of " << a.senders << " senders delivered all " << a.count
              << " messages before the timeout (" << next.size() << " heard from)" << std::endl;
    return 1;
  }
  const auto grace = Clock::now() + 1s;
  while (Clock::now() < grace) {
    if (auto extra = engine.try_receive()) {
      std::cerr << "FAIL: an extra message (tag " << extra->tag << ") from " << extra->peer_endpoint << std::endl;
      return 1;
    }
    engine.wait_receive(100ms);
  }
  std::cout << "OK: " << a.senders << " senders x " << a.count << " messages, each in order, intact, no duplicates"
            << std::endl;
  std::cout << "session_stats " << session_stats << std::endl;
  std::cout << "stats " << engine.stats_json() << std::endl;
  return 0;
}

int receive(const Arguments& a, lp::Config config) {
  if (a.senders > 1) return receive_from_many(a, config);
  config.listen = a.listen;
  lp::Engine engine(config);
  std::cout << "listening " << engine.local_endpoint() << std::endl;
  const auto deadline = Clock::now() + std::chrono::seconds(a.timeout_s);
  std::size_t next = 0;
  std::uint64_t bytes = 0;
  Clock::time_point last_arrival{};
  Clock::duration longest_gap{};
  long long resumed_epoch_ms = 0;  // arrival of the message after the longest gap
  bool paused = false;
  while (next < a.count && Clock::now() < deadline) {
    if (!paused && a.pause_ms > 0 && next == a.pause_after) {
      // The application is busy elsewhere: the receive queue fills and the engine stops reading.
      paused = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(a.pause_ms));
      last_arrival = Clock::now();  // the pause is ours, not the link's
    }
    auto m = engine.try_receive();
    if (!m) {
      engine.wait_receive(100ms);
      continue;
    }
    const auto arrival = Clock::now();
    if (next > 0 && arrival - last_arrival > longest_gap) {
      longest_gap = arrival - last_arrival;
      resumed_epoch_ms = epoch_ms();
    }
    last_arrival = arrival;
    const lp::Message expected = numbered(next, a.size);
    if (m->tag != expected.tag || m->source != expected.source || m->body != expected.body) {
      std::cerr << "FAIL: message " << next << " expected, got tag " << m->tag << " (" << m->body.size()
                << " bytes): lost, duplicated, reordered or corrupted" << std::endl;
      return 1;
    }
    bytes += m->body.size();
    ++next;
  }
  // The session's counters while it is still up (the sender's goodbye may end it before the end).
  const std::string session_stats = engine.stats_json();
  if (next < a.count) {
    std::cerr << "FAIL: " << next << " of " << a.count << " messages arrived before the timeout" << std::endl;
    return 1;
  }
  // Anything more would be a duplicate.
  const auto grace = Clock::now() + 1s;
  while (Clock::now() < grace) {
    if (auto extra = engine.try_receive()) {
      std::cerr << "FAIL: an extra message (tag " << extra->tag << ") after all " << a.count << std::endl;
      return 1;
    }
    engine.wait_receive(100ms);
  }
  std::cout << "OK: " << next << " messages, " << bytes << " bytes, in order, intact, no duplicates" << std::endl;
  std::cout << "longest_gap_ms " << std::chrono::duration_cast<std::chrono::milliseconds>(longest_gap).count()
            << "\nresumed_epoch_ms " << resumed_epoch_ms << std::endl;
  std::cout << "session_stats " << session_stats << std::endl;
  std::cout << "stats " << engine.stats_json() << std::endl;
  return 0;
}

// Sends all of them to `peer`, then waits until every one is acknowledged and no peer failed.
// `report`: print the OK line and the statistics (a storm's engines are reported together).
int send_all_acknowledged(lp::Engine& engine, const Arguments& a, const std::string& peer, Clock::time_point deadline,
                          bool report = true) {
  try {
    for (std::size_t i = 0; i < a.count; ++i) {
      engine.send(peer, numbered(i, a.size));
      if (a.interval_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(a.interval_us));
    }
  } catch (const lp::PeerFailed& e) {
    std::cerr << "FAIL: " << e.what() << std::endl;
    return 1;
  }
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  if (!engine.flush(std::max(left, 0ms))) {
    std::cerr << "FAIL: not everything was acknowledged in time; stats " << engine.stats_json() << std::endl;
    return 1;
  }
  for (const auto& f : engine.take_peer_failures()) {
    std::cerr << "FAIL: peer reported failed: " << f.reason << std::endl;
    return 1;
  }
  if (report) {
    std::cout << "OK: " << a.count << " messages acknowledged by " << peer << std::endl;
    std::cout << "stats " << engine.stats_json() << std::endl;
  }
  return 0;
}

// --engines N: N engines (endpoints, as N fresh processes) constructed first, then all released at
// one instant to send to the same peer (a dial storm); each must get everything acknowledged.
int send_from_many(const Arguments& a, const lp::Config& config) {
  std::vector<std::unique_ptr<lp::Engine>> engines;
  for (std::size_t i = 0; i < a.engines; ++i) engines.push_back(std::make_unique<lp::Engine>(config));
  const auto deadline = Clock::now() + std::chrono::seconds(a.timeout_s);
  std::latch start(static_cast<std::ptrdiff_t>(a.engines));
  std::vector<int> status(a.engines, 1);
  std::vector<long long> flushed_ms(a.engines, -1);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < a.engines; ++i) {
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      const auto begin = Clock::now();
      status[i] = send_all_acknowledged(*engines[i], a, a.peer, deadline, false);
      flushed_ms[i] = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - begin).count();
    });
  }
  for (std::thread& thread : threads) thread.join();
  int failed = 0;
  for (std::size_t i = 0; i < a.engines; ++i) {
    std::cout << "engine " << i << " " << engines[i]->local_endpoint() << " status " << status[i]
              << " acknowledged_after_ms " << flushed_ms[i] << "\nstats " << engines[i]->stats_json() << std::endl;
    failed += status[i] != 0;
  }
  if (failed > 0) {
    std::cerr << "FAIL: " << failed << " of " << a.engines << " engines did not get everything acknowledged"
              << std::endl;
    return 1;
  }
  std::cout << "OK: " << a.engines << " engines x " << a.count << " messages acknowledged by " << a.peer << std::endl;
  return 0;
}

int send(const Arguments& a, const lp::Config& config) {
  if (a.engines > 1) return send_from_many(a, config);
  lp::Engine engine(config);
  const auto deadline = Clock::now() + std::chrono::seconds(a.timeout_s);
  if (a.expect_failure.empty()) return send_all_acknowledged(engine, a, a.peer, deadline);
  try {
    for (std::size_t i = 0; i < a.count; ++i) {
      engine.send(a.peer, numbered(i, a.size));
      if (a.interval_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(a.interval_us));
    }
  } catch (const lp::PeerFailed&) {
    // Reported below, with the reason.
  }
  while (Clock::now() < deadline) {
    for (const auto& f : engine.take_peer_failures()) {
      std::cout << "failure_epoch_ms " << epoch_ms() << "\nreason " << f.reason << "\nlost " << f.messages_lost
                << std::endl;
      if (f.reason.find(a.expect_failure) == std::string::npos) {
        std::cerr << "FAIL: the reason does not mention '" << a.expect_failure << "'" << std::endl;
        return 1;
      }
      try {
        engine.send(a.peer, numbered(0, 1));
        std::cerr << "FAIL: send to a failed peer did not throw" << std::endl;
        return 1;
      } catch (const lp::PeerFailed& e) {
        std::cout << "OK: send now fails: " << e.what() << std::endl;
      }
      if (!a.then_peer.empty()) return send_all_acknowledged(engine, a, a.then_peer, deadline);
      std::cout << "stats " << engine.stats_json() << std::endl;
      return 0;
    }
    std::this_thread::sleep_for(20ms);
  }
  std::cerr << "FAIL: no failure reported within " << a.timeout_s << " s" << std::endl;
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const Arguments a = parse(argc, argv);
  try {
    const lp::Config config = lp::Config::from_environment();
    if (a.mode == "receive") return receive(a, config);
    if (a.mode == "send") return send(a, config);
    usage_error("unknown mode " + a.mode);
  } catch (const std::exception& e) {
    std::cerr << "lp-engine-probe: " << e.what() << std::endl;
    return 1;
  }
}
