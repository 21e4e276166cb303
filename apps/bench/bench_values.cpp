#include "bench_values.h"

#include <cerrno>
#include <cstdlib>
#include <stdexcept>

namespace lp::bench {

void badValue(const std::string& program, const std::string& option, const std::string& value,
              const std::string& accepted) {
  throw std::invalid_argument(program + ": bad value '" + value + "' for " + option + " (accepted: " + accepted + ")");
}

long parseNumber(const std::string& program, const std::string& option, const std::string& value, long min, long max) {
  const std::string accepted = std::to_string(min) + ".." + std::to_string(max) + ", suffix K, M or G allowed";
  if (value.empty()) badValue(program, option, value, accepted);
  errno = 0;
  char* end = nullptr;
  long number = std::strtol(value.c_str(), &end, 10);
  if (errno != 0 || end == value.c_str()) badValue(program, option, value, accepted);
  std::string suffix(end);
  long multiplier = 1;
  if (suffix == "K" || suffix == "k") multiplier = 1024;
  else if (suffix == "M" || suffix == "m") multiplier = 1024 * 1024;
  else if (suffix == "G" || suffix == "g") multiplier = 1024L * 1024 * 1024;
  else if (!suffix.empty()) badValue(program, option, value, accepted);
  if (number < min || number > max / multiplier) badValue(program, option, value, accepted);
  number *= multiplier;
  if (number < min || number > max) badValue(program, option, value, accepted);
  return number;
}

double parseSeconds(const std::string& program, const std::string& option, const std::string& value) {
  char* end = nullptr;
  double seconds = std::strtod(value.c_str(), &end);
  if (value.empty() || *end != '\0' || !(seconds > 0)) badValue(program, option, value, "a positive number of seconds");
  return seconds;
}

AckMode parseAckMode(const std::string& program, const std::string& value) {
  if (value == "each") return AckMode::kEach;
  if (value == "last") return AckMode::kLast;
  if (value == "wait") return AckMode::kWait;
  badValue(program, "--ack", value, "each, last, wait");
}

const char* ackModeName(AckMode mode) {
  switch (mode) {
    case AckMode::kEach: return "each";
    case AckMode::kLast: return "last";
    case AckMode::kWait: return "wait";
  }
  return "?";
}

}  // namespace lp::bench
