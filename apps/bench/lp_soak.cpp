// lp-soak: the two ends of the soak benchmark (apps/bench/soak), run in the two emulated sites.
// `send` streams numbered messages of mixed sizes (1 KiB .. 1 MiB) at an offered rate for a given
// time, then an end marker carrying the count, and waits until everything is acknowledged.
// `receive` checks every message: its number (order, loss, duplicates) and its whole content (a
// pattern derived from the number), writes per-interval deliveries and every pause in deliveries to
// CSV files (deliveries.csv, pauses.csv), and prints totals. Both watch for peer failures (a dead-peer report is a failure: the
// soak's outages are silences, not dead processes). Uses the engine's public API only.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iostream>
#include <set>
#include <string>
#include <thread>

#include "engine.h"

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr std::int32_t kEndTag = -1;                 // the end marker's tag; its body is the count sent
constexpr std::uint32_t kSourceMark = 0x50a4c0deu;   // source field of every numbered message
constexpr std::size_t kMinSize = 1024;               // message sizes: 1 KiB ..
constexpr std::size_t kMaxSize = 1024 * 1024;        // .. 1 MiB
constexpr auto kMaxRateDeficit = 1s;                 // after a stall, send at most this much backlog at once
constexpr auto kDuplicateGrace = 3s;                 // after the end marker, how long extras are watched for
constexpr auto kPauseWorthLogging = 500ms;           // pauses in delivery written to pauses.csv
constexpr std::uint64_t kFailuresPrinted = 20;       // check failures described one by one (all are counted)

struct Arguments {
  std::string mode;
  std::string peer;
  std::string listen;
  long seconds = 1800;       // send: how long to stream
  double offered_mbit = 40;  // send: offered load (bodies)
  long flush_timeout_s = 600;
  long timeout_s = 3600;     // receive: give up waiting for the end marker
  long interval_s = 60;      // receive: row length of intervals.csv
  std::string out_dir = ".";
};

[[noreturn]] void usage_error(const std::string& what) {
  std::cerr << "lp-soak: " << what
            << "\nusage: lp-soak send --peer HOST:PORT [--seconds S] [--offered-mbit M] [--flush-timeout-s T]\n"
               "       lp-soak receive --listen [HOST]:PORT [--out-dir DIR] [--interval-s I] [--timeout-s T]\n";
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
    try {
      if (option == "--peer") a.peer = value;
      else if (option == "--listen") a.listen = value;
      else if (option == "--seconds") a.seconds = std::stol(value);
      else if (option == "--offered-mbit") a.offered_mbit = std::stod(value);
      else if (option == "--flush-timeout-s") a.flush_timeout_s = std::stol(value);
      else if (option == "--timeout-s") a.timeout_s = std::stol(value);
      else if (option == "--interval-s") a.interval_s = std::stol(value);
      else if (option == "--out-dir") a.out_dir = value;
      else usage_error("unknown option " + option);
    } catch (const std::logic_error&) {
      usage_error(option + ": not a number: " + value);
    }
  }
  if (a.seconds < 1 || a.offered_mbit <= 0 || a.interval_s < 1) usage_error("values must be positive");
  return a;
}

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Sizes of message `index`: log-uniform within a class; 70 % 1-8 KiB, 25 % 8-64 KiB, 5 % 64 KiB-1 MiB.
std::size_t size_of(std::uint64_t index) {
  const std::uint64_t h = mix(index ^ 0x5eed);
  const unsigned pick = h % 20;
  const double u = static_cast<double>((h >> 8) & 0xffff) / 65536.0;
  double low = kMinSize, octaves = 3;  // 1 KiB * 2^(0..3)
  if (pick >= 14) low = 8 * 1024.0;
  if (pick == 19) low = 64 * 1024.0, octaves = 4;
  const auto size = static_cast<std::size_t>(low * std::exp2(u * octaves));
  return std::clamp(size, kMinSize, kMaxSize);
}

