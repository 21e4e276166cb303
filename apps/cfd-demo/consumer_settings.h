// ConsumerSettings: how the producer wants its consumers to run (output, rendering, slowness, drop
// policy, how long to wait for them), the same for every transport. The producer hands each
// consumer its own FrameConsumer::Options from them (PVM: as spawn arguments; MPI: in a message).
#pragma once

#include <string>
#include <vector>

#include "frame_consumer.h"

namespace lp::cfd {

struct ConsumerSettings {
  int consumers = 1;
  std::string output_folder;       // consumer i writes to <output_folder>/consumer-<i>
  int render_every = 1;
  std::vector<long long> slow_ms;  // per consumer; missing entries are 0
  int zoom = 1;
  double summary_timeout_seconds = 0;  // after the end was announced; 0 = wait as long as needed
  bool drops_allowed = false;      // passed on: gaps from a configured drop policy are no failure
  bool live = false;               // live display: rendering off the receive path, newest frame only

  // Consumer `index`'s options (its folder and slowness; host is left for the consumer to fill in).
  FrameConsumer::Options for_consumer(int index) const;
  // Throws std::invalid_argument if the settings do not fit the number of consumers.
  void check() const;
};

}  // namespace lp::cfd
