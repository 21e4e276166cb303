// EmulatorOptions: lp-linkemu's command line, parsed and validated. Every bad value is an error that
// names the option and the accepted range; nothing falls back to a silent default.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "link_model.h"

namespace lp::netem {

// A bad command line; what() names the option, e.g. "--loss: '120' is not a number in [0, 100]".
class OptionError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct EmulatorOptions {
  std::string netns_a;              // site A's network namespace (a name under /var/run/netns)
  std::string netns_b;              // site B's
  std::string tun_name = "lpwan0";  // the TUN device's name inside each namespace
  std::string stats_file;           // counters, rewritten every second and at exit; empty: none
  std::uint64_t seed = 0;           // random seed for loss and jitter; 0: a fresh one per run
  int realtime_priority = 0;        // SCHED_FIFO priority (1-99) for timely delivery; 0: normal scheduling
  LinkParameters a_to_b;            // the forward direction
  LinkParameters b_to_a;            // the back direction
  bool validate_only = false;       // --validate: check the options, print the effective link, exit

  // Parses argv; throws OptionError. Returns false (after printing usage) for --help.
  bool parse(int argc, char** argv);

  static std::string usage();

  // The effective parameters of both directions as key=value lines (used by --validate).
  std::string describe() const;
};

}  // namespace lp::netem
