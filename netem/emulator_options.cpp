#include "emulator_options.h"

#include <getopt.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

namespace lp::netem {

namespace {

// Accepted ranges: wide enough for any real link, narrow enough to catch typos (e.g. seconds for ms).
constexpr double kMaxDelayMilliseconds = 60'000;
constexpr double kMaxRateMegabits = 100'000;
constexpr std::uint64_t kMaxPacketBytes = 1500;  // the TUN devices' MTU: a queue must hold one packet
// Default queue: one bandwidth-delay product (the classic router buffer), at least this many bytes.
constexpr std::uint64_t kMinimumDefaultQueueBytes = 16 * kMaxPacketBytes;

[[noreturn]] void fail(const std::string& option, const std::string& value, const std::string& expected) {
  throw OptionError("--" + option + ": '" + value + "' is not " + expected);
}

// A finite decimal number in [low, high], all of `text` consumed.
double parse_number(const std::string& option, const std::string& text, double low, double high,
                    const std::string& unit) {
  std::ostringstream expected;
  expected << "a number in [" << low << ", " << high << "]" << unit;
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    fail(option, text, expected.str());
  }
  if (used != text.size() || !std::isfinite(value) || value < low || value > high) fail(option, text, expected.str());
  return value;
}

Nanoseconds milliseconds_to_nanoseconds(double milliseconds) {
  return Nanoseconds{static_cast<std::int64_t>(std::llround(milliseconds * 1e6))};
}

// "P,R[,BAD[,GOOD]]" in percent: enter-burst, leave-burst, loss inside a burst (default 100),
// loss outside (default 0).
BurstLossParameters parse_burst_loss(const std::string& option, const std::string& text) {
  std::vector<double> fields;
  std::stringstream stream(text);
  std::string field;
  while (std::getline(stream, field, ',')) fields.push_back(parse_number(option, field, 0, 100, " (percent)"));
  if (fields.size() < 2 || fields.size() > 4) {
    fail(option, text, "ENTER%,LEAVE%[,LOSS_IN_BURST%[,LOSS_OUTSIDE%]] (2 to 4 percentages)");
  }
  if (fields[1] <= 0) fail(option, text, "valid: the leave-burst probability must be above 0");
  BurstLossParameters burst;
  burst.enter_bad = fields[0] / 100;
  burst.leave_bad = fields[1] / 100;
  if (fields.size() > 2) burst.loss_in_bad = fields[2] / 100;
  if (fields.size() > 3) burst.loss_in_good = fields[3] / 100;
  return burst;
}

// "bdp", "<N>" or "<N>B" bytes, "<N>K"/"<N>KB" (KiB), "<N>M"/"<N>MB" (MiB), "<N>ms".
std::optional<QueueLimit> parse_queue(const std::string& option, const std::string& text) {
  if (text == "bdp") return std::nullopt;
  const std::string expected = "a queue size: 'bdp', bytes (e.g. 150000, 64K, 8M) or time at the link rate (e.g. 100ms)";
  std::size_t digits = 0;
  while (digits < text.size() && (std::isdigit(static_cast<unsigned char>(text[digits])) || text[digits] == '.')) ++digits;
  if (digits == 0) fail(option, text, expected);
  const std::string suffix = text.substr(digits);
  const double number = parse_number(option, text.substr(0, digits), 0, 1e12, "");
  QueueLimit queue;
  if (suffix == "ms") {
    queue.unit = QueueLimit::Unit::kTime;
    queue.time = milliseconds_to_nanoseconds(number);
    if (number <= 0 || number > kMaxDelayMilliseconds) fail(option, text, "a time in (0, 60000] ms");
    return queue;
  }
  static const std::map<std::string, double> kMultipliers = {
      {"", 1}, {"B", 1}, {"K", 1024}, {"KB", 1024}, {"M", 1 << 20}, {"MB", 1 << 20}};
  const auto multiplier = kMultipliers.find(suffix);
  if (multiplier == kMultipliers.end()) fail(option, text, expected);
  queue.bytes = static_cast<std::uint64_t>(number * multiplier->second);
  if (queue.bytes < kMaxPacketBytes) fail(option, text, "at least 1500 bytes (one packet)");
  return queue;
}

// The options that exist once per direction: --NAME for a->b, --NAME-back for b->a.
const char* const kPerDirectionOptions[] = {"delay", "jitter", "loss", "burst-loss", "rate", "queue"};

std::uint64_t bytes_at_rate(double bits_per_second, Nanoseconds time) {
  return static_cast<std::uint64_t>(bits_per_second / 8 * static_cast<double>(time.count()) / 1e9);
}

// Builds one direction from its option values; `values` maps an option name to its text.
LinkParameters parse_direction(const std::map<std::string, std::string>& values, const std::string& suffix,
                               bool allow_reordering, std::optional<QueueLimit>& queue) {
  auto value_of = [&](const std::string& name) -> std::optional<std::pair<std::string, std::string>> {
    for (const std::string& option : {name + suffix, name}) {  // the back direction defaults to the forward one
      if (auto found = values.find(option); found != values.end()) return std::make_pair(option, found->second);
    }
    return std::nullopt;
  };
  LinkParameters link;
  link.allow_reordering = allow_reordering;
  if (auto v = value_of("delay")) link.delay = milliseconds_to_nanoseconds(parse_number(v->first, v->second, 0, kMaxDelayMilliseconds, " (ms)"));
  if (auto v = value_of("jitter")) link.jitter = milliseconds_to_nanoseconds(parse_number(v->first, v->second, 0, kMaxDelayMilliseconds, " (ms)"));
  if (auto v = value_of("loss")) link.loss.bernoulli = parse_number(v->first, v->second, 0, 100, " (percent)") / 100;
  if (auto v = value_of("burst-loss")) {
    link.loss.burst_enabled = true;
    link.loss.burst = parse_burst_loss(v->first, v->second);
  }
  if (auto v = value_of("rate")) link.rate_bits_per_second = parse_number(v->first, v->second, 0, kMaxRateMegabits, " (Mbit/s; 0: unlimited)") * 1e6;
  if (auto v = value_of("queue")) {
    queue = parse_queue(v->first, v->second);
    if (queue && queue->unit == QueueLimit::Unit::kTime && link.rate_bits_per_second > 0 &&
        bytes_at_rate(link.rate_bits_per_second, queue->time) < kMaxPacketBytes) {
      fail(v->first, v->second, "long enough to hold one 1500-byte packet at the link rate");
    }
  }
  return link;
}

}  // namespace

