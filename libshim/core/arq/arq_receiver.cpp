#include "arq/arq_receiver.h"

#include <algorithm>
#include <limits>

namespace lp {

ArqReceiver::ArqReceiver(const ArqConfig& config) : config_(config) {}

bool ArqReceiver::on_data(std::uint64_t seq, ArqPayload payload, ArqTime now) {
  if (seq < next_expected_ || held_.contains(seq)) {
    // Our ACK was probably lost (or the carrier duplicated the frame): repeat it.
    ++counters_.duplicates_dropped;
    want_ack(now, true);
    return true;
  }
  if (config_.mode == ArqMode::kReliableCarrier &&
      (seq - next_expected_ >= kReliableCarrierWindowSlack * config_.receive_window_messages ||
       held_bytes_ + payload.size() > kReliableCarrierWindowSlack * config_.receive_window_bytes)) {
    ++counters_.out_of_window_dropped;
    return false;
  }
  if (seq == next_expected_) {
    note_arrival(seq);
    const bool fills_gap = !held_.empty();
    accept_in_order(seq, std::move(payload));
    ++unacked_messages_;
    want_ack(now, fills_gap || config_.ack_delay == ArqDuration::zero() ||
                      unacked_messages_ >= config_.ack_every_messages);
    return true;
  }
  if (!fits_window(seq, payload.size())) {
    ++counters_.out_of_window_dropped;  // the sender will retransmit it once the window moves
    want_ack(now, true);
    return true;
  }
  // A new hole (above the highest held) or one filled (below it): tell the sender now (SACK,
  // fast retransmit). Continuing the highest held range, with ack_new_holes_only: nothing new.
  const bool continues_highest = !held_ranges_.empty() && held_ranges_.rbegin()->second == seq;
  note_arrival(seq);
  hold_out_of_order(seq, std::move(payload));
  ++unacked_messages_;
  const bool news = !(config_.ack_new_holes_only && continues_highest);
  want_ack(now, news || config_.ack_delay == ArqDuration::zero() || unacked_messages_ >= config_.ack_every_messages);
  return true;
}

void ArqReceiver::note_arrival(std::uint64_t seq) {
  if (seq < highest_end_) return;  // a hole filled
  counters_.messages_skipped += seq - highest_end_;
  highest_end_ = seq + 1;
}

void ArqReceiver::accept_in_order(std::uint64_t seq, ArqPayload payload) {
  ++counters_.messages_received;
  ready_.push_back(Delivery{.seq = seq, .payload = std::move(payload)});
  ++next_expected_;
  // Release whatever the newcomer made contiguous.
  for (auto next = held_.begin(); next != held_.end() && next->first == next_expected_; next = held_.erase(next)) {
    held_bytes_ -= next->second.size();
    ready_.push_back(Delivery{.seq = next->first, .payload = std::move(next->second)});
    ++next_expected_;
  }
  // The ranges are merged, so the one released (if any) went whole.
  if (!held_ranges_.empty() && held_ranges_.begin()->first < next_expected_) held_ranges_.erase(held_ranges_.begin());
}

void ArqReceiver::hold_out_of_order(std::uint64_t seq, ArqPayload payload) {
  ++counters_.messages_received;
  held_bytes_ += payload.size();
  held_.emplace(seq, std::move(payload));
  std::uint64_t begin = seq, end = seq + 1;
  auto it = held_ranges_.upper_bound(seq);
  if (it != held_ranges_.begin() && std::prev(it)->second == seq) {
    it = std::prev(it);
    begin = it->first;
    it = held_ranges_.erase(it);
  }
  if (it != held_ranges_.end() && it->first == end) {
    end = it->second;
    held_ranges_.erase(it);
  }
  held_ranges_.emplace(begin, end);
  counters_.max_held_out_of_order_messages =
      std::max<std::uint64_t>(counters_.max_held_out_of_order_messages, held_.size());
}

bool ArqReceiver::fits_window(std::uint64_t seq, std::size_t bytes) const {
  // No sender reaches 2^64 - 1 (sequence numbers never wrap), and its SACK range [seq, seq + 1)
  // would wrap to an empty one that the peer refuses as malformed (found by tests/fuzz/arq_fuzz).
  if (seq == std::numeric_limits<std::uint64_t>::max()) return false;
  // Over a reliable carrier nothing dropped here would ever come again (no timers; striped streams
  // deliver every frame eventually), so hold it: the peer's send window bounds what can arrive.
  if (config_.mode == ArqMode::kReliableCarrier) return true;
  return seq - next_expected_ < config_.receive_window_messages && held_bytes_ + bytes <= config_.receive_window_bytes;
}

void ArqReceiver::want_ack(ArqTime now, bool at_once) {
  if (!ack_owed_since_) ack_owed_since_ = now;
  ack_at_once_ = ack_at_once_ || at_once;
}

std::optional<ArqReceiver::Delivery> ArqReceiver::receive() {
  if (ready_.empty()) return std::nullopt;
  Delivery delivery = std::move(ready_.front());
  ready_.pop_front();
  ++counters_.messages_delivered;
  counters_.bytes_delivered += delivery.payload.size();
  return delivery;
}

std::optional<ArqTime> ArqReceiver::next_deadline() const {
  if (!ack_owed_since_) return std::nullopt;
  return ack_at_once_ ? *ack_owed_since_ : *ack_owed_since_ + config_.ack_delay;
}

const ArqPayload* ArqReceiver::find(std::uint64_t seq) const {
  if (seq >= next_expected_) {
    const auto it = held_.find(seq);
    return it == held_.end() ? nullptr : &it->second;
  }
  // ready_ holds next_expected_ - ready_.size() .. next_expected_ - 1, in order.
  if (seq + ready_.size() < next_expected_) return nullptr;
  return &ready_[ready_.size() - (next_expected_ - seq)].payload;
}

bool ArqReceiver::ack_due(ArqTime now) const {
  const auto deadline = next_deadline();
  return deadline && now >= *deadline;
}

ArqAck ArqReceiver::make_ack() {
  ArqAck ack{.cumulative = next_expected_, .sack = {}, .window_messages = config_.receive_window_messages};
  for (const auto& [begin, end] : held_ranges_) {
    if (ack.sack.size() >= config_.max_sack_ranges) break;
    ack.sack.push_back(ArqSackRange{.begin = begin, .end = end});
  }
  unacked_messages_ = 0;
  ack_owed_since_.reset();
  ack_at_once_ = false;
  ++counters_.acks_sent;
  return ack;
}

void ArqReceiver::add_stats(ArqStats& stats) const {
  // The receiver's own counters, plus its current state.
  stats.messages_received = counters_.messages_received;
  stats.messages_delivered = counters_.messages_delivered;
  stats.bytes_delivered = counters_.bytes_delivered;
  stats.duplicates_dropped = counters_.duplicates_dropped;
  stats.messages_skipped = counters_.messages_skipped;
  stats.out_of_window_dropped = counters_.out_of_window_dropped;
  stats.acks_sent = counters_.acks_sent;
  stats.max_held_out_of_order_messages = counters_.max_held_out_of_order_messages;
  stats.held_out_of_order_messages = held_.size();
  stats.held_out_of_order_bytes = held_bytes_;
}

}  // namespace lp
