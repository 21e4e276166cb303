// Start-up's seeds: the packet train of the start-up jump, timed by the receiver's arrivals, and
// the warm start's rate from the path cache; both judged against what the path then delivers.
#include "congestion/datagram_pacer.h"

#include <algorithm>

#include "congestion/pacer_tuning.h"

namespace lp {

using namespace pacer_tuning;
using std::chrono::duration_cast;

// Each burst's arrivals, as the ACKs report them: the receiver's times, not the ACKs'. Timed by
// its ACKs a train's last units waited for the ACK delay (kDatagramAckDelay, 1-2 ms at the event
// loop's resolution) and a loaded receiver's ACKs come late and lumped, so the ACKs' own times
// misread the bottleneck, both low and high.
void DatagramPacer::time_train_arrivals(ArqTime now, const std::optional<Arrivals>& arrivals) {
  const std::chrono::nanoseconds newest =
      arrivals ? arrivals->newest : duration_cast<std::chrono::nanoseconds>(now.time_since_epoch());
  std::size_t bursts_acked = 0;
  for (const AckedInBurst& acked : ack_bursts_) bursts_acked += acked.datagrams > 0;
  // The ACK's arrival times are its burst's alone if it delivered nothing else.
  const bool alone = bursts_acked == 1 && acked_outside_train_ == 0;
  for (std::size_t b = 0; b < ack_bursts_.size(); ++b) {
    const AckedInBurst& acked = ack_bursts_[b];
    if (acked.datagrams == 0) continue;
    train_acked_ = true;
    TrainBurst& burst = train_bursts_[b];
    if (!burst.arrivals_from) {
      // The burst's first ACK starts its clock: at the first arrival it reports, if every one it
      // counts is this burst's (what arrived after it is measured); else at its newest.
      if (alone && arrivals && arrivals->count >= 2 && arrivals->count == acked.datagrams) {
        burst.arrivals_from = arrivals->first;
        burst.measured_bytes = acked.bytes * (acked.datagrams - 1) / acked.datagrams;
      } else {
        burst.arrivals_from = newest;
      }
      burst.arrivals_to = newest;
      continue;
    }
    // What a later ACK delivered arrived after the previous one's newest and by its own newest:
    // unless it also delivered others (its newest may be theirs), or reports no later arrival
    // (a long ACK's further datagrams, datagram_channel.h).
    if (!alone || newest <= burst.arrivals_to) continue;
    burst.measured_bytes += acked.bytes;
    burst.arrivals_to = newest;
  }
}

void DatagramPacer::measure_train() {
  ++trains_;
  // Each burst on its own: its arrivals must be spread more than its sends (else it measured the
  // sender). The train is the sum of the bursts that pass.
  std::uint64_t sent = 0, sent_bytes = 0, bytes_measured = 0;
  std::chrono::nanoseconds arrival_span{0};
  for (const TrainBurst& burst : train_bursts_) {
    if (!burst.arrivals_from || burst.measured_bytes == 0) continue;
    const std::chrono::nanoseconds burst_arrival_span = burst.arrivals_to - *burst.arrivals_from;
    const ArqDuration burst_send_span = duration_cast<ArqDuration>(burst.last_sent - burst.first_sent);
    if (seconds_of(burst_arrival_span) < kTrainSpread * seconds_of(burst_send_span)) {
      refuse_train(TrainRefusal::kSenderPaced);
      continue;
    }
    sent += burst.sent;
    sent_bytes += burst.sent_bytes;
    bytes_measured += burst.measured_bytes;
    arrival_span += burst_arrival_span;
  }
  std::optional<TrainRefusal> refusal;
  if (sent < kMinTrainDatagrams) {
    refusal = TrainRefusal::kFewDatagrams;
  } else if (bytes_measured * kTrainCoverDivisor < sent_bytes) {
    refusal = TrainRefusal::kLittleMeasured;
  } else if (arrival_span < kMinTrainArrivalSpan) {
    refusal = TrainRefusal::kShortSpan;
  }
  train_acked_ = false;
  train_bursts_.clear();
  if (phase_ != Phase::kStartup || seed_state_ != Seed::kNone) return;
  // Not a measurement of the bottleneck: start-up doubles on, and the next burst is another train.
  if (refusal) return refuse_train(*refusal);
  train_rate_ = static_cast<double>(bytes_measured) / seconds_of(arrival_span);
  const double jump_rate = kJumpShare * train_rate_;
  // Only a jump: a train slower than start-up already paces says nothing new.
  if (jump_rate <= pacing_rate()) return refuse_train(TrainRefusal::kSlowerThanStartup);
  jump_state_ = Jump::kTaken;
  start_seeded(jump_rate);
}

void DatagramPacer::refuse_train(TrainRefusal why) { ++train_refusals_[static_cast<std::size_t>(why)]; }

bool DatagramPacer::seed_worth_taking(double rate, ArqDuration min_rtt) {
  // A seed below what a cold start-up sends in its first round trip would only slow it down.
  return min_rtt > ArqDuration::zero() && kWarmStartShare * rate * seconds_of(min_rtt) >= kInitialWindowBytes;
}

bool DatagramPacer::seed(double rate, ArqDuration min_rtt) {
  if (seed_state_ != Seed::kNone || sampler_.delivered() > 0 || lost_bytes_ > 0 || !seed_worth_taking(rate, min_rtt)) {
    return false;
  }
  initial_rtt_ = min_rtt;
  start_seeded(kWarmStartShare * rate);
  return true;
}

void DatagramPacer::start_seeded(double rate) {
  seed_state_ = Seed::kSeeded;
  seed_rate_ = rate;
  seed_from_send_index_ = next_send_index_;  // what left before was paced at another rate
  pacing_gain_ = 1.0;
  window_gain_ = kSeedWindowGain;
}

DatagramPacer::SeedVerdict DatagramPacer::seed_verdict(const SeedEvidence& e) {
  const double rate = e.span > ArqDuration::zero() ? e.delivered / seconds_of(e.span) : 0;
  // Heavy loss: the seed overfills the bottleneck's queue; the ACKs came at the bottleneck's rate.
  const double total = e.lost + e.delivered;
  if (total >= kSeedEvidenceDatagrams * kDatagramBytes && e.lost > kHeavyLossFraction * total) {
    return {Seed::kRejected, std::min(rate, e.seed_rate)};
  }
  if (e.span < e.round_trip) return {Seed::kSeeded, rate};
  if (rate >= kSeedConfirmShare * e.seed_rate) return {Seed::kConfirmed, rate};
  // An application that sent less than the seed says nothing of the path: the next busy round
  // trip is judged (kNone).
  return {e.application_limited ? Seed::kNone : Seed::kRejected, rate};
}

void DatagramPacer::judge_seed(ArqTime now) {
  if (seed_state_ != Seed::kSeeded || !seed_judged_from_) return;
  const SeedVerdict verdict = seed_verdict({static_cast<double>(sampler_.delivered() - seed_delivered_from_),
                                            static_cast<double>(lost_bytes_ - seed_lost_from_),
                                            duration_cast<ArqDuration>(now - *seed_judged_from_),
                                            rtt_.min().value_or(initial_rtt_), seed_rate_, seed_application_limited_});
  if (verdict.state == Seed::kNone) seed_judged_from_.reset();
  if (verdict.state == Seed::kConfirmed || verdict.state == Seed::kRejected) end_seed(verdict.state, verdict.rate);
}

void DatagramPacer::end_seed(Seed verdict, double delivered_rate) {
  seed_state_ = verdict;
  if (verdict == Seed::kConfirmed) {
    // The path carries the seed: start-up goes on from what it delivered (a seed too low still
    // doubles per round trip from there, as a cold start would from its first window).
    rate_filter_.offer(delivered_rate);
    full_bandwidth_ = bandwidth();
    flat_rounds_ = 0;
    pacing_gain_ = kSeedStartupGain;
    window_gain_ = kStartupGain;
    return;
  }
  // The path delivered far less than the seed: its rate is what it delivered, and the queue the
  // seed built drains before cruising at it.
  train_floor_open_ = false;
  rate_filter_.reset(std::max(delivered_rate, kMinPacingRate));
  full_bandwidth_ = bandwidth();
  enter_drain();
}

}  // namespace lp
