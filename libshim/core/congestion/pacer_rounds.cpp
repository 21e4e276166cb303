// The pacer's rounds: what each showed (loss, delay, the random loss the cache keeps), the filters
// aged, and the phase machine's decision (pacer_phases.h) carried out on the estimate.
#include "congestion/datagram_pacer.h"

#include <algorithm>

#include "congestion/pacer_tuning.h"
#include "path/path_estimator.h"

namespace lp {

using namespace pacer_tuning;

void DatagramPacer::back_off(double new_rate) {
  train_floor_open_ = false;
  rate_filter_.reset(std::max(new_rate, kMinPacingRate), true);
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
    phases_.cap_drain(startup_calm_rate_);
  }
  phases_.enter_drain();
}

void DatagramPacer::end_round(ArqTime now) {
  phases_.measure_round({rate_filter_.current(), static_cast<double>(round_delivered_bytes_),
                         static_cast<double>(round_lost_bytes_), round_lost_datagrams_, rtt_.min(), round_min_rtt_});
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
  // Forget a minimum RTT not seen again for kMinRttWindow: the path itself got longer.
  rtt_.expire(now, round_min_rtt_, kMinRttWindow);
  ++round_count_;
  next_round_send_index_ = next_send_index_;
  round_started_ = now;
  // The estimate ages only over rounds in which the sender was busy: rounds of an application
  // that sends a few small messages between bursts would otherwise push the bursts' rate out of
  // the filter within 10 round trips, and the next burst would start from nothing.
  const bool busy_round = !round_application_limited_;
  const Phase phase = phases_.phase();
  if (busy_round && phase == Phase::kCruise) train_floor_open_ = false;  // the path measured while busy
  if (busy_round && phase != Phase::kStartup && seed_.state() != Seed::kSeeded) path_rate_ = std::max(path_rate_, bandwidth());
  if (busy_round) rate_filter_.advance();
  round_application_limited_ = sampler_.application_limited();
  round_delivered_bytes_ = round_lost_bytes_ = round_lost_datagrams_ = 0;
  round_min_rtt_.reset();
  const PacerPhases::Decision decision =
      phases_.end_round({bandwidth(), static_cast<double>(in_flight_), rtt_.min().value_or(initial_rtt_), busy_round,
                         seed_.state() == Seed::kSeeded});
  switch (decision.action) {
    case PacerPhases::Action::kNone: break;
    case PacerPhases::Action::kLeaveStartup: leave_startup_on_queue(); break;
    case PacerPhases::Action::kBackOff: back_off(decision.rate); break;
  }
}

}  // namespace lp
