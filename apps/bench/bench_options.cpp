#include "bench_options.h"

#include <pvm3.h>

#include <stdexcept>

namespace lp::bench {
namespace {

// Largest accepted message: PVM packs a message in memory, several copies of it may exist.
constexpr long kMaxMessageBytes = 256L * 1024 * 1024;
constexpr long kMaxCount = 10'000'000;

constexpr const char* kProgram = "lp-bench";

Route parseRoute(const std::string& value) {
  if (value == "default") return Route::kDefault;
  if (value == "direct") return Route::kDirect;
  badValue(kProgram, "--route", value, "default, direct");
}

Encoding parseEncoding(const std::string& value) {
  if (value == "default") return Encoding::kDefault;
  if (value == "raw") return Encoding::kRaw;
  if (value == "inplace") return Encoding::kInPlace;
  badValue(kProgram, "--encoding", value, "default, raw, inplace");
}

}  // namespace

BenchOptions parseBenchOptions(const std::vector<std::string>& args) {
  BenchOptions options;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& option = args[i];
    if (option == "--worker") {
      options.isWorker = true;
      continue;
    }
    if (option.rfind("--", 0) != 0) throw std::invalid_argument("lp-bench: unexpected argument '" + option + "'");
    if (i + 1 >= args.size()) throw std::invalid_argument("lp-bench: " + option + " needs a value");
    const std::string& value = args[++i];
    if (option == "--count") options.count = static_cast<int>(parseNumber(kProgram, option, value, 1, kMaxCount));
    else if (option == "--size") options.size = parseNumber(kProgram, option, value, 1, kMaxMessageBytes);
    else if (option == "--ack") options.ack = parseAckMode(kProgram, value);
    else if (option == "--route") options.route = parseRoute(value);
    else if (option == "--encoding") options.encoding = parseEncoding(value);
    else if (option == "--batches") options.batches = static_cast<int>(parseNumber(kProgram, option, value, 1, 100000));
    else if (option == "--worker-host") options.workerHost = value;
    else if (option == "--worker-exe") options.workerExecutable = value;
    else if (option == "--timeout") options.batchTimeoutSeconds = parseSeconds(kProgram, option, value);
    else if (option == "--pause-ms") options.pauseMilliseconds = static_cast<int>(parseNumber(kProgram, option, value, 0, 3'600'000));
    else throw std::invalid_argument("lp-bench: unknown option '" + option + "' (see --help)");
  }
  return options;
}

std::vector<std::string> workerArguments(const BenchOptions& options) {
  return {"--worker",
          "--count", std::to_string(options.count),
          "--size", std::to_string(options.size),
          "--ack", ackModeName(options.ack),
          "--route", routeName(options.route),
          "--encoding", encodingName(options.encoding)};
}

const char* routeName(Route route) { return route == Route::kDirect ? "direct" : "default"; }

const char* encodingName(Encoding encoding) {
  switch (encoding) {
    case Encoding::kDefault: return "default";
    case Encoding::kRaw: return "raw";
    case Encoding::kInPlace: return "inplace";
  }
  return "?";
}

int pvmEncoding(Encoding encoding) {
  switch (encoding) {
    case Encoding::kDefault: return PvmDataDefault;
    case Encoding::kRaw: return PvmDataRaw;
    case Encoding::kInPlace: return PvmDataInPlace;
  }
  return PvmDataDefault;
}

std::string benchUsage() {
  return R"(Usage: lp-bench [options]     (run inside a PVM virtual machine, e.g. via pvm-sites exec a)

A plain PVM 3 master/worker program measuring aggregate latency: the master sends X messages of
P bytes to a worker it spawns on another host, without waiting between sends, and measures the
time T until the acknowledgements are in. Prints one CSV line per batch.

  --count X            messages per batch (default 100)
  --size P             bytes per message, suffix K or M allowed (default 1024)
  --ack each|last|wait each: the worker acknowledges every message, the master collects the X
                       acknowledgements while and after sending; last: one acknowledgement after
                       the X-th message (default); wait: REFERENCE ONLY, stop-and-wait (the master
                       waits for each acknowledgement before its next send)
  --route default|direct   PVM's routing: through the pvmds, or PvmRouteDirect (set in both tasks)
  --encoding default|raw|inplace   PvmDataDefault, PvmDataRaw or PvmDataInPlace
  --batches N          batches to run (default 1)
  --worker-host H      host to spawn the worker on (default site-b)
  --worker-exe PATH    executable to spawn (default: this program's own absolute path)
  --timeout S          a batch taking longer than S seconds is an error (default 3600)
  --pause-ms MS        idle time between batches (default 0)

Output columns: batch,size_bytes,count,ack,pvm_route,encoding,total_s,per_message_s
)";
}

}  // namespace lp::bench
