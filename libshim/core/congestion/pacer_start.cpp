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
  if (phases_.phase() != Phase::kStartup || seed_.state() != Seed::kNone) return;
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

bool DatagramPacer::seed(double rate, ArqDuration min_rtt) {
  if (seed_.state() != Seed::kNone || sampler_.delivered() > 0 || lost_bytes_ > 0 || !PacerSeed::worth_taking(rate, min_rtt)) {
    return false;
  }
  initial_rtt_ = min_rtt;
  start_seeded(kWarmStartShare * rate);
  return true;
}

void DatagramPacer::start_seeded(double rate) {
  seed_.start(rate, next_send_index_);  // what left before was paced at another rate
  phases_.start_seeded();
}

void DatagramPacer::judge_seed(ArqTime now) {
  if (const auto verdict = seed_.judge(now, sampler_.delivered(), lost_bytes_, rtt_.min().value_or(initial_rtt_))) {
    end_seed(verdict->state, verdict->rate);
  }
}

void DatagramPacer::end_seed(Seed verdict, double delivered_rate) {
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
