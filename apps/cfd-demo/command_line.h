// CommandLine: "--name value" options with range checks. A bad or unknown option is a clear error
// (std::invalid_argument naming the option and the accepted range); --help prints the usage.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace lp::cfd {

class CommandLine {
 public:
  // Prints `usage` and exits 0 if --help or -h is among the arguments.
  CommandLine(int argc, char** argv, std::string usage);

  long long integer(const std::string& name, long long fallback, long long min, long long max);
  double real(const std::string& name, double fallback, double min, double max);
  std::string text(const std::string& name, const std::string& fallback);
  // "WxH", both in [16, 16384].
  std::pair<int, int> grid(const std::string& name, std::pair<int, int> fallback);
  // A comma-separated list of grids, e.g. "128x64,512x256".
  std::vector<std::pair<int, int>> grids(const std::string& name, std::vector<std::pair<int, int>> fallback);
  // A comma-separated list of integers in [min, max], e.g. "0,200".
  std::vector<long long> integers(const std::string& name, long long min, long long max);
  // Present or not; takes no value.
  bool flag(const std::string& name);
  // Throws if any argument was not consumed by the calls above (a typo must not be ignored).
  void finish() const;

  const std::string& usage() const { return usage_; }

 private:
  // The value after `name` (or after "name="), marking both as used; empty if absent.
  bool take(const std::string& name, std::string& value);

  std::vector<std::string> args_;
  std::vector<bool> used_;
  std::string usage_;
};

}  // namespace lp::cfd
