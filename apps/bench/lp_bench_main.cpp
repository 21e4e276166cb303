// lp-bench: a plain PVM 3 program (pvm3.h and libpvm3 only, nothing of LongPipe) measuring the
// aggregate latency of X messages of P bytes between two hosts. See bench_options.cpp for usage.
#include <pvm3.h>

#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "bench_master.h"
#include "bench_options.h"
#include "bench_worker.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  for (const std::string& arg : args) {
    if (arg == "--help" || arg == "-h") {
      std::cout << lp::bench::benchUsage();
      return 0;
    }
  }
  lp::bench::BenchOptions options;
  try {
    options = lp::bench::parseBenchOptions(args);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 2;
  }
  int status = 0;
  try {
    if (options.isWorker) lp::bench::BenchWorker(options).run();
    else lp::bench::BenchMaster(options).run(std::cout);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "lp-bench%s: %s\n", options.isWorker ? " worker" : "", error.what());
    status = 1;
  }
  pvm_exit();
  return status;
}
