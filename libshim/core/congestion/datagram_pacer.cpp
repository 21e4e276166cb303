// The pacer's outputs (rate, window, catch-up) and what the sender tells it: sends, timeouts,
// an empty send queue. The units beside it: pacer_delivery.cpp (ACKs, delivery-rate samples,
// loss), pacer_rounds.cpp (the phases, round by round), pacer_start.cpp (start-up's seeds).
#include "congestion/datagram_pacer.h"

#include <algorithm>

#include "congestion/pacer_tuning.h"

namespace lp {

using namespace pacer_tuning;
using std::chrono::duration_cast;

const char* pacer_seed_name(DatagramPacer::Seed seed) {
  switch (seed) {
    case DatagramPacer::Seed::kNone: return "none";
    case DatagramPacer::Seed::kSeeded: return "seeded";
    case DatagramPacer::Seed::kConfirmed: return "confirmed";
    case DatagramPacer::Seed::kRejected: return "rejected";
  }
  return "?";
}

const char* train_refusal_name(DatagramPacer::TrainRefusal why) {
  switch (why) {
    case DatagramPacer::TrainRefusal::kSenderPaced: return "sender_paced";
    case DatagramPacer::TrainRefusal::kFewDatagrams: return "few_datagrams";
    case DatagramPacer::TrainRefusal::kLittleMeasured: return "little_measured";
    case DatagramPacer::TrainRefusal::kShortSpan: return "short_span";
    case DatagramPacer::TrainRefusal::kSlowerThanStartup: return "slower_than_startup";
    case DatagramPacer::TrainRefusal::kCount: break;
  }
  return "?";
}

const char* pacer_jump_name(const DatagramPacer& pacer) {
  switch (pacer.jump_state()) {
    case DatagramPacer::Jump::kOff: return "off";
    case DatagramPacer::Jump::kWaiting: return "waiting";
    case DatagramPacer::Jump::kTaken: return pacer_seed_name(pacer.seed_state());
  }
  return "?";
}

const char* pacer_phase_name(DatagramPacer::Phase phase) {
  switch (phase) {
    case DatagramPacer::Phase::kStartup: return "startup";
    case DatagramPacer::Phase::kDrain: return "drain";
    case DatagramPacer::Phase::kCruise: return "cruise";
  }
  return "?";
}

DatagramPacer::DatagramPacer(ArqDuration initial_rtt, bool start_jump, bool refill_catch_up)
    : initial_rtt_(std::max<ArqDuration>(initial_rtt, std::chrono::milliseconds(1))),
      pacing_gain_(kStartupGain),
      window_gain_(kStartupGain),
      jump_state_(start_jump ? Jump::kWaiting : Jump::kOff),
      refill_catch_up_(refill_catch_up) {}

double DatagramPacer::round_bandwidth_max() const { return *std::max_element(round_max_.begin(), round_max_.end()); }

double DatagramPacer::train_floor() const {
  if (!train_floor_open_ || phase_ == Phase::kStartup) return 0;
  return kTrainFloorShare * train_rate_;
}

double DatagramPacer::bandwidth() const {
  const double measured = std::max(round_bandwidth_max(), train_floor());
  if (seed_state_ == Seed::kSeeded) return std::max(measured, seed_rate_);
  // A cold start-up never goes below its first window per round trip: the first ACKs (one
  // datagram's sample) measure far less, and would hold the second round below the first.
  const double first_window_rate = kInitialWindowBytes / seconds_of(min_rtt_.value_or(initial_rtt_));
  if (phase_ == Phase::kStartup && seed_state_ == Seed::kNone) return std::max(measured, first_window_rate);
  if (measured > 0) return measured;
  return first_window_rate;  // nothing measured yet
}

double DatagramPacer::pacing_rate() const {
  double rate = pacing_gain_ * bandwidth();
  if (phase_ == Phase::kStartup && jump_state_ == Jump::kTaken && seed_state_ == Seed::kConfirmed) {
    rate = std::min(rate, kJumpCeilingGain * std::max(train_rate_, bandwidth()));
  }
  return std::max(kMinPacingRate, rate);
}

std::size_t DatagramPacer::window_bytes() const {
  if (round_bandwidth_max() <= 0 && seed_state_ != Seed::kSeeded) return static_cast<std::size_t>(kInitialWindowBytes);
  const ArqDuration min_rtt = min_rtt_.value_or(initial_rtt_);
  if (phase_ == Phase::kStartup && seed_state_ != Seed::kSeeded) {
    return static_cast<std::size_t>(std::max(kMinWindowBytes, kStartupWindowGain * bandwidth() * seconds_of(min_rtt)));
  }
  const ArqDuration rtt = std::clamp(smoothed_rtt_.value_or(min_rtt), min_rtt, duration_cast<ArqDuration>(min_rtt * kWindowRttCap));
  const double bdp = bandwidth() * seconds_of(rtt);
  return static_cast<std::size_t>(std::max(kMinWindowBytes, window_gain_ * bdp));
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
      leave_train(it->second);
      send_order_.erase(it->second.send_index);
      outstanding_.erase(it);
    }
  }
  if (!highest_id_sent_ || id > *highest_id_sent_) highest_id_sent_ = id;
  if (in_flight_ == 0) {
    // Nothing in flight: the next delivery-rate interval starts now, not at the last delivery.
    first_sent_time_ = now;
    delivered_time_ = now;
  }
  round_sent_bytes_ += bytes;
  // A new path's first datagrams leave as a packet train (up to kTrainDatagrams), in bursts: what
  // the sender has leaves back to back, and a send after a pause (more than kTrainGap) begins the
  // train's next burst. The bottleneck spreads each burst to its own rate, so each is measured on
  // its own (measure_train): a program's small first message before its frames adds a burst that
  // measures nothing, and frames smaller than the train make one train of several bursts.
  if (jump_state_ == Jump::kWaiting && phase_ == Phase::kStartup && seed_state_ == Seed::kNone && !train_open_ &&
      train_outstanding_ == 0 && !train_acked_) {
    ++train_generation_;
    train_open_ = true;
    train_sent_ = 0;
    train_bursts_.clear();
  }
  const std::uint64_t train = train_open_ && !retransmission ? train_generation_ : 0;
  if (train) {
    if (train_bursts_.empty() || now - train_bursts_.back().last_sent > kTrainGap) {
      TrainBurst burst;
      burst.first_sent = now;
      train_bursts_.push_back(burst);
    }
    TrainBurst& burst = train_bursts_.back();
    ++burst.sent;
    burst.sent_bytes += bytes;
    burst.last_sent = now;
    ++train_sent_;
    ++train_outstanding_;
    if (train_sent_ >= kTrainDatagrams) train_open_ = false;
  }
  const std::uint64_t index = next_send_index_++;
  outstanding_[id] = Sent{index, now, bytes, delivered_, delivered_time_, first_sent_time_,
                          application_limited_until_ != 0, retransmission, train,
                          train ? train_bursts_.size() - 1 : 0};
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

