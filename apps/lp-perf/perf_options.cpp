#include "perf_options.h"

#include <cstdlib>
#include <sstream>
#include <stdexcept>

namespace lp::perf {
namespace {

constexpr std::size_t kMaxSize = 1u << 30;

std::size_t parse_count(const std::string& option, const std::string& text, std::size_t min, std::size_t max) {
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || text[0] == '-' || value < min || value > max) {
    throw std::invalid_argument(option + " '" + text + "': expected an integer from " + std::to_string(min) + " to " +
                                std::to_string(max));
  }
  return value;
}

// "1024", "64K", "1M" (binary units).
std::size_t parse_size(const std::string& text) {
  std::string digits = text;
  std::size_t unit = 1;
  if (!digits.empty() && (digits.back() == 'K' || digits.back() == 'k')) unit = 1u << 10, digits.pop_back();
  else if (!digits.empty() && (digits.back() == 'M' || digits.back() == 'm')) unit = 1u << 20, digits.pop_back();
  return parse_count("--size", digits, 1, kMaxSize / unit) * unit;
}

}  // namespace

std::string usage() {
  return R"(Usage:
  lp-perf serve [--port P]
      Answer lp-perf runs (LONGPIPE_* variables configure the engine; default port 7447).
      serve and run need the same LONGPIPE_KEY (or LONGPIPE_KEY_FILE), e.g. `openssl rand -hex 32`;
      LONGPIPE_ENCRYPTION=off measures integrity-only protection.
  lp-perf run --peer HOST[:PORT] [--count X] [--size P[,P...]] [--ack each|last] [--batches N]
              [--link-rate MBIT] [--pings N] [--pause MS] [--csv FILE] [--json FILE]
      Aggregate latency: per batch, send X messages of P bytes back to back and collect the
      acknowledgements (one per message, or one after the last); t = T / X. The first batch of
      the run includes connection set-up and is reported separately. The floor is R/X + P/B for
      the measured round trip R (minimum of --pings 1-byte round trips, default 10) and the link
      rate B (--link-rate, default LONGPIPE_BANDWIDTH). The first batch at each further size is
      a "ramp" batch (the congestion window adapts): printed, not in the warm summary.
      --pause MS idles before every batch (after the cold one), e.g. longer than an RTO to see
      how the congestion control restarts after idle.
      Sizes take K and M suffixes (binary), from 1 B to 1 GiB.
      --csv FILE gets one row per batch as soon as it is measured (size, batch, kind cold|ramp|warm,
      count, ack, T_s, t_ms, rtt_ms, link_rate_mbit, floor_ms, ratio); --json FILE the summary.
  lp-perf local [--count N] [--size P[,P...]]
      Loopback: message rate and CPU per message of the engine (two engines in this process)
      against a plain blocking TCP socket pair moving the same messages (a random key unless
      LONGPIPE_KEY is set).
)";
}

Options parse_options(int argc, char** argv) {
  Options options;
  if (argc < 2) throw std::invalid_argument("missing command (serve, run or local)");
  options.command = argv[1];
  if (options.command != "serve" && options.command != "run" && options.command != "local") {
    throw std::invalid_argument("unknown command '" + options.command + "' (serve, run or local)");
  }
  bool count_given = false;
  for (int i = 2; i < argc; ++i) {
    const std::string option = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(option + " needs a value");
      return argv[++i];
    };
    if (option == "--port") {
      options.port = static_cast<std::uint16_t>(parse_count(option, value(), 1, 65535));
    } else if (option == "--peer") {
      options.peer = value();
    } else if (option == "--count") {
      options.count = parse_count(option, value(), 1, 100000000);
      count_given = true;
    } else if (option == "--size") {
      options.sizes.clear();
      std::stringstream list(value());
      std::string item;
      while (std::getline(list, item, ',')) options.sizes.push_back(parse_size(item));
      if (options.sizes.empty()) throw std::invalid_argument("--size needs at least one size");
    } else if (option == "--ack") {
      const std::string mode = value();
      if (mode == "each") options.ack = AckMode::kEach;
      else if (mode == "last") options.ack = AckMode::kLast;
      else throw std::invalid_argument("--ack '" + mode + "': expected each or last");
    } else if (option == "--batches") {
      options.batches = parse_count(option, value(), 1, 100000);
    } else if (option == "--pause") {
      options.pause_ms = parse_count(option, value(), 0, 3600000);
    } else if (option == "--pings") {
      options.pings = parse_count(option, value(), 1, 1000);
    } else if (option == "--link-rate") {
      const std::string text = value();
      char* end = nullptr;
      const double rate = std::strtod(text.c_str(), &end);
      if (text.empty() || *end != '\0' || !(rate > 0) || rate > 1e6) {
        throw std::invalid_argument("--link-rate '" + text + "': expected Mbit/s, above 0 and at most 1000000");
      }
      options.link_rate_mbit = rate;
    } else if (option == "--csv") {
      options.csv_path = value();
    } else if (option == "--json") {
      options.json_path = value();
    } else if (option == "-h" || option == "--help") {
      options.command = "help";
    } else {
      throw std::invalid_argument("unknown option '" + option + "'");
    }
  }
  if (options.command == "run" && options.peer.empty()) throw std::invalid_argument("run needs --peer HOST[:PORT]");
  if (options.command == "local" && !count_given) options.count = 200000;
  return options;
}

}  // namespace lp::perf
