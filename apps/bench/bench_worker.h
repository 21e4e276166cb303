// The worker side of lp-bench: receives the batches on the other site and acknowledges them.
#pragma once

#include <vector>

#include "bench_options.h"

namespace lp::bench {

class BenchWorker {
 public:
  explicit BenchWorker(const BenchOptions& options);
  // Serves the master (pvm_parent) until it says done; throws on error.
  void run();

 private:
  void answerHello();
  // Checks one data message; returns false if it is not the expected one.
  bool checkData(int bufferId, int sequence);
  void acknowledge(int count);

  BenchOptions options_;
  int masterTid_ = 0;
  std::vector<char> payload_;
};

}  // namespace lp::bench
