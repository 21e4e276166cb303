// What the ACKs tell the pacer: delivery-rate samples, RTT samples, loss (the reordering window).
#include "congestion/datagram_pacer.h"

#include <algorithm>

#include "congestion/pacer_tuning.h"
#include "path/path_estimator.h"

namespace lp {

using namespace pacer_tuning;
using std::chrono::duration_cast;

void DatagramPacer::mark_lost(std::map<std::uint64_t, Sent>::iterator it) {
  in_flight_ -= it->second.bytes;
  train_.leave(it->second.train);
  round_lost_bytes_ += it->second.bytes;
  ++round_lost_datagrams_;
  lost_bytes_ += it->second.bytes;
  ++lost_datagrams_;
  send_order_.erase(it->second.send_index);
  outstanding_.erase(it);
}

void DatagramPacer::deliver(ArqTime now, std::map<std::uint64_t, Sent>::iterator it, std::optional<Sent>& newest) {
  const Sent& sent = it->second;
  sampler_.on_delivered(now, sent.bytes);
  round_delivered_bytes_ += sent.bytes;
  in_flight_ -= sent.bytes;
  train_.on_delivered(sent.train, sent.bytes);
  // A re-sent datagram's ACK may be for its earlier copy (Karn): it dates nothing.
  if (!sent.retransmission && (!newest || sent.send_index > newest->send_index)) newest = sent;
  // ... but an ACK sooner than a round trip after the re-send was for the earlier copy: that
  // re-send was spurious (a late wake-up's timeout, deep reordering), not the path's loss.
  if (sent.retransmission && now - sent.sent_at >= kResendAckRttShare * rtt_.min().value_or(initial_rtt_)) {
    round_resent_bytes_ += sent.bytes;
  }
  send_order_.erase(sent.send_index);
  outstanding_.erase(it);
}

void DatagramPacer::on_ack(ArqTime now, std::uint64_t cumulative, std::span<const ArqSackRange> sack,
                           std::optional<Arrivals> arrivals) {
  std::optional<Sent> newest;
  const std::uint64_t delivered_before = sampler_.delivered();
  train_.begin_ack();
  while (!outstanding_.empty() && outstanding_.begin()->first < cumulative) deliver(now, outstanding_.begin(), newest);
  for (const ArqSackRange& range : sack) {
    for (auto it = outstanding_.lower_bound(range.begin); it != outstanding_.end() && it->first < range.end;) {
      auto next = std::next(it);
      deliver(now, it, newest);
      it = next;
    }
  }
  if (sampler_.delivered() > delivered_before) train_.close();  // later datagrams are paced by what the ACKs show
  train_.time_arrivals(now, arrivals);
  if (!newest) {
    // Only re-sent datagrams were acknowledged (a loss episode): no sample, but rounds go on.
    if (sampler_.delivered() > delivered_before && now - round_started_ >= rtt_.min().value_or(initial_rtt_)) end_round(now);
    return;
  }
  sampler_.on_newest_delivered(newest->sent_at);

  // Lost: sent kReorderThreshold sends and a reordering window before the newest delivered one
  // (RACK's rule: reordering within a quarter of the minimum RTT is not loss).
  newest_delivered_sent_at_ = std::max(newest_delivered_sent_at_, newest->sent_at);
  const ArqDuration window = reorder_window();
  while (!send_order_.empty() && send_order_.begin()->first + kReorderThreshold <= newest->send_index) {
    auto it = outstanding_.find(send_order_.begin()->second);
    if (newest->sent_at - it->second.sent_at < window) break;
    mark_lost(it);
  }

  {
    const ArqDuration rtt = duration_cast<ArqDuration>(now - newest->sent_at);
    // A packet train queues behind itself at the bottleneck: its RTTs say nothing of a queue that stands.
    const bool queue_test = newest->train.train == 0;
    if (queue_test) round_min_rtt_ = std::min(round_min_rtt_.value_or(rtt), rtt);
    // RFC 6298's smoothing (1/8, 1/4): the path's jitter, for the window and the queue test.
    rtt_.on_sample(now, rtt);
    // Start-up's delay test, within the round: the smallest RTT of each stretch of
    // kStartupDelayStretch. A round's smallest RTT is its first ACKs', sent before this round's
    // doubling queued anything: judged by it, the test came a round late, when start-up had
    // doubled once more into the queue.
    if (!stretch_min_rtt_ && queue_test) stretch_started_ = now;
    if (queue_test) {
      stretch_min_rtt_ = std::min(stretch_min_rtt_.value_or(rtt), rtt);
      ++stretch_samples_;
    }
    if (stretch_min_rtt_ && now - stretch_started_ >= std::max(kStartupDelayMin, *rtt_.min() / kStartupDelayStretch) &&
        stretch_samples_ >= kStartupDelaySamples) {
      const bool queue = startup_queue_seen(rtt_.min(), *stretch_min_rtt_);
      stretch_min_rtt_.reset();
      stretch_samples_ = 0;
      if (queue && phases_.phase() == Phase::kStartup && seed_.state() != Seed::kSeeded) leave_startup_on_queue();
    }
  }
  // The delivery rate over the datagram's flight (the longer of its send and ACK intervals, so
  // that neither a burst of sends nor a burst of ACKs inflates it).
  if (const auto sample = sampler_.rate(now, newest->sent_at, newest->at_send, rtt_.min())) {
    double rate = *sample;
    // Until the drain is over, ACKs still come for what start-up sent into its queue.
    if (const double cap = phases_.drain_rate_cap(); cap > 0) rate = std::min(rate, cap);
    if (!newest->at_send.application_limited || rate > rate_filter_.max()) {
      rate_filter_.offer(rate);
      if (phases_.phase() == Phase::kStartup && !startup_queue_seen(rtt_.min(), duration_cast<ArqDuration>(now - newest->sent_at))) {
        startup_calm_rate_ = std::max(startup_calm_rate_, rate);
      }
    }
  }
  // The seed is judged over the round trip of ACKs that starts with the first datagram sent while
  // the sender was busy: ACKs of pings before a burst, or of a burst's first part, measure less.
  seed_.on_acked(now, newest->send_index, newest->at_send.application_limited, delivered_before, lost_bytes_);
  judge_seed(now);
  if (jump_state_ == Jump::kWaiting && train_.complete()) measure_train();
  // A round: until a datagram sent after the last one ended is acknowledged, or, while losses
  // leave only re-sent datagrams to date it, one minimum RTT.
  if (newest->send_index >= next_round_send_index_ || now - round_started_ >= 2 * rtt_.min().value_or(initial_rtt_)) {
    end_round(now);
  }
}

ArqDuration DatagramPacer::reorder_window() const {
  // RACK's quarter of the minimum RTT, widened to the path's jitter (kReorderDeviations mean
  // deviations: packets that left a few hundred microseconds apart swap places under jitter).
  return std::max({kMinReorderWindow, rtt_.min() ? *rtt_.min() / 4 : ArqDuration::zero(), kReorderDeviations * rtt_.deviation()});
}

std::int64_t DatagramPacer::loss_ppm() const {
  if (static_cast<double>(calm_sent_bytes_) < PathEstimator::kMinLossSegments * kDatagramBytes) return -1;
  return static_cast<std::int64_t>(static_cast<double>(calm_resent_bytes_) * 1e6 / static_cast<double>(calm_sent_bytes_));
}

}  // namespace lp