void DatagramPacer::leave_train(const Sent& sent) {
  if (sent.train == train_generation_ && sent.train != 0 && train_outstanding_ > 0) --train_outstanding_;
}

ArqDuration DatagramPacer::catch_up() const {
  if (!refill_catch_up_ || ran_dry_ || phase_ != Phase::kCruise || !min_rtt_) return kCatchUp;
  // The pipe as ACKs see it (the smoothed RTT: a loaded receiver's late ACKs keep more in flight),
  // up to kCatchUpRttCap minimum RTTs.
  const ArqDuration rtt = std::clamp(smoothed_rtt_.value_or(*min_rtt_), *min_rtt_,
                                     duration_cast<ArqDuration>(*min_rtt_ * kCatchUpRttCap));
  const double room = bandwidth() * seconds_of(rtt) - static_cast<double>(in_flight_);
  const auto refill = duration_cast<ArqDuration>(std::chrono::duration<double>(std::max(0.0, room) / pacing_rate()));
  const ArqDuration most = std::min(kMaxCatchUp, duration_cast<ArqDuration>(*min_rtt_ * kCruiseCatchUpRttShare));
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
  train_outstanding_ = 0;  // a train sealed under the old keys measures nothing
  train_open_ = false;
  train_acked_ = false;
  train_bursts_.clear();
}

void DatagramPacer::on_application_limited() {
  application_limited_until_ = std::max<std::uint64_t>(delivered_ + in_flight_, 1);
  ran_dry_ = true;
  round_application_limited_ = true;
  seed_application_limited_ = true;
}

}  // namespace lp
