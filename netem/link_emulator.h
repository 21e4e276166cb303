// LinkEmulator: the event loop of lp-linkemu. Reads packets from site A's and site B's TUN devices,
// passes each through its direction's LinkModel, and writes it to the other site when it arrives.
// Waits with ppoll and a nanosecond timeout on CLOCK_MONOTONIC; counters go to a stats file, written
// by a thread of its own (stats_writer.h): the packet loop never waits for the disk.
#pragma once

#include <csignal>
#include <cstdint>
#include <string>

#include "link_model.h"
#include "stats_writer.h"
#include "tun_device.h"

namespace lp::netem {

class LinkEmulator {
 public:
  LinkEmulator(TunDevice site_a, TunDevice site_b, const LinkParameters& a_to_b, const LinkParameters& b_to_a,
               std::uint64_t seed, std::string stats_file);

  // Runs until `stop` becomes non-zero. Signals that set it must be blocked by the caller: they are
  // unblocked only while waiting (ppoll's mask), so none is lost between the check and the wait.
  void run(const volatile std::sig_atomic_t& stop);

  // Recorded in the stats file: the SCHED_FIFO priority the emulator runs at (0: normal scheduling).
  void set_realtime_priority(int priority) { realtime_priority_ = priority; }

  // Writes the counters to the stats file now, in this thread (atomic rename); nothing without one.
  void write_stats() const;

 private:
  struct Direction {
    const char* name;  // "a_to_b" or "b_to_a": the prefix of its lines in the stats file
    TunDevice* from;
    TunDevice* to;
    LinkModel model;
    std::uint64_t write_errors = 0;
  };

  void deliver_arrived(Direction& direction, Nanoseconds now);
  void accept_waiting(Direction& direction);
  Nanoseconds wait_budget(Nanoseconds now, Nanoseconds next_stats) const;
  std::string stats_text() const;

  TunDevice site_a_;
  TunDevice site_b_;
  Direction a_to_b_;
  Direction b_to_a_;
  Nanoseconds started_;
  int realtime_priority_ = 0;
  StatsWriter stats_;  // last: its thread stops (and writes what is pending) before the rest goes
};

}  // namespace lp::netem
