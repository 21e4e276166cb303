// LossModel: decides, packet by packet, whether the link loses a packet. Bernoulli (independent
// losses) or Gilbert-Elliott (a two-state Markov chain that produces bursts of losses).
#pragma once

#include <cstdint>
#include <random>

namespace lp::netem {

// Gilbert-Elliott burst loss. All values are probabilities in [0, 1], applied once per packet.
// The long-run loss rate is loss_in_good + (loss_in_bad - loss_in_good) * enter_bad / (enter_bad + leave_bad).
struct BurstLossParameters {
  double enter_bad = 0;     // p: good -> bad transition
  double leave_bad = 1;     // r: bad -> good transition (mean burst length 1/r packets)
  double loss_in_bad = 1;   // 1-h: loss probability while in the bad state
  double loss_in_good = 0;  // 1-k: loss probability while in the good state
};

struct LossParameters {
  double bernoulli = 0;  // independent loss probability; ignored when burst is enabled
  bool burst_enabled = false;
  BurstLossParameters burst;
};

class LossModel {
 public:
  LossModel(const LossParameters& parameters, std::uint64_t seed);

  // True when the next packet is lost. Advances the burst state machine by one packet.
  bool lose_next_packet();

 private:
  bool chance(double probability);

  LossParameters parameters_;
  std::mt19937_64 random_;
  std::uniform_real_distribution<double> uniform_{0.0, 1.0};
  bool in_bad_state_ = false;
};

}  // namespace lp::netem
