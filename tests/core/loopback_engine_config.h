// The engine configuration the loopback tests share, and how they wait for a message: a listener
// on 127.0.0.1, buffers sized from the measured path (the hints below stay unset, so the
// measured-path code runs under every sanitizer build; on loopback the buffers stay small), no
// warm-start cache (tests leave the user's cache alone), no pinning (the test threads move freely)
// and timers short enough for a test but long enough for a sanitizer build.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "config.h"
#include "engine.h"

namespace lp::test {

inline Config loopback_engine_config(const std::string& key, std::chrono::milliseconds dead_peer_timeout) {
  using namespace std::chrono_literals;
  Config config;
  config.listen = "127.0.0.1:0";
  config.key = key;
  config.bandwidth_mbit = 100;
  config.rtt = 10ms;
  config.path_cache = "off";
  config.pin = {PinPolicy::Mode::kOff, -1};
  config.keepalive_interval = 200ms;
  config.dead_peer_timeout = dead_peer_timeout;
  config.linger = 1000ms;
  return config;
}

// The next message on `engine`, waiting up to `limit`.
inline std::optional<Message> next_message(Engine& engine, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto message = engine.try_receive()) return message;
    engine.wait_receive(std::chrono::milliseconds(50));
  }
  return std::nullopt;
}

// The peer failures `engine` reports first, waiting up to `limit` (none: nothing was reported).
inline std::vector<PeerFailure> next_failures(Engine& engine, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  std::vector<PeerFailure> failures;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (failures.empty() && std::chrono::steady_clock::now() < deadline) {
    failures = engine.take_peer_failures();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return failures;
}

// The counter `name` in `engine`'s stats_json(): its first occurrence, which is the engine's own
// for an engine-wide counter and the first session's for a per-session one.
inline std::uint64_t stats_counter(const Engine& engine, const std::string& name) {
  const std::string stats = engine.stats_json();
  const auto at = stats.find("\"" + name + "\":");
  if (at == std::string::npos) throw std::runtime_error("no counter \"" + name + "\" in " + stats);
  return std::stoull(stats.substr(at + name.size() + 3));
}

}  // namespace lp::test
