// The pacer's outputs (rate, window, catch-up) and what the sender tells it: sends, timeouts,
// an empty send queue. The units beside it: pacer_delivery.cpp (ACKs, delivery-rate samples,
// loss), pacer_rounds.cpp (rounds; the phase machine is pacer_phases.h),
// pacer_start.cpp (start-up's seeds).
#include "congestion/datagram_pacer.h"

#include <algorithm>
#include <iterator>

#include "congestion/pacer_tuning.h"

namespace lp {

using namespace pacer_tuning;
using std::chrono::duration_cast;

const char* train_refusal_name(DatagramPacer::TrainRefusal why) {
  static constexpr const char* kNames[] = {"sender_paced", "few_datagrams", "little_measured", "short_span",
                                           "slower_than_startup"};
  static_assert(std::size(kNames) == static_cast<std::size_t>(DatagramPacer::TrainRefusal::kCount));
  return kNames[static_cast<std::size_t>(why)];
}

const char* pacer_jump_name(const DatagramPacer& pacer) {
  static constexpr const char* kNames[] = {"off", "waiting"};
  if (pacer.jump_state() == DatagramPacer::Jump::kTaken) return pacer_seed_name(pacer.seed_state());
  return kNames[static_cast<std::size_t>(pacer.jump_state())];
}

DatagramPacer::DatagramPacer(ArqDuration initial_rtt, bool start_jump, bool refill_catch_up)
    : initial_rtt_(std::max<ArqDuration>(initial_rtt, std::chrono::milliseconds(1))),
      jump_state_(start_jump ? Jump::kWaiting : Jump::kOff),
      refill_catch_up_(refill_catch_up) {}

double DatagramPacer::train_floor() const {
  if (!train_floor_open_ || phases_.phase() == Phase::kStartup) return 0;
  return kTrainFloorShare * train_rate_;
}

double DatagramPacer::bandwidth() const {
  const double measured = std::max(rate_filter_.max(), train_floor());
  if (seed_.state() == Seed::kSeeded) return std::max(measured, seed_.rate());
  // A cold start-up never goes below its first window per round trip: the first ACKs (one
  // datagram's sample) measure far less, and would hold the second round below the first.
  const double first_window_rate = kInitialWindowBytes / seconds_of(rtt_.min().value_or(initial_rtt_));
  if (phases_.phase() == Phase::kStartup && seed_.state() == Seed::kNone) return std::max(measured, first_window_rate);
  if (measured > 0) return measured;
  return first_window_rate;  // nothing measured yet
}

double DatagramPacer::pacing_rate() const {
  double rate = phases_.pacing_gain() * bandwidth();
  if (phases_.phase() == Phase::kStartup && jump_state_ == Jump::kTaken && seed_.state() == Seed::kConfirmed) {
    rate = std::min(rate, kJumpCeilingGain * std::max(train_rate_, bandwidth()));
  }
  return std::max(kMinPacingRate, rate);
}

std::size_t DatagramPacer::window_bytes() const {
  if (rate_filter_.max() <= 0 && seed_.state() != Seed::kSeeded) return static_cast<std::size_t>(kInitialWindowBytes);
  const ArqDuration min_rtt = rtt_.min().value_or(initial_rtt_);
  if (phases_.phase() == Phase::kStartup && seed_.state() != Seed::kSeeded) {
    return static_cast<std::size_t>(std::max(kMinWindowBytes, kStartupWindowGain * bandwidth() * seconds_of(min_rtt)));
  }
  const ArqDuration rtt = std::clamp(rtt_.smoothed().value_or(min_rtt), min_rtt, duration_cast<ArqDuration>(min_rtt * kWindowRttCap));
  const double bdp = bandwidth() * seconds_of(rtt);
  return static_cast<std::size_t>(std::max(kMinWindowBytes, phases_.window_gain() * bdp));
}

void DatagramPacer::on_sent(ArqTime now, std::uint64_t id, std::size_t bytes) {
  const bool retransmission = highest_id_sent_ && id <= *highest_id_sent_;
  // The ARQ re-sends it. Its fast retransmit also fires on reordering, which is not congestion:
  // the old copy counts as lost only if the reordering window says so too (else it just leaves
  // the count in flight).
  if (auto it = outstanding_.find(id); it != outstanding_.end()) {
    if (newest_delivered_sent_at_ - it->second.sent_at >= reorder_window()) {
      mark_lost(it);
    } else {
      in_flight_ -= it->second.bytes;
      train_.leave(it->second.train);
      send_order_.erase(it->second.send_index);
      outstanding_.erase(it);
    }
  }
  if (!highest_id_sent_ || id > *highest_id_sent_) highest_id_sent_ = id;
  round_sent_bytes_ += bytes;
  // A new path's first datagrams leave as a packet train (packet_train.h).
  if (jump_state_ == Jump::kWaiting && phases_.phase() == Phase::kStartup && seed_.state() == Seed::kNone && train_.idle()) {
    train_.open();
  }
  const PacketTrain::Place place = train_.on_sent(now, bytes, retransmission);
  const bool train = place.train != 0;
  const std::uint64_t index = next_send_index_++;
  // Nothing in flight: the next delivery-rate interval starts now, not at the last delivery.
  outstanding_[id] = Sent{index, now, bytes, sampler_.on_sent(now, in_flight_), retransmission, place};
  send_order_[index] = id;
  in_flight_ += bytes;
  const ArqTime start = std::max(next_send_, now - catch_up());
  const auto gap = duration_cast<ArqTime::duration>(std::chrono::duration<double>(bytes / pacing_rate()));
  if (!ran_dry_) {
    if (start > next_send_) behind_ += duration_cast<ArqDuration>(start - next_send_);
    // The part of this datagram's sending time that had passed when it left: made up in a burst.
    if (start < now && !train) caught_up_ += duration_cast<ArqDuration>(std::min(gap, now - start));
  }
  ran_dry_ = false;
  next_send_ = train ? start : start + gap;  // a train's datagrams leave back to back
}

ArqDuration DatagramPacer::catch_up() const {
  if (!refill_catch_up_ || ran_dry_ || phases_.phase() != Phase::kCruise || !rtt_.min()) return kCatchUp;
  // The pipe as ACKs see it (the smoothed RTT: a loaded receiver's late ACKs keep more in flight),
  // up to kCatchUpRttCap minimum RTTs.
  const ArqDuration rtt = std::clamp(rtt_.smoothed().value_or(*rtt_.min()), *rtt_.min(),
                                     duration_cast<ArqDuration>(*rtt_.min() * kCatchUpRttCap));
  const double room = bandwidth() * seconds_of(rtt) - static_cast<double>(in_flight_);
  const auto refill = duration_cast<ArqDuration>(std::chrono::duration<double>(std::max(0.0, room) / pacing_rate()));
  const ArqDuration most = std::min(kMaxCatchUp, duration_cast<ArqDuration>(*rtt_.min() * kCruiseCatchUpRttShare));
  return std::max(kCatchUp, std::min(refill, most));
}

void DatagramPacer::on_unacknowledged_sent(ArqTime now, std::size_t bytes) {
  const ArqTime start = std::max(next_send_, now - catch_up());
  next_send_ = start + duration_cast<ArqTime::duration>(std::chrono::duration<double>(bytes / pacing_rate()));
}

void DatagramPacer::on_timeout() {
  while (!outstanding_.empty()) mark_lost(outstanding_.begin());
}

void DatagramPacer::forget_in_flight() {
  outstanding_.clear();
  send_order_.clear();
  in_flight_ = 0;
  train_.forget();  // a train sealed under the old keys measures nothing
}

void DatagramPacer::on_application_limited() {
  sampler_.on_application_limited(in_flight_);
  ran_dry_ = true;
  round_application_limited_ = true;
  seed_.on_application_limited();
}

}  // namespace lp
