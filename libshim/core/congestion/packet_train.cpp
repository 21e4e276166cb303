// Start-up's packet train: its bursts as they leave, their arrivals as the ACKs report them, and
// the rate they measured.
#include "congestion/packet_train.h"

#include "congestion/pacer_tuning.h"

namespace lp {

using namespace pacer_tuning;
using std::chrono::duration_cast;

void PacketTrain::open() {
  ++generation_;
  open_ = true;
  sent_ = 0;
  bursts_.clear();
}

// A new path's first datagrams leave as a packet train (up to kTrainDatagrams), in bursts: what the
// sender has leaves back to back, and a send after a pause (more than kTrainGap) begins the train's
// next burst. The bottleneck spreads each burst to its own rate, so each is measured on its own
// (measure): a program's small first message before its frames adds a burst that measures
// nothing, and frames smaller than the train make one train of several bursts.
PacketTrain::Place PacketTrain::on_sent(ArqTime now, std::size_t bytes, bool retransmission) {
  if (!open_ || retransmission) return {};
  if (bursts_.empty() || now - bursts_.back().last_sent > kTrainGap) bursts_.emplace_back().first_sent = now;
  Burst& burst = bursts_.back();
  ++burst.sent;
  burst.sent_bytes += bytes;
  burst.last_sent = now;
  ++sent_;
  ++outstanding_;
  if (sent_ >= kTrainDatagrams) open_ = false;
  return {generation_, bursts_.size() - 1};
}

void PacketTrain::begin_ack() {
  ack_bursts_.assign(bursts_.size(), {});
  acked_outside_ = 0;
}

void PacketTrain::on_delivered(const Place& place, std::size_t bytes) {
  if (place.train == 0 || place.train != generation_) {
    ++acked_outside_;
    return;
  }
  leave(place);
  ++ack_bursts_[place.burst].datagrams;
  ack_bursts_[place.burst].bytes += bytes;
}

void PacketTrain::forget() {
  outstanding_ = 0;
  open_ = false;
  acked_ = false;
  bursts_.clear();
}

// Each burst's arrivals, as the ACKs report them: the receiver's times, not the ACKs'. Timed by
// its ACKs a train's last units waited for the ACK delay (kDatagramAckDelay, 1-2 ms at the event
// loop's resolution) and a loaded receiver's ACKs come late and lumped, so the ACKs' own times
// misread the bottleneck, both low and high.
void PacketTrain::time_arrivals(ArqTime now, const std::optional<CongestionController::Arrivals>& arrivals) {
  const std::chrono::nanoseconds newest =
      arrivals ? arrivals->newest : duration_cast<std::chrono::nanoseconds>(now.time_since_epoch());
  std::size_t bursts_acked = 0;
  for (const AckedInBurst& acked : ack_bursts_) bursts_acked += acked.datagrams > 0;
  // The ACK's arrival times are its burst's alone if it delivered nothing else.
  const bool alone = bursts_acked == 1 && acked_outside_ == 0;
  for (std::size_t b = 0; b < ack_bursts_.size(); ++b) {
    const AckedInBurst& acked = ack_bursts_[b];
    if (acked.datagrams == 0) continue;
    acked_ = true;
    Burst& burst = bursts_[b];
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

PacketTrain::Reading PacketTrain::measure() {
  Reading reading;
  // Each burst on its own: its arrivals must be spread more than its sends (else it measured the
  // sender). The train is the sum of the bursts that pass.
  std::uint64_t sent = 0, sent_bytes = 0, bytes_measured = 0;
  std::chrono::nanoseconds arrival_span{0};
  for (const Burst& burst : bursts_) {
    if (!burst.arrivals_from || burst.measured_bytes == 0) continue;
    const std::chrono::nanoseconds burst_arrival_span = burst.arrivals_to - *burst.arrivals_from;
    const ArqDuration burst_send_span = duration_cast<ArqDuration>(burst.last_sent - burst.first_sent);
    if (seconds_of(burst_arrival_span) < kTrainSpread * seconds_of(burst_send_span)) {
      ++reading.sender_paced;
      continue;
    }
    sent += burst.sent;
    sent_bytes += burst.sent_bytes;
    bytes_measured += burst.measured_bytes;
    arrival_span += burst_arrival_span;
  }
  if (sent < kMinTrainDatagrams) {
    reading.refusal = Refusal::kFewDatagrams;
  } else if (bytes_measured * kTrainCoverDivisor < sent_bytes) {
    reading.refusal = Refusal::kLittleMeasured;
  } else if (arrival_span < kMinTrainArrivalSpan) {
    reading.refusal = Refusal::kShortSpan;
  } else {
    reading.rate = static_cast<double>(bytes_measured) / seconds_of(arrival_span);
  }
  acked_ = false;
  bursts_.clear();
  return reading;
}

}  // namespace lp
