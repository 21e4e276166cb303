#include "arq_sender.h"

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

std::optional<ArqDataFrame> ArqSender::poll_transmit(ArqTime now) {
  if (!retransmit_queue_.empty()) {
    const std::uint64_t seq = *retransmit_queue_.begin();
    retransmit_queue_.erase(retransmit_queue_.begin());
    return transmit(seq, now);
  }
  // After a carrier reset, messages the peer has SACKed need not go again.
  while (next_unsent_ < next_seq_ && at(next_unsent_).sacked) ++next_unsent_;
  if (next_unsent_ < next_seq_ && next_unsent_ - base_seq_ < peer_window_messages_) {
    return transmit(next_unsent_++, now);
  }
  return std::nullopt;
}

std::optional<std::size_t> ArqSender::next_transmit_bytes() const {
  if (!retransmit_queue_.empty()) return at(*retransmit_queue_.begin()).payload.size();
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
  message.send_order = ++transmissions_;
  message.last_sent = now;
  message.loss_evidence = 0;
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
  // Evidence of loss only from a message sent once: the ACK of a re-sent one may be for its
  // earlier copy, and taking the re-send's order would make everything sent between the two
  // copies look overtaken (a burst of spurious fast retransmits after a reordering).
  if (message.transmissions == 1) progress.latest_send_order = std::max(progress.latest_send_order, message.send_order);
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
}

void ArqSender::apply_sack(const std::vector<ArqSackRange>& sack, Progress& progress) {
  for (const ArqSackRange& range : sack) {
    for (std::uint64_t seq = std::max(range.begin, base_seq_); seq < range.end; ++seq) {
      Outstanding& message = at(seq);
      if (message.sacked) continue;
      note_acknowledged(message, progress);
      message.sacked = true;
      outstanding_bytes_ -= message.bytes;
      ArqPayload().swap(message.payload);  // the receiver holds it now: free our copy
      retransmit_queue_.erase(seq);
    }
  }
}

void ArqSender::fast_retransmit(const Progress& progress) {
  if (config_.mode != ArqMode::kDatagram || config_.fast_retransmit_threshold == 0) return;
  for (std::uint64_t seq = base_seq_; seq < next_unsent_; ++seq) {
    Outstanding& message = at(seq);
    if (message.sacked || message.transmissions == 0 || message.send_order >= progress.latest_send_order ||
        retransmit_queue_.contains(seq)) {
      continue;
    }
    if (++message.loss_evidence >= config_.fast_retransmit_threshold) {
      retransmit_queue_.insert(seq);
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
  Progress progress;
  apply_cumulative(ack.cumulative, progress);
  apply_sack(ack.sack, progress);
  if (!progress.any) return true;  // a duplicate or reordered ACK
  if (progress.sample_sent) rtt_.add_sample(std::chrono::duration_cast<ArqDuration>(now - *progress.sample_sent));
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
    if (!at(seq).sacked && at(seq).transmissions > 0) retransmit_queue_.insert(seq);
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
  next_unsent_ = base_seq_;  // everything unacknowledged goes again, in order
  retransmit_timer_.reset();
  // Without this the timer only restarts with the next transmission: a datagram session whose
  // pacer counted the lost copies in flight never transmitted again, so no timeout ever freed the
  // pacer (the simultaneous-dial stall, libshim/README.md "Datagram carrier").
  if (config_.mode == ArqMode::kDatagram && in_flight) retransmit_timer_ = now + rtt_.rto();
}

std::optional<ArqTime> ArqSender::next_deadline() const { return retransmit_timer_; }

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
