#include "arq/arq_sender.h"

#include <algorithm>

namespace lp {

ArqSender::ArqSender(const ArqConfig& config)
    : config_(config), rtt_(config), peer_window_messages_(config.receive_window_messages) {}

bool ArqSender::can_accept(std::size_t bytes) const {
  if (next_seq_ - base_seq_ >= config_.send_window_messages) return false;
  // An oversized message goes alone, else it could never be sent.
  return outstanding_.empty() || outstanding_bytes_ + bytes <= config_.send_window_bytes;
}

std::uint64_t ArqSender::submit(ArqPayload payload) {
  const std::size_t bytes = payload.size();
  outstanding_.push_back(Outstanding{.payload = std::move(payload), .bytes = bytes});
  outstanding_bytes_ += bytes;
  ++counters_.messages_submitted;
  return next_seq_++;
}

std::optional<std::uint64_t> ArqSender::next_tail_copy() {
  while (!tail_copies_.empty() && (tail_copies_.front().first < base_seq_ || at(tail_copies_.front().first).sacked)) {
    tail_copies_.pop_front();
  }
  if (tail_copies_.empty()) return std::nullopt;
  return tail_copies_.front().first;
}

std::optional<ArqDataFrame> ArqSender::poll_transmit(ArqTime now) {
  // After a carrier reset, messages the peer has SACKed need not go again.
  while (next_unsent_ < next_seq_ && at(next_unsent_).sacked) ++next_unsent_;
  if (!retransmit_queue_.empty()) {
    const std::uint64_t seq = *retransmit_queue_.begin();
    retransmit_queue_.erase(retransmit_queue_.begin());
    if (config_.mode == ArqMode::kDatagram && config_.tail_copies > 1) {
      if (next_unsent_ == next_seq_) {
        tail_copies_.emplace_back(seq, config_.tail_copies - 1);
      } else if (config_.copy_recent_resends_rtts > 0) {
        at(seq).resent_before_tail = true;
        ++resent_before_tail_;
      }
    }
    return transmit(seq, now);
  }
  if (resent_before_tail_ > 0 && next_unsent_ == next_seq_) copy_recent_resends(now);
  if (const auto seq = next_tail_copy()) {
    if (--tail_copies_.front().second == 0) tail_copies_.pop_front();
    return transmit(*seq, now);
  }
  if (next_unsent_ < next_seq_ && next_unsent_ - base_seq_ < peer_window_messages_) {
    return transmit(next_unsent_++, now);
  }
  return std::nullopt;
}

void ArqSender::copy_recent_resends(ArqTime now) {
  resent_before_tail_ = 0;
  const auto span = std::chrono::duration_cast<ArqTime::duration>(
      min_rtt_.value_or(config_.initial_rto) * config_.copy_recent_resends_rtts);
  // The candidates (sent, not acknowledged, not queued) newest first, back to a round trip ago.
  std::vector<std::uint64_t> recent;
  for (auto it = unacked_by_order_.rbegin(); it != unacked_by_order_.rend(); ++it) {
    Outstanding& message = at(it->second);
    if (now - message.last_sent > span) break;
    if (!message.resent_before_tail) continue;
    message.resent_before_tail = false;
    recent.push_back(it->second);
  }
  for (auto seq = recent.rbegin(); seq != recent.rend(); ++seq) tail_copies_.emplace_back(*seq, config_.tail_copies - 1);
}

std::optional<std::size_t> ArqSender::next_transmit_bytes() const {
  if (!retransmit_queue_.empty()) return at(*retransmit_queue_.begin()).payload.size();
  for (const auto& [seq, copies] : tail_copies_) {  // as next_tail_copy() skips the acknowledged
    if (seq >= base_seq_ && !at(seq).sacked) return at(seq).payload.size();
  }
  std::uint64_t seq = next_unsent_;
  while (seq < next_seq_ && at(seq).sacked) ++seq;  // as poll_transmit() skips them
  if (seq < next_seq_ && seq - base_seq_ < peer_window_messages_) return at(seq).payload.size();
  return std::nullopt;
}

ArqDataFrame ArqSender::transmit(std::uint64_t seq, ArqTime now) {
  Outstanding& message = at(seq);
  if (message.transmissions == 0) {
    message.first_sent = now;
    ++counters_.messages_sent;
    counters_.bytes_sent += message.bytes;
  } else {
    ++counters_.messages_retransmitted;
    counters_.bytes_retransmitted += message.bytes;
  }
  ++message.transmissions;
  if (message.unread_copies > 0 && message.transmissions == message.unread_copies + 1) message.first_sent = now;
  if (tracks_loss()) unacked_by_order_.erase(message.send_order);  // (if still there)
  message.send_order = ++transmissions_;
  if (tracks_loss()) unacked_by_order_.emplace(message.send_order, seq);
  message.last_sent = now;
  message.loss_evidence = 0;
  message.acked_after = 0;
  highest_transmitted_end_ = std::max(highest_transmitted_end_, seq + 1);
  if (config_.mode == ArqMode::kDatagram && !retransmit_timer_) retransmit_timer_ = now + rtt_.rto();
  return ArqDataFrame{.seq = seq, .payload = message.payload};
}

bool ArqSender::valid_ack(const ArqAck& ack) const {
  if (ack.cumulative > highest_transmitted_end_) return false;
  std::uint64_t floor = ack.cumulative;  // each range starts above the previous one's end
  for (const ArqSackRange& range : ack.sack) {
    if (range.begin <= floor || range.end <= range.begin || range.end > highest_transmitted_end_) {
      return false;
    }
    floor = range.end;
  }
  return true;
}

void ArqSender::note_acknowledged(const Outstanding& message, Progress& progress) {
  progress.any = true;
  unacked_by_order_.erase(message.send_order);
  // Evidence of loss from a re-sent message only if its ACK came at least a minimum RTT after the
  // re-send (RACK's rule, RFC 8985 6.2): sooner, it is for an earlier copy, and taking the re-send's
  // order would make everything sent between the two copies look overtaken (a burst of spurious
  // fast retransmits after a reordering). Without re-sent messages as evidence at all, a lost
  // re-send waits for the RTO.
  const bool for_last_copy = message.transmissions - message.unread_copies == 1 ||
                             (min_rtt_ && progress.now - message.last_sent >= *min_rtt_);
  if (for_last_copy) {
    progress.latest_send_order = std::max(progress.latest_send_order, message.send_order);
    if (config_.fast_retransmit_messages != 0) progress.send_orders.push_back(message.send_order);
  }
  // Karn's rule: a message sent more than once cannot tell which copy the ACK is for.
  if (message.transmissions == 1 && (!progress.sample_sent || *progress.sample_sent < message.last_sent)) {
    progress.sample_sent = message.last_sent;
  }
  ++counters_.messages_acked;
}

void ArqSender::apply_cumulative(std::uint64_t cumulative, Progress& progress) {
  while (base_seq_ < cumulative) {
    const Outstanding& message = outstanding_.front();
    if (!message.sacked) {
      outstanding_bytes_ -= message.bytes;
      note_acknowledged(message, progress);
    }
    retransmit_queue_.erase(base_seq_);
    outstanding_.pop_front();
    ++base_seq_;
  }
  next_unsent_ = std::max(next_unsent_, base_seq_);
  while (!sacked_ranges_.empty() && sacked_ranges_.begin()->second <= base_seq_) sacked_ranges_.erase(sacked_ranges_.begin());
}

void ArqSender::add_sacked_range(std::uint64_t begin, std::uint64_t end) {
  auto it = sacked_ranges_.upper_bound(begin);
  if (it != sacked_ranges_.begin() && std::prev(it)->second >= begin) {
    it = std::prev(it);
    begin = it->first;
    end = std::max(end, it->second);
    it = sacked_ranges_.erase(it);
  }
  while (it != sacked_ranges_.end() && it->first <= end) {
    end = std::max(end, it->second);
    it = sacked_ranges_.erase(it);
  }
  sacked_ranges_.emplace(begin, end);
}

void ArqSender::apply_sack(const std::vector<ArqSackRange>& sack, Progress& progress) {
  for (const ArqSackRange& range : sack) {
    std::uint64_t seq = std::max(range.begin, base_seq_);
    if (seq >= range.end) continue;
    // Only the parts no earlier ACK SACKed: the known ranges are skipped whole.
    auto known = sacked_ranges_.upper_bound(seq);
    if (known != sacked_ranges_.begin() && std::prev(known)->second > seq) seq = std::prev(known)->second;
    while (seq < range.end) {
      const std::uint64_t stop = known == sacked_ranges_.end() ? range.end : std::min(range.end, known->first);
      for (; seq < stop; ++seq) {
        Outstanding& message = at(seq);
        if (message.sacked) continue;
        note_acknowledged(message, progress);
        message.sacked = true;
        outstanding_bytes_ -= message.bytes;
        ArqPayload().swap(message.payload);  // the receiver holds it now: free our copy
        retransmit_queue_.erase(seq);
      }
      if (known == sacked_ranges_.end()) break;
      seq = std::max(seq, known->second);
      ++known;
    }
    add_sacked_range(std::max(range.begin, base_seq_), range.end);
  }
}

void ArqSender::queue_retransmission(std::uint64_t seq) {
  retransmit_queue_.insert(seq);
  unacked_by_order_.erase(at(seq).send_order);  // a candidate again once re-sent
}

void ArqSender::fast_retransmit(Progress& progress) {
  if (!tracks_loss()) return;
  std::sort(progress.send_orders.begin(), progress.send_orders.end());
  // The candidates sent before the newest message this ACK acknowledged: each gains evidence.
  for (auto it = unacked_by_order_.begin(); it != unacked_by_order_.end() && it->first < progress.latest_send_order;) {
    const std::uint64_t seq = it->second;
    const std::uint64_t order = it->first;
    ++it;
    Outstanding& message = at(seq);
    if (message.loss_evidence == 0) ++counters_.messages_seen_missing;
    const auto later = std::upper_bound(progress.send_orders.begin(), progress.send_orders.end(), order);
    message.acked_after += static_cast<std::uint64_t>(progress.send_orders.end() - later);
    if (++message.loss_evidence >= config_.fast_retransmit_threshold ||
        (config_.fast_retransmit_messages != 0 && message.acked_after >= config_.fast_retransmit_messages)) {
      queue_retransmission(seq);
      ++counters_.fast_retransmits;
    }
  }
}

bool ArqSender::on_ack(const ArqAck& ack, ArqTime now) {
  if (!valid_ack(ack)) {
    ++counters_.invalid_acks;
    return false;
  }
  ++counters_.acks_received;
  peer_window_messages_ = std::max<std::uint32_t>(ack.window_messages, 1);  // 0 would stall forever
  Progress progress(acked_send_orders_);
  progress.now = now;
  apply_cumulative(ack.cumulative, progress);
  apply_sack(ack.sack, progress);
  if (!progress.any) return true;  // a duplicate or reordered ACK
  if (progress.sample_sent) {
    const auto sample = std::chrono::duration_cast<ArqDuration>(now - *progress.sample_sent);
    rtt_.add_sample(sample);
    min_rtt_ = std::min(min_rtt_.value_or(sample), sample);
  }
  rtt_.reset_back_off();
  fast_retransmit(progress);
  if (config_.mode == ArqMode::kDatagram) {
    // RFC 6298 (5.2, 5.3): stop when nothing is in flight, else restart with the current RTO.
    if (base_seq_ < next_unsent_) {
      retransmit_timer_ = now + rtt_.rto();
    } else {
      retransmit_timer_.reset();
    }
  }
  return true;
}

void ArqSender::on_timer(ArqTime now) {
  if (!retransmit_timer_ || now < *retransmit_timer_) return;
  ++counters_.timeouts;
  if (next_unsent_ == base_seq_ && base_seq_ < next_seq_) {
    // After a carrier reset nothing has gone again yet (the carrier held it back): the copies sent
    // before are presumed lost (the caller's pacer hears of the timeout); the re-sends restart
    // the timer with the current RTO.
    retransmit_timer_.reset();
    return;
  }
  // No progress for a whole RTO: presume every in-flight message not SACKed lost.
  for (std::uint64_t seq = base_seq_; seq < next_unsent_; ++seq) {
    if (!at(seq).sacked && at(seq).transmissions > 0) queue_retransmission(seq);
  }
  if (config_.max_transmissions != 0 && base_seq_ < next_unsent_ &&
      at(base_seq_).transmissions >= config_.max_transmissions) {
    peer_dead_ = true;
  }
  rtt_.back_off();  // RFC 6298 (5.5, 5.6)
  retransmit_timer_ = base_seq_ < next_unsent_ ? std::optional(now + rtt_.rto()) : std::nullopt;
}

void ArqSender::carrier_reset(ArqTime now) {
  ++counters_.carrier_resets;
  const bool in_flight = base_seq_ < next_unsent_;
  retransmit_queue_.clear();
  tail_copies_.clear();
  unacked_by_order_.clear();  // none is a candidate until it goes again
  next_unsent_ = base_seq_;  // everything unacknowledged goes again, in order
  retransmit_timer_.reset();
  // Without this the timer only restarts with the next transmission: a datagram session whose
  // pacer counted the lost copies in flight never transmitted again, so no timeout ever freed the
  // pacer (the simultaneous-dial stall, docs/engine/datagram-carrier.md).
  if (config_.mode == ArqMode::kDatagram && in_flight) retransmit_timer_ = now + rtt_.rto();
}

void ArqSender::resend_unread(ArqTime now) {
  for (std::uint64_t seq = base_seq_; seq < next_unsent_; ++seq) {
    Outstanding& message = at(seq);
    if (!message.sacked) message.unread_copies = message.transmissions;
  }
  carrier_reset(now);
}

std::optional<ArqTime> ArqSender::next_deadline() const { return retransmit_timer_; }

const ArqPayload* ArqSender::held_copy(std::uint64_t seq, ArqTime& first_sent) const {
  if (seq < base_seq_ || seq >= next_seq_) return nullptr;
  const Outstanding& message = at(seq);
  if (message.sacked || message.transmissions == 0) return nullptr;
  first_sent = message.first_sent;
  return &message.payload;
}

std::optional<ArqTime> ArqSender::oldest_unacked_since() const {
  if (outstanding_.empty() || outstanding_.front().transmissions == 0) return std::nullopt;
  return outstanding_.front().first_sent;
}

ArqStats ArqSender::stats() const {
  ArqStats stats = counters_;  // the sender's counters; the receiver fields stay zero
  stats.rtt_samples = rtt_.samples();
  stats.srtt = rtt_.srtt();
  stats.rttvar = rtt_.rttvar();
  stats.rto = rtt_.rto();
  stats.in_flight_messages = next_seq_ - base_seq_;
  stats.in_flight_bytes = outstanding_bytes_;
  stats.send_window_messages = config_.send_window_messages;
  stats.send_window_bytes = config_.send_window_bytes;
  stats.peer_window_messages = peer_window_messages_;
  return stats;
}

}  // namespace lp
