// Start-up's seeds: the packet train's reading (packet_train.cpp) for the start-up jump, and the
// warm start's rate from the path cache; both judged against what the path then delivers.
#include "congestion/datagram_pacer.h"

#include <algorithm>

#include "congestion/pacer_tuning.h"

namespace lp {

using namespace pacer_tuning;
using std::chrono::duration_cast;

void DatagramPacer::measure_train() {
  ++trains_;
  const PacketTrain::Reading reading = train_.measure();
  train_refusals_[static_cast<std::size_t>(TrainRefusal::kSenderPaced)] += reading.sender_paced;
  if (phases_.phase() != Phase::kStartup || seed_state_ != Seed::kNone) return;
  // Not a measurement of the bottleneck: start-up doubles on, and the next burst is another train.
  if (reading.refusal) return refuse_train(*reading.refusal);
  train_rate_ = reading.rate;
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
  phases_.start_seeded();
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
    phases_.seed_confirmed(bandwidth());
    return;
  }
  // The path delivered far less than the seed: its rate is what it delivered, and the queue the
  // seed built drains before cruising at it.
  train_floor_open_ = false;
  rate_filter_.reset(std::max(delivered_rate, kMinPacingRate));
  phases_.seed_rejected(bandwidth());
}

}  // namespace lp