std::string EmulatorOptions::usage() {
  return R"(Usage: lp-linkemu --netns-a NS --netns-b NS [options]

Moves IP packets between a TUN device in namespace NS-A and one in NS-B, emulating a wide-area link.
Per-direction options apply to a->b; their -back form to b->a (default: the same as a->b).
  --delay MS            one-way delay (0..60000)
  --jitter MS           standard deviation of normal jitter (no reordering unless --reorder)
  --loss PCT            Bernoulli loss (0..100)
  --burst-loss P,R[,B[,G]]  Gilbert-Elliott loss in percent: enter burst, leave burst,
                        loss inside a burst (100), loss outside (0); replaces --loss
  --rate MBIT           rate limit in Mbit/s (0: unlimited)
  --queue SIZE          tail-drop queue before the rate limiter: bdp (default: rate x RTT,
                        at least 24000 bytes), bytes (150000, 64K, 8M) or time (100ms)
  --reorder             let jitter reorder packets
  --tun-name NAME       TUN device name in each namespace (default lpwan0)
  --stats-file PATH     write counters there every second and at exit (atomic rename)
  --seed N              random seed (default: a fresh one)
  --realtime-priority N run as SCHED_FIFO priority N (1..99) so that a busy machine does not
                        delay packets; 0 (default): normal scheduling
  --validate            check the options, print the effective link as key=value lines, exit
)";
}

