// The master side of lp-bench: spawns the worker on the other site, runs the batches, prints CSV.
#pragma once

#include <chrono>
#include <ostream>
#include <vector>

#include "bench_options.h"

namespace lp::bench {

class BenchMaster {
 public:
  explicit BenchMaster(const BenchOptions& options);
  // Spawns the worker, runs every batch, writes one CSV line per batch to out; throws on error.
  void run(std::ostream& out);

 private:
  using Clock = std::chrono::steady_clock;

  void spawnWorker();
  void greetWorker(Clock::time_point deadline);
  double runBatch(int batch);
  void sendData(int sequence);
  // Waits (until deadline) for the next message from the worker and returns its buffer id.
  int receive(Clock::time_point deadline, const char* waitingFor);
  // Takes one acknowledgement out of the current receive buffer and returns its count.
  int unpackAck(int bufferId);
  void stopWorker();

  BenchOptions options_;
  int workerTid_ = 0;
  std::vector<char> payload_;
};

}  // namespace lp::bench