// The content of message `index`: 64-bit words of a hash of (index, word), so a misplaced,
// stale or altered block anywhere shows.
void fill(std::uint64_t index, std::vector<std::byte>& body) {
  const std::uint64_t seed = mix(index);
  for (std::size_t offset = 0; offset < body.size(); offset += 8) {
    const std::uint64_t word = mix(seed + offset);
    std::memcpy(body.data() + offset, &word, std::min<std::size_t>(8, body.size() - offset));
  }
}

lp::Message numbered(std::uint64_t index) {
  lp::Message m;
  m.tag = static_cast<std::int32_t>(index & 0x7fffffff);
  m.context = static_cast<std::int32_t>(index >> 31);
  m.source = kSourceMark;
  m.body.reserve(size_of(index) + lp::kMessageTrailerSize);
  m.body.resize(size_of(index));
  fill(index, m.body);
  return m;
}

long long epoch_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Prints every peer failure reported since the last call; returns how many.
std::size_t report_failures(lp::Engine& engine) {
  std::size_t count = 0;
  for (const auto& f : engine.take_peer_failures()) {
    std::cout << "peer_failure " << epoch_ms() << " " << f.peer_endpoint << " lost " << f.messages_lost << ": "
              << f.reason << std::endl;
    ++count;
  }
  return count;
}

int send(const Arguments& a, const lp::Config& config) {
  lp::Engine engine(config);
  const double bytes_per_second = a.offered_mbit * 1e6 / 8;
  const auto start = Clock::now();
  const auto end = start + std::chrono::seconds(a.seconds);
  auto schedule = start;  // when the next message is due at the offered rate
  std::uint64_t sent = 0, bytes = 0, failures = 0;
  std::cout << "sending " << epoch_ms() << std::endl;
  try {
    while (Clock::now() < end) {
      const auto now = Clock::now();
      if (schedule > now) {
        std::this_thread::sleep_for(std::min<Clock::duration>(schedule - now, 100ms));
        failures += report_failures(engine);
        continue;
      }
      schedule = std::max(schedule, now - kMaxRateDeficit);
      lp::Message m = numbered(sent);
      const std::size_t size = m.body.size();
      engine.send(a.peer, std::move(m));  // blocks while the window is full (an outage)
      ++sent;
      bytes += size;
      schedule += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(size / bytes_per_second));
    }
    lp::Message marker;
    marker.tag = kEndTag;
    const std::string count = std::to_string(sent);
    for (char c : count) marker.body.push_back(static_cast<std::byte>(c));
    engine.send(a.peer, std::move(marker));
  } catch (const lp::PeerFailed& e) {
    std::cout << "send_failed " << epoch_ms() << " " << e.what() << std::endl;
    ++failures;
  }
  std::cout << "sent " << sent << "\nsent_bytes " << bytes << std::endl;
  const bool flushed = engine.flush(std::chrono::seconds(a.flush_timeout_s));
  failures += report_failures(engine);
  std::cout << "flushed " << (flushed ? 1 : 0) << "\npeer_failures " << failures << "\nstats " << engine.stats_json()
            << std::endl;
  return flushed && failures == 0 ? 0 : 1;
}

// What the receiver saw, checked against what the numbers promise.
struct Checks {
  std::uint64_t next = 0;            // the number expected next
  std::set<std::uint64_t> missing;   // skipped numbers not (yet) seen
  std::uint64_t delivered = 0, bytes = 0, duplicated = 0, reordered = 0, corrupt = 0, foreign = 0;

  // Checks one numbered message; true when it is the one expected, intact.
  bool take(const lp::Message& m) {
    if (m.source != kSourceMark || m.tag < 0 || m.context < 0) {
      ++foreign;
      return false;
    }
    const std::uint64_t index = (static_cast<std::uint64_t>(m.context) << 31) | static_cast<std::uint32_t>(m.tag);
    std::vector<std::byte> expected(size_of(index));
    fill(index, expected);
    bool good = m.body == expected;
    if (!good) ++corrupt;
    if (index == next) {
      ++next;
    } else if (index > next) {
      for (std::uint64_t skipped = next; skipped < index; ++skipped) missing.insert(skipped);
      next = index + 1;
      good = false;
    } else if (missing.erase(index) == 1) {
      ++reordered;
      good = false;
    } else {
      ++duplicated;
      return false;
    }
    ++delivered;
    bytes += m.body.size();
    return good;
  }
};

