// The reference for `lp-perf local`: a plain blocking TCP socket pair on loopback moving the same
// messages (a 24-byte header and the body, one writev per message, a reader thread), as a program
// without LongPipe would.
#pragma once

#include <cstddef>

namespace lp::perf {

struct LoopbackResult {
  double seconds = 0;      // wall time, first send to the final acknowledgement
  double cpu_seconds = 0;  // user + system time of the whole process (both ends)
};

LoopbackResult run_plain_tcp(std::size_t size, std::size_t count);

// Wall clock and process CPU time, for both measurements.
class CpuStopwatch {
 public:
  CpuStopwatch();
  LoopbackResult elapsed() const;

 private:
  double wall_start_;
  double cpu_start_;
};

}  // namespace lp::perf
