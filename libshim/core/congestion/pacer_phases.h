// The datagram pacer's phase machine (datagram_pacer.h): start-up, drain, cruise with its probe
// cycle, and the back-offs on a standing queue or heavy loss. Pure: it keeps the phase, the gains
// and the counters its guards need, and is told the facts of each round (what was delivered and
// lost, the round's smallest RTT, the estimate) by the pacer, which owns the rate estimate and
// carries out what the machine decides (a back-off resets the estimate). It reads no clock: its
// time is rounds. Every constant is pacer_tuning.h's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "arq/arq_types.h"

namespace lp {

// Whether a round trip `smallest_rtt` shows start-up's queue (HyStart's delay test): above the
// minimum by an eighth of it, within [kStartupDelayMin, kStartupDelayMax]. False before a minimum.
bool startup_queue_seen(std::optional<ArqDuration> min_rtt, ArqDuration smallest_rtt);

class PacerPhases {
 public:
  enum class Phase { kStartup, kDrain, kCruise };

  // What a round showed, taken before the pacer ages its filters.
  struct RoundFacts {
    double round_rate = 0;               // the largest delivery-rate sample of this round
    double delivered_bytes = 0, lost_bytes = 0;
    std::uint64_t lost_datagrams = 0;
    std::optional<ArqDuration> min_rtt;        // the path's minimum RTT so far
    std::optional<ArqDuration> round_min_rtt;  // this round's smallest RTT (packet trains left out)
  };
  // What the pacer knows once it aged its filters at the round's end.
  struct Estimate {
    double bandwidth = 0;          // bytes per second
    double in_flight = 0;          // bytes
    ArqDuration min_rtt{0};        // the minimum RTT (or the configured one before any)
    bool busy = false;             // the sender did not run out of data in this round
    bool seeded = false;           // a seed is being judged: only its verdict leaves start-up
  };
  // What the pacer must do to its estimate: nothing, leave start-up on its queue (the pacer
  // adjusts the estimate, then enter_drain()), or back off to `rate` (the pacer resets its
  // estimate to it; the machine already drains).
  enum class Action { kNone, kLeaveStartup, kBackOff };
  struct Decision {
    Action action = Action::kNone;
    double rate = 0;
  };

  PacerPhases();

  // A round ended: first its facts (every round counts, seeded or not), then the decision.
  void measure_round(const RoundFacts& facts);
  Decision end_round(const Estimate& estimate);

  // Start-up's exits that the pacer takes outside a round's end (its delay test within a round, a
  // rejected seed): drain start-up's queue. `cap_drain`: delivery-rate samples above this rate
  // until the drain ends are the queue's (0: no cap).
  void enter_drain();
  void cap_drain(double rate) { drain_rate_cap_ = rate; }
  // A seed (warm start or jump) paces at its rate until judged; confirmed, start-up goes on from
  // `bandwidth` at a gentler gain; rejected, it drains to `bandwidth`.
  void start_seeded();
  void seed_confirmed(double bandwidth);
  void seed_rejected(double bandwidth);

  Phase phase() const { return phase_; }
  double pacing_gain() const { return pacing_gain_; }
  double window_gain() const { return window_gain_; }
  // The cap on delivery-rate samples while draining start-up's queue (0: none).
  double drain_rate_cap() const { return phase_ == Phase::kDrain ? drain_rate_cap_ : 0; }
  std::uint64_t backoffs_for_delay() const { return backoffs_for_delay_; }
  std::uint64_t backoffs_for_loss() const { return backoffs_for_loss_; }

 private:
  void back_off();

  Phase phase_ = Phase::kStartup;
  double pacing_gain_;
  double window_gain_;
  double full_bandwidth_ = 0;               // start-up: the rate to beat
  double drain_rate_cap_ = 0;
  int flat_rounds_ = 0;
  int heavy_loss_rounds_ = 0;
  int rounds_since_backoff_ = 1 << 20;
  std::uint64_t cycle_step_ = 0;            // rounds at gain 1 since the last probe
  double bandwidth_before_probe_ = 0;
  int drain_rounds_ = 0;
  bool delayed_before_ = false;             // the round before showed a standing queue
  int delayed_rounds_ = 0;                  // rounds running whose smallest RTT showed a queue
  // measure_round's verdicts, for end_round.
  double round_rate_ = 0;
  bool delayed_ = false;
  bool queue_during_probe_ = false;
  bool startup_overfilled_ = false;
  bool startup_delay_ = false;
  bool queueing_ = false;
  std::uint64_t backoffs_for_delay_ = 0;
  std::uint64_t backoffs_for_loss_ = 0;
};

const char* pacer_phase_name(PacerPhases::Phase phase);

}  // namespace lp
