// Command line of lp-perf (see usage()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lp::perf {

// Default port of `lp-perf serve`.
constexpr std::uint16_t kDefaultPort = 7447;

enum class AckMode { kEach, kLast };

struct Options {
  std::string command;                 // serve | run | local
  std::uint16_t port = kDefaultPort;   // serve
  std::string peer;                    // run: host[:port]
  std::vector<std::size_t> sizes{1024};
  std::size_t count = 100;             // X, messages per batch
  std::size_t batches = 5;             // per size; the first of the run is the cold one
  AckMode ack = AckMode::kEach;
  std::optional<double> link_rate_mbit;  // B of the floor; default LONGPIPE_BANDWIDTH
  std::string csv_path;
  std::string json_path;
  std::size_t pause_ms = 0;            // idle time before each batch (tests slow start after idle)
  std::size_t pings = 10;              // round trips measured for R
};

std::string usage();
// Throws std::invalid_argument with a message naming the option.
Options parse_options(int argc, char** argv);

}  // namespace lp::perf