bool EmulatorOptions::parse(int argc, char** argv) {
  std::vector<option> long_options;
  std::vector<std::string> names = {"netns-a", "netns-b", "tun-name", "stats-file", "seed", "realtime-priority"};
  for (const char* name : kPerDirectionOptions) {
    names.push_back(name);
    names.push_back(std::string(name) + "-back");
  }
  for (const std::string& name : names) long_options.push_back({name.c_str(), required_argument, nullptr, 1});
  long_options.push_back({"reorder", no_argument, nullptr, 2});
  long_options.push_back({"help", no_argument, nullptr, 3});
  long_options.push_back({"validate", no_argument, nullptr, 4});
  long_options.push_back({nullptr, 0, nullptr, 0});

  std::map<std::string, std::string> values;
  bool allow_reordering = false;
  opterr = 0;
  optind = 1;
  int index = 0;
  for (int c; (c = getopt_long(argc, argv, "", long_options.data(), &index)) != -1;) {
    switch (c) {
      case 1: values[long_options[index].name] = optarg; break;
      case 2: allow_reordering = true; break;
      case 3: std::fputs(usage().c_str(), stdout); return false;
      case 4: validate_only = true; break;
      default:
        throw OptionError("unknown option or missing value: '" + std::string(argv[optind - 1]) + "' (see --help)");
    }
  }
  if (optind < argc) throw OptionError("unexpected argument '" + std::string(argv[optind]) + "' (see --help)");

  auto required = [&](const std::string& name) {
    auto found = values.find(name);
    if (found == values.end() || found->second.empty()) throw OptionError("--" + name + " is required");
    return found->second;
  };
  if (!validate_only) {
    netns_a = required("netns-a");
    netns_b = required("netns-b");
  }
  if (!validate_only && netns_a == netns_b) throw OptionError("--netns-b: must differ from --netns-a");
  if (auto found = values.find("tun-name"); found != values.end()) {
    tun_name = found->second;
    if (tun_name.empty() || tun_name.size() >= 16) fail("tun-name", tun_name, "an interface name of 1 to 15 characters");
  }
  if (auto found = values.find("stats-file"); found != values.end()) stats_file = found->second;
  if (auto found = values.find("seed"); found != values.end()) {
    seed = static_cast<std::uint64_t>(parse_number("seed", found->second, 0, 9e15, ""));
  }
  if (auto found = values.find("realtime-priority"); found != values.end()) {
    const double priority = parse_number("realtime-priority", found->second, 0, 99, " (0: normal scheduling)");
    if (priority != std::floor(priority)) fail("realtime-priority", found->second, "a whole number in [0, 99]");
    realtime_priority = static_cast<int>(priority);
  }

  std::optional<QueueLimit> queue_a_to_b, queue_b_to_a;
  a_to_b = parse_direction(values, "", allow_reordering, queue_a_to_b);
  b_to_a = parse_direction(values, "-back", allow_reordering, queue_b_to_a);

  // Default queues: one bandwidth-delay product of the round trip at each direction's own rate.
  const Nanoseconds round_trip = a_to_b.delay + b_to_a.delay;
  for (auto [link, queue] : {std::pair{&a_to_b, &queue_a_to_b}, std::pair{&b_to_a, &queue_b_to_a}}) {
    if (*queue) {
      link->queue = **queue;
    } else {
      link->queue.unit = QueueLimit::Unit::kBytes;
      link->queue.bytes = std::max(kMinimumDefaultQueueBytes, bytes_at_rate(link->rate_bits_per_second, round_trip));
    }
  }
  return true;
}

std::string EmulatorOptions::describe() const {
  std::ostringstream out;
  for (auto [prefix, link] : {std::pair{"a_to_b", &a_to_b}, std::pair{"b_to_a", &b_to_a}}) {
    const std::string p = prefix;
    out << p << "_delay_ms=" << link->delay.count() / 1e6 << "\n"
        << p << "_jitter_ms=" << link->jitter.count() / 1e6 << "\n"
        << p << "_loss_pct=" << link->loss.bernoulli * 100 << "\n"
        << p << "_burst_loss=";
    if (link->loss.burst_enabled) {
      const BurstLossParameters& b = link->loss.burst;
      out << b.enter_bad * 100 << "," << b.leave_bad * 100 << "," << b.loss_in_bad * 100 << "," << b.loss_in_good * 100;
    }
    out << "\n" << p << "_rate_mbit=" << link->rate_bits_per_second / 1e6 << "\n";
    const QueueLimit& queue = link->queue;
    const std::uint64_t queue_bytes =
        queue.unit == QueueLimit::Unit::kBytes ? queue.bytes : bytes_at_rate(link->rate_bits_per_second, queue.time);
    out << p << "_queue_bytes=" << queue_bytes << "\n";
  }
  out << "reorder=" << (a_to_b.allow_reordering ? 1 : 0) << "\n";
  return out.str();
}

}  // namespace lp::netem
