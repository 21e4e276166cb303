// Option values both benchmark programs (lp-bench, lp-mpi-bench) parse the same way.
#pragma once

#include <string>

namespace lp::bench {

// How the receiver acknowledges a batch of X messages.
enum class AckMode {
  kEach,  // one acknowledgement per message; the sender collects them while and after sending
  kLast,  // one acknowledgement after the X-th message
  kWait,  // reference only: stop-and-wait, the sender waits for each acknowledgement
};

// Throws std::invalid_argument "PROGRAM: bad value 'VALUE' for OPTION (accepted: ACCEPTED)".
[[noreturn]] void badValue(const std::string& program, const std::string& option, const std::string& value,
                           const std::string& accepted);

// A whole number in [min, max], with an optional K (2^10), M (2^20) or G (2^30) suffix.
long parseNumber(const std::string& program, const std::string& option, const std::string& value, long min, long max);

// A positive number of seconds.
double parseSeconds(const std::string& program, const std::string& option, const std::string& value);

AckMode parseAckMode(const std::string& program, const std::string& value);
const char* ackModeName(AckMode mode);

}  // namespace lp::bench
