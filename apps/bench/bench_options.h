// Command-line options of lp-bench, the aggregate-latency benchmark (master and worker).
#pragma once

#include <string>
#include <vector>

#include "bench_values.h"

namespace lp::bench {

// PVM's routing policy, set with pvm_setopt(PvmRoute, ...) in both tasks.
enum class Route { kDefault, kDirect };

// How messages are packed: PvmDataDefault (XDR), PvmDataRaw, PvmDataInPlace.
enum class Encoding { kDefault, kRaw, kInPlace };

struct BenchOptions {
  bool isWorker = false;        // set in the spawned task (internal --worker flag)
  int count = 100;              // X: messages per batch
  long size = 1024;             // P: bytes per message
  AckMode ack = AckMode::kLast;
  Route route = Route::kDefault;
  Encoding encoding = Encoding::kDefault;
  int batches = 1;
  std::string workerHost = "site-b";  // PvmTaskHost for the worker
  std::string workerExecutable;       // empty: this program's own path
  double batchTimeoutSeconds = 3600;  // a batch taking longer is an error, not a hang
  int pauseMilliseconds = 0;          // idle time between batches
};

// Parses argv (without the program name). Throws std::invalid_argument naming the bad option.
BenchOptions parseBenchOptions(const std::vector<std::string>& args);

// The arguments that make the spawned worker behave as this master expects.
std::vector<std::string> workerArguments(const BenchOptions& options);

const char* routeName(Route route);
const char* encodingName(Encoding encoding);
int pvmEncoding(Encoding encoding);

std::string benchUsage();

}  // namespace lp::bench
