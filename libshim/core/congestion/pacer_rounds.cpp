// The pacer's phases, judged once a round: start-up's exits, drain, the cruise's probe cycle and
// its back-offs on a standing queue or heavy loss.
#include "congestion/datagram_pacer.h"

#include <algorithm>

#include "congestion/pacer_tuning.h"
#include "path/path_estimator.h"

namespace lp {

using namespace pacer_tuning;

void DatagramPacer::back_off(double new_rate) {
  train_floor_open_ = false;
  rate_filter_.reset(std::max(new_rate, kMinPacingRate), true);
  rounds_since_backoff_ = 0;
  phase_ = Phase::kDrain;
  drain_rounds_ = 0;
  pacing_gain_ = kDrainAfterProbeGain;
  window_gain_ = kCruiseWindowGain;
}

void DatagramPacer::leave_startup_on_queue() {
  // The rate delivered while start-up's queue stood is a FIFO's share of an overfilled bottleneck:
  // beside another flow, more than that flow leaves (cruising at it keeps a queue growing until it
  // overflows). The largest rate delivered without a queue is what the path carried for us alone;
  // probes find the rest.
  // Only after a jump: doubling's last calm samples lag a round behind (half the rate), and a cold
  // start-up's estimate is left as it was.
  if (jump_state_ == Jump::kTaken && startup_calm_rate_ > 0 && startup_calm_rate_ < rate_filter_.max()) {
    rate_filter_.reset(startup_calm_rate_);
    drain_rate_cap_ = startup_calm_rate_;
  }
  enter_drain();
}

void DatagramPacer::enter_drain() {
  phase_ = Phase::kDrain;
  drain_rounds_ = 0;
  rounds_since_backoff_ = 0;  // the queue and losses start-up left behind are its own, not the path's
  pacing_gain_ = 1 / kStartupGain;
  window_gain_ = kStartupGain;
}

void DatagramPacer::end_round(ArqTime now) {
  const double this_round = rate_filter_.current();
  const double lost = static_cast<double>(round_lost_bytes_);
  const double total = lost + static_cast<double>(round_delivered_bytes_);
  const bool heavy_loss = total > 0 && lost / total > kHeavyLossFraction;
  heavy_loss_rounds_ = heavy_loss ? heavy_loss_rounds_ + 1 : 0;
  const bool startup_overfilled = heavy_loss && round_lost_datagrams_ >= kHeavyLossMinDatagrams;
  const bool delayed =
      rtt_.min() && round_min_rtt_ &&
      *round_min_rtt_ > *rtt_.min() + standing_queue_margin(*rtt_.min());
  delayed_rounds_ = delayed ? delayed_rounds_ + 1 : 0;
  // A probe's gain shows as room only without a queue in its round and the next: in a FIFO shared
  // with another flow, sending 1.25 x more always delivers more (a larger share of the queue),
  // which takes from that flow. Counted as room, the next probe followed at once, and a growing
  // CUBIC flow never got what it reached for.
  const bool queue_during_probe = delayed || delayed_before_;
  delayed_before_ = delayed;
  // Needed re-sends in rounds without a queue (the TCP sessions' measure: retransmissions while
  // the RTT stays below PathEstimator::kQueueRttRatio x the minimum): the path's random loss,
  // which the carrier choice weighs; a full queue's drops are left out. Not the loss counted
  // above: the ARQ's fast retransmit re-sends most random losses inside the reordering window,
  // which counts them as reordering.
  if (rtt_.min() && round_min_rtt_ && *round_min_rtt_ < *rtt_.min() * PathEstimator::kQueueRttRatio) {
    calm_sent_bytes_ += round_sent_bytes_;
    calm_resent_bytes_ += round_resent_bytes_;
  }
  round_sent_bytes_ = round_resent_bytes_ = 0;
  const bool startup_delay = round_min_rtt_ && queue_seen(*round_min_rtt_);
  // Only while cruising: start-up's queue is drained by the drain phase anyway.
  const bool queueing = phase_ == Phase::kCruise && delayed_rounds_ >= kQueueRounds && rounds_since_backoff_ >= kBackoffHoldRounds;
  // Forget a minimum RTT not seen again for kMinRttWindow: the path itself got longer.
  rtt_.expire(now, round_min_rtt_, kMinRttWindow);
  ++round_count_;
  ++rounds_since_backoff_;
  next_round_send_index_ = next_send_index_;
  round_started_ = now;
  // The estimate ages only over rounds in which the sender was busy: rounds of an application
  // that sends a few small messages between bursts would otherwise push the bursts' rate out of
  // the filter within 10 round trips, and the next burst would start from nothing.
  const bool busy_round = !round_application_limited_;
  if (busy_round && phase_ == Phase::kCruise) train_floor_open_ = false;  // the path measured while busy
  if (busy_round && phase_ != Phase::kStartup && seed_state_ != Seed::kSeeded) path_rate_ = std::max(path_rate_, bandwidth());
  if (busy_round) rate_filter_.advance();
  round_application_limited_ = sampler_.application_limited();
  round_delivered_bytes_ = round_lost_bytes_ = round_lost_datagrams_ = 0;
  round_min_rtt_.reset();
  // A seed is judged by judge_seed alone: start-up's exits would drain to the unjudged seed.
  if (seed_state_ == Seed::kSeeded) return;

  // Only a busy round can have overfilled the path (the flat-rounds exit below has the same rule).
  // In a round in which the application ran dry the queue or the losses are others' or chance:
  // the answering end of a request-response program (one ACK lost and a timeout marking a round
  // of one-unit answers lost) would leave start-up and cruise at what its answers delivered.
  if (phase_ == Phase::kStartup && busy_round && (startup_overfilled || startup_delay)) {
    // Start-up overfilled the path: drain the queue it built and cruise at what it delivered.
    leave_startup_on_queue();
    return;
  }
  if (phase_ == Phase::kCruise && heavy_loss_rounds_ >= kHeavyLossRounds && rounds_since_backoff_ > kBackoffHoldRounds) {
    ++backoffs_for_loss_;
    heavy_loss_rounds_ = 0;
    back_off(kLossBackoffFactor * bandwidth());
    return;
  }
  if (queueing) {
    delayed_rounds_ = 0;
    // The rate the bottleneck delivered while the queue stood, not the older, larger estimate
    // (another flow took part of it); a round cut short by losses says less than half of it.
    ++backoffs_for_delay_;
    back_off(kDelayBackoffFactor * std::clamp(this_round, bandwidth() / 2, bandwidth()));
    return;
  }
  switch (phase_) {
    case Phase::kStartup:
      // A round in which the application ran out of data says nothing of the path (BBR's rule):
      // counting them ends start-up at the rate of small bursts, and every later burst is paced at it.
      if (bandwidth() >= full_bandwidth_ * kStartupGrowth) {
        full_bandwidth_ = bandwidth();
        flat_rounds_ = 0;
      } else if (busy_round && ++flat_rounds_ >= kStartupFlatRounds) {
        enter_drain();
      }
      break;
    case Phase::kDrain:
      if (static_cast<double>(in_flight_) <= bandwidth() * seconds_of(rtt_.min().value_or(initial_rtt_)) ||
          ++drain_rounds_ >= kMaxDrainRounds) {
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
        pacing_gain_ = busy_round ? kDrainAfterProbeGain : 1.0;
        if (!busy_round) cycle_step_ = 0;
      } else if (pacing_gain_ == kDrainAfterProbeGain) {
        // The probe's own datagrams were acknowledged in this round: did they find room?
        const bool room = bandwidth() >= bandwidth_before_probe_ * kProbeGrowth && !queue_during_probe;
        pacing_gain_ = room ? kProbeGain : 1.0;
        if (room) bandwidth_before_probe_ = bandwidth();
        cycle_step_ = 0;
      } else if (++cycle_step_ >= kCycleRounds - 2 && !delayed) {
        // (Not into a standing queue: the delay test backs off from it instead.)
        pacing_gain_ = kProbeGain;
        bandwidth_before_probe_ = bandwidth();
      }
      break;
  }
}

}  // namespace lp