int receive(const Arguments& a, lp::Config config) {
  config.listen = a.listen;
  lp::Engine engine(config);
  std::ofstream intervals(a.out_dir + "/deliveries.csv"), pauses(a.out_dir + "/pauses.csv");
  intervals << "interval_start_epoch_ms,seconds,messages,bytes,mbit_per_s\n";
  pauses << "last_delivery_epoch_ms,next_delivery_epoch_ms,pause_ms\n";
  std::cout << "listening " << engine.local_endpoint() << std::endl;
  const auto deadline = Clock::now() + std::chrono::seconds(a.timeout_s);
  const auto interval = std::chrono::seconds(a.interval_s);
  Checks checks;
  std::uint64_t interval_messages = 0, interval_bytes = 0, failures = 0, failures_printed = 0;
  long long interval_start_ms = epoch_ms(), last_delivery_ms = 0;
  auto interval_start = Clock::now(), last_delivery = Clock::time_point{};
  long long announced = -1;  // the count in the end marker
  auto write_interval = [&] {
    const double seconds = std::chrono::duration<double>(Clock::now() - interval_start).count();
    intervals << interval_start_ms << "," << seconds << "," << interval_messages << "," << interval_bytes << ","
              << (seconds > 0 ? interval_bytes * 8 / seconds / 1e6 : 0) << std::endl;
    interval_messages = interval_bytes = 0;
    interval_start = Clock::now();
    interval_start_ms = epoch_ms();
  };
  auto end_watch = Clock::time_point::max();
  while (Clock::now() < std::min(deadline, end_watch)) {
    if (Clock::now() - interval_start >= interval) write_interval();
    auto m = engine.try_receive();
    if (!m) {
      engine.wait_receive(100ms);
      failures += report_failures(engine);
      continue;
    }
    const auto now = Clock::now();
    const long long now_ms = epoch_ms();
    if (last_delivery != Clock::time_point{} && now - last_delivery >= kPauseWorthLogging)
      pauses << last_delivery_ms << "," << now_ms << "," << now_ms - last_delivery_ms << std::endl;
    last_delivery = now;
    last_delivery_ms = now_ms;
    if (m->tag == kEndTag && m->source == 0) {
      announced = std::stoll(std::string(reinterpret_cast<const char*>(m->body.data()), m->body.size()));
      end_watch = Clock::now() + kDuplicateGrace;  // anything after it is a duplicate or foreign
      continue;
    }
    if (!checks.take(*m) && failures_printed++ < kFailuresPrinted)
      std::cout << "check_failure " << now_ms << " tag " << m->tag << " context " << m->context << " bytes "
                << m->body.size() << " expected " << checks.next - 1 << std::endl;
    ++interval_messages;
    interval_bytes += m->body.size();
  }
  write_interval();
  failures += report_failures(engine);
  const std::uint64_t sent = announced < 0 ? checks.next : static_cast<std::uint64_t>(announced);
  const std::uint64_t lost = checks.missing.size() + (sent > checks.next ? sent - checks.next : 0);
  std::cout << "end_marker " << (announced < 0 ? 0 : 1) << "\nsent " << sent << "\ndelivered " << checks.delivered
            << "\ndelivered_bytes " << checks.bytes << "\nlost " << lost << "\nduplicated " << checks.duplicated
            << "\nreordered " << checks.reordered << "\ncorrupt " << checks.corrupt << "\nforeign " << checks.foreign
            << "\npeer_failures " << failures << "\nstats " << engine.stats_json() << std::endl;
  const bool good = announced >= 0 && lost == 0 && checks.duplicated == 0 && checks.reordered == 0 &&
                    checks.corrupt == 0 && checks.foreign == 0 && failures == 0;
  std::cout << (good ? "OK" : "FAIL") << ": " << checks.delivered << " of " << sent << " messages checked" << std::endl;
  return good ? 0 : 1;
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
    std::cerr << "lp-soak: " << e.what() << std::endl;
    return 1;
  }
}
