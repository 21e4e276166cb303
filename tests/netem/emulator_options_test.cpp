// lp-linkemu's option parsing: defaults, per-direction values, and errors that name the option.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "emulator_options.h"

using lp::netem::EmulatorOptions;
using lp::netem::OptionError;
using namespace std::chrono_literals;

namespace {

// Parses a command line given as words (netns options added unless the words include --validate).
EmulatorOptions parse(std::vector<std::string> words) {
  words.insert(words.begin(), {"lp-linkemu", "--netns-a", "a", "--netns-b", "b"});
  std::vector<char*> argv;
  for (auto& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  EmulatorOptions options;
  options.parse(static_cast<int>(argv.size() - 1), argv.data());
  return options;
}

}  // namespace

TEST_CASE("the back direction defaults to the forward one, -back overrides it", "[netem]") {
  const auto options = parse({"--delay", "270", "--rate", "155", "--loss", "1", "--rate-back", "2"});
  CHECK(options.a_to_b.delay == 270ms);
  CHECK(options.b_to_a.delay == 270ms);
  CHECK(options.a_to_b.rate_bits_per_second == 155e6);
  CHECK(options.b_to_a.rate_bits_per_second == 2e6);
  CHECK(options.b_to_a.loss.bernoulli == Approx(0.01));
}

TEST_CASE("the default queue is one bandwidth-delay product", "[netem]") {
  const auto options = parse({"--delay", "270", "--rate", "155"});
  CHECK(options.a_to_b.queue.bytes == 10'462'500);  // 155 Mbit/s x 540 ms
  const auto small = parse({"--delay", "1", "--rate", "1"});
  CHECK(small.a_to_b.queue.bytes == 24'000);  // never below 16 packets
}

TEST_CASE("queue sizes in bytes and in time", "[netem]") {
  CHECK(parse({"--rate", "10", "--queue", "64K"}).a_to_b.queue.bytes == 65536);
  CHECK(parse({"--rate", "10", "--queue", "150000"}).a_to_b.queue.bytes == 150000);
  const auto timed = parse({"--rate", "10", "--queue", "100ms"});
  CHECK(timed.a_to_b.queue.unit == lp::netem::QueueLimit::Unit::kTime);
  CHECK(timed.a_to_b.queue.time == 100ms);
}

TEST_CASE("burst loss takes two to four percentages", "[netem]") {
  const auto options = parse({"--burst-loss", "1,25,80"});
  CHECK(options.a_to_b.loss.burst_enabled);
  CHECK(options.a_to_b.loss.burst.enter_bad == Approx(0.01));
  CHECK(options.a_to_b.loss.burst.leave_bad == Approx(0.25));
  CHECK(options.a_to_b.loss.burst.loss_in_bad == Approx(0.8));
  CHECK(options.a_to_b.loss.burst.loss_in_good == 0);
}

TEST_CASE("a bad value is an error naming the option", "[netem]") {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--loss", "120"}, "--loss:"},
      {{"--loss-back", "-1"}, "--loss-back:"},
      {{"--delay", "abc"}, "--delay:"},
      {{"--delay", "5s"}, "--delay:"},
      {{"--jitter", "nan"}, "--jitter:"},
      {{"--rate", "1e9"}, "--rate:"},
      {{"--queue", "10"}, "--queue:"},
      {{"--queue", "12parsecs"}, "--queue:"},
      {{"--rate", "1", "--queue", "1ms"}, "--queue:"},
      {{"--burst-loss", "5"}, "--burst-loss:"},
      {{"--burst-loss", "5,0"}, "--burst-loss:"},
      {{"--tun-name", "a-name-longer-than-ifnamsiz"}, "--tun-name:"},
      {{"--realtime-priority", "1.5"}, "--realtime-priority:"},
      {{"--frobnicate", "1"}, "--frobnicate"},
  };
  for (const auto& [words, named] : cases) {
    INFO(words[0]);
    CHECK_THROWS_WITH(parse(words), Catch::Contains(named));
  }
}
