#include "loss_model.h"

namespace lp::netem {

LossModel::LossModel(const LossParameters& parameters, std::uint64_t seed)
    : parameters_(parameters), random_(seed) {}

bool LossModel::chance(double probability) {
  // Exact at both ends: 0 never fires and 1 always fires, whatever the generator returns.
  if (probability <= 0) return false;
  if (probability >= 1) return true;
  return uniform_(random_) < probability;
}

bool LossModel::lose_next_packet() {
  if (!parameters_.burst_enabled) return chance(parameters_.bernoulli);
  // The state the packet arrives in decides its fate; then the chain takes one step (as netem does).
  const BurstLossParameters& burst = parameters_.burst;
  const bool lost = chance(in_bad_state_ ? burst.loss_in_bad : burst.loss_in_good);
  in_bad_state_ = in_bad_state_ ? !chance(burst.leave_bad) : chance(burst.enter_bad);
  return lost;
}

}  // namespace lp::netem
