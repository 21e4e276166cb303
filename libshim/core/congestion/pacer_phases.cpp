// The pacer's phases, judged once a round: start-up's exits, drain, the cruise's probe cycle and
// its back-offs on a standing queue or heavy loss.
#include "congestion/pacer_phases.h"

#include <algorithm>

#include "congestion/pacer_tuning.h"

namespace lp {

using namespace pacer_tuning;

const char* pacer_phase_name(PacerPhases::Phase phase) {
  static constexpr const char* kNames[] = {"startup", "drain", "cruise"};
  return kNames[static_cast<std::size_t>(phase)];
}

bool startup_queue_seen(std::optional<ArqDuration> min_rtt, ArqDuration smallest_rtt) {
  return min_rtt && smallest_rtt > *min_rtt + std::clamp(*min_rtt / 8, kStartupDelayMin, kStartupDelayMax);
}

PacerPhases::PacerPhases() : pacing_gain_(kStartupGain), window_gain_(kStartupGain) {}

void PacerPhases::enter_drain() {
  phase_ = Phase::kDrain;
  drain_rounds_ = 0;
  rounds_since_backoff_ = 0;  // the queue and losses start-up left behind are its own, not the path's
  pacing_gain_ = 1 / kStartupGain;
  window_gain_ = kStartupGain;
}

void PacerPhases::back_off() {
  rounds_since_backoff_ = 0;
  phase_ = Phase::kDrain;
  drain_rounds_ = 0;
  pacing_gain_ = kDrainAfterProbeGain;
  window_gain_ = kCruiseWindowGain;
}

void PacerPhases::start_seeded() {
  pacing_gain_ = 1.0;
  window_gain_ = kSeedWindowGain;
}

void PacerPhases::seed_confirmed(double bandwidth) {
  // The path carries the seed: start-up goes on from what it delivered (a seed too low still
  // doubles per round trip from there, as a cold start would from its first window).
  full_bandwidth_ = bandwidth;
  flat_rounds_ = 0;
  pacing_gain_ = kSeedStartupGain;
  window_gain_ = kStartupGain;
}

void PacerPhases::seed_rejected(double bandwidth) {
  full_bandwidth_ = bandwidth;
  enter_drain();
}

void PacerPhases::measure_round(const RoundFacts& facts) {
  round_rate_ = facts.round_rate;
  const double total = facts.lost_bytes + facts.delivered_bytes;
  const bool heavy_loss = total > 0 && facts.lost_bytes / total > kHeavyLossFraction;
  heavy_loss_rounds_ = heavy_loss ? heavy_loss_rounds_ + 1 : 0;
  startup_overfilled_ = heavy_loss && facts.lost_datagrams >= kHeavyLossMinDatagrams;
  delayed_ = facts.min_rtt && facts.round_min_rtt &&
             *facts.round_min_rtt > *facts.min_rtt + standing_queue_margin(*facts.min_rtt);
  delayed_rounds_ = delayed_ ? delayed_rounds_ + 1 : 0;
  // A probe's gain shows as room only without a queue in its round and the next: in a FIFO shared
  // with another flow, sending 1.25 x more always delivers more (a larger share of the queue),
  // which takes from that flow. Counted as room, the next probe followed at once, and a growing
  // CUBIC flow never got what it reached for.
  queue_during_probe_ = delayed_ || delayed_before_;
  delayed_before_ = delayed_;
  startup_delay_ = facts.round_min_rtt && startup_queue_seen(facts.min_rtt, *facts.round_min_rtt);
  // Only while cruising: start-up's queue is drained by the drain phase anyway.
  queueing_ = phase_ == Phase::kCruise && delayed_rounds_ >= kQueueRounds && rounds_since_backoff_ >= kBackoffHoldRounds;
  ++rounds_since_backoff_;
}

PacerPhases::Decision PacerPhases::end_round(const Estimate& estimate) {
  // A seed is judged by its verdict alone: start-up's exits would drain to the unjudged seed.
  if (estimate.seeded) return {};
  const double bandwidth = estimate.bandwidth;
  // Only a busy round can have overfilled the path (the flat-rounds exit below has the same rule).
  // In a round in which the application ran dry the queue or the losses are others' or chance:
  // the answering end of a request-response program (one ACK lost and a timeout marking a round
  // of one-unit answers lost) would leave start-up and cruise at what its answers delivered.
  if (phase_ == Phase::kStartup && estimate.busy && (startup_overfilled_ || startup_delay_)) {
    // Start-up overfilled the path: drain the queue it built and cruise at what it delivered.
    return {Action::kLeaveStartup, 0};
  }
  if (phase_ == Phase::kCruise && heavy_loss_rounds_ >= kHeavyLossRounds && rounds_since_backoff_ > kBackoffHoldRounds) {
    ++backoffs_for_loss_;
    heavy_loss_rounds_ = 0;
    back_off();
    return {Action::kBackOff, kLossBackoffFactor * bandwidth};
  }
  if (queueing_) {
    delayed_rounds_ = 0;
    // The rate the bottleneck delivered while the queue stood, not the older, larger estimate
    // (another flow took part of it); a round cut short by losses says less than half of it.
    ++backoffs_for_delay_;
    back_off();
    return {Action::kBackOff, kDelayBackoffFactor * std::clamp(round_rate_, bandwidth / 2, bandwidth)};
  }
  switch (phase_) {
    case Phase::kStartup:
      // A round in which the application ran out of data says nothing of the path (BBR's rule):
      // counting them ends start-up at the rate of small bursts, and every later burst is paced at it.
      if (bandwidth >= full_bandwidth_ * kStartupGrowth) {
        full_bandwidth_ = bandwidth;
        flat_rounds_ = 0;
      } else if (estimate.busy && ++flat_rounds_ >= kStartupFlatRounds) {
        enter_drain();
      }
      break;
    case Phase::kDrain:
      if (estimate.in_flight <= bandwidth * seconds_of(estimate.min_rtt) || ++drain_rounds_ >= kMaxDrainRounds) {
        phase_ = Phase::kCruise;
        drain_rate_cap_ = 0;
        cycle_step_ = 0;
        pacing_gain_ = 1.0;
        window_gain_ = kCruiseWindowGain;
      }
      break;
    case Phase::kCruise:
      if (pacing_gain_ == kProbeGain) {
        // The probe's queue goes in the next round. A probe the application left short of data
        // built none: draining after it only slows the next small batch.
        pacing_gain_ = estimate.busy ? kDrainAfterProbeGain : 1.0;
        if (!estimate.busy) cycle_step_ = 0;
      } else if (pacing_gain_ == kDrainAfterProbeGain) {
        // The probe's own datagrams were acknowledged in this round: did they find room?
        const bool room = bandwidth >= bandwidth_before_probe_ * kProbeGrowth && !queue_during_probe_;
        pacing_gain_ = room ? kProbeGain : 1.0;
        if (room) bandwidth_before_probe_ = bandwidth;
        cycle_step_ = 0;
      } else if (++cycle_step_ >= kCycleRounds - 2 && !delayed_) {
        // (Not into a standing queue: the delay test backs off from it instead.)
        pacing_gain_ = kProbeGain;
        bandwidth_before_probe_ = bandwidth;
      }
      break;
  }
  return {};
}

}  // namespace lp
