#include "command_line.h"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace lp::cfd {

namespace {

std::invalid_argument bad(const std::string& name, const std::string& value, const std::string& expected) {
  return std::invalid_argument("bad value '" + value + "' for " + name + ": expected " + expected);
}

long long parse_integer(const std::string& name, const std::string& value, long long min, long long max) {
  const std::string range = "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  size_t used = 0;
  long long number = 0;
  try {
    number = std::stoll(value, &used);
  } catch (const std::exception&) {
    throw bad(name, value, range);
  }
  if (used != value.size() || number < min || number > max) throw bad(name, value, range);
  return number;
}

std::pair<int, int> parse_grid(const std::string& name, const std::string& value) {
  const size_t x = value.find('x');
  if (x == std::string::npos) throw bad(name, value, "WIDTHxHEIGHT, e.g. 400x100");
  return {static_cast<int>(parse_integer(name, value.substr(0, x), 16, 16384)),
          static_cast<int>(parse_integer(name, value.substr(x + 1), 16, 16384))};
}

// "a,b,c" -> {"a", "b", "c"}.
std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> items;
  size_t start = 0;
  while (true) {
    const size_t comma = list.find(',', start);
    items.push_back(list.substr(start, comma - start));
    if (comma == std::string::npos) return items;
    start = comma + 1;
  }
}

}  // namespace

CommandLine::CommandLine(int argc, char** argv, std::string usage) : usage_(std::move(usage)) {
  for (int i = 1; i < argc; ++i) args_.emplace_back(argv[i]);
  used_.assign(args_.size(), false);
  for (const auto& arg : args_) {
    if (arg == "--help" || arg == "-h") {
      std::printf("usage: %s\n", usage_.c_str());
      std::exit(0);
    }
  }
}

bool CommandLine::take(const std::string& name, std::string& value) {
  for (size_t i = 0; i < args_.size(); ++i) {
    if (used_[i]) continue;
    if (args_[i] == name) {
      if (i + 1 >= args_.size()) throw std::invalid_argument(name + " needs a value");
      used_[i] = used_[i + 1] = true;
      value = args_[i + 1];
      return true;
    }
    if (args_[i].rfind(name + "=", 0) == 0) {
      used_[i] = true;
      value = args_[i].substr(name.size() + 1);
      return true;
    }
  }
  return false;
}

long long CommandLine::integer(const std::string& name, long long fallback, long long min, long long max) {
  std::string value;
  return take(name, value) ? parse_integer(name, value, min, max) : fallback;
}

double CommandLine::real(const std::string& name, double fallback, double min, double max) {
  std::string value;
  if (!take(name, value)) return fallback;
  const std::string range = "a number in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  size_t used = 0;
  double number = 0;
  try {
    number = std::stod(value, &used);
  } catch (const std::exception&) {
    throw bad(name, value, range);
  }
  if (used != value.size() || !(number >= min && number <= max)) throw bad(name, value, range);
  return number;
}

std::string CommandLine::text(const std::string& name, const std::string& fallback) {
  std::string value;
  return take(name, value) ? value : fallback;
}

std::pair<int, int> CommandLine::grid(const std::string& name, std::pair<int, int> fallback) {
  std::string value;
  return take(name, value) ? parse_grid(name, value) : fallback;
}

std::vector<std::pair<int, int>> CommandLine::grids(const std::string& name, std::vector<std::pair<int, int>> fallback) {
  std::string value;
  if (!take(name, value)) return fallback;
  std::vector<std::pair<int, int>> grids;
  for (const std::string& item : split(value)) grids.push_back(parse_grid(name, item));
  return grids;
}

std::vector<long long> CommandLine::integers(const std::string& name, long long min, long long max) {
  std::string value;
  std::vector<long long> numbers;
  if (!take(name, value)) return numbers;
  for (const std::string& item : split(value)) numbers.push_back(parse_integer(name, item, min, max));
  return numbers;
}

bool CommandLine::flag(const std::string& name) {
  for (size_t i = 0; i < args_.size(); ++i) {
    if (!used_[i] && args_[i] == name) {
      used_[i] = true;
      return true;
    }
  }
  return false;
}

void CommandLine::finish() const {
  for (size_t i = 0; i < args_.size(); ++i) {
    if (!used_[i]) throw std::invalid_argument("unknown or repeated argument '" + args_[i] + "' (see --help)");
  }
}

}  // namespace lp::cfd
