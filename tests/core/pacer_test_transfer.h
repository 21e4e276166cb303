// The pacer tests' sender and receiver (datagram_pacer_test*.cpp): a DatagramPacer with a
// datagram-mode Arq across the simulated bottleneck, as the session drives them; goodput between
// two fake times; the geo path and a long, fast path that several groups of cases use.
#pragma once

#include "pacer_test_link.h"

namespace pacer_test {

// A paced sender and a receiver, as the session drives them.
class PacedTransfer {
 public:
  // `start_jump`: the pacer's start-up jump. `fec`: repair datagrams over each burst's tail, as the
  // datagram channel sends them (tail_fec.h).
  // `catch_up`: LONGPIPE_PACING_CATCH_UP (DatagramPacer::catch_up).
  PacedTransfer(PathProfile path, std::uint64_t seed, bool start_jump = false, bool fec = false, bool catch_up = false,
                ArqDuration initial_rtt = 50ms)
      : sender_(config(fec)),
        receiver_(config(fec)),
        pacer_(initial_rtt, start_jump, catch_up),
        forward_(path, seed),
        acks_(lp::test::LinkProfile{.delay = path.delay, .loss = path.ack_loss}, seed + 1),
        fec_(fec) {}

  void queue(std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) outbox_.push_back(lp::test::make_message(queued_++, kPayload - 8));
  }
  DatagramPacer& pacer() { return pacer_; }
  lp::ArqStats stats() const { return sender_.stats(); }
  Bottleneck& path() { return forward_; }
  ArqTime now() const { return now_; }
  const std::vector<std::uint64_t>& delivered() const { return delivered_; }
  std::uint64_t delivered_bytes() const { return delivered_bytes_; }
  ArqTime last_delivery() const { return last_delivery_; }
  bool all_acknowledged() const { return outbox_.empty() && sender_.all_acknowledged(); }
  std::uint64_t repairs_sent() const { return repairs_sent_; }
  const lp::TailFecReceiver& fec_receiver() const { return fec_receiver_; }
  // The receiver takes units recovered by repairs as received, never twice: its duplicates.
  lp::ArqStats receiver_stats() const { return receiver_.stats(); }
  // Repair datagrams the forward path drops from now on (a lost repair is one fewer symbol).
  void drop_repairs(double share) { repair_loss_ = share; }
  // A loaded host: from now on both ends run only every `period` (each wake-up late by up to it).
  void wake_every(ArqDuration period) { wake_every_ = period; }
  // The loss the warm-start cache measured on this path: the repairs' prior (DatagramChannel::warm_start).
  void know_loss(std::int64_t ppm) { known_loss_ppm_ = ppm; }
  // Bytes the sender handed to the path (DATA and repairs).
  std::uint64_t sent_bytes() const { return sent_bytes_; }
  // Nothing runs for `late` (a thread that woke late), then one turn at once.
  void late_wake(ArqDuration late) {
    now_ += late;
    step();
  }

  // Runs until `until` of fake time; `refill`: keep the sender busy (a bulk transfer).
  void run(ArqTime until, bool refill) {
    while (now_ < until) {
      if (refill && outbox_.size() < 256) queue(256);
      step();
      std::optional<ArqTime> next = forward_.next_arrival();
      auto consider = [&next](std::optional<ArqTime> t) { if (t && (!next || *t < *next)) next = t; };
      consider(acks_.next_arrival());
      consider(sender_.next_deadline());
      consider(receiver_.next_deadline());
      if (pacer_.window_open() && (!outbox_.empty() || sender_.next_transmit_bytes() || !repairs_.empty())) {
        consider(std::max(pacer_.next_send_time(), now_ + 1us));
      }
      if (next && wake_every_ > 0us) {  // the next turn of a host that wakes only every wake_every_
        next = ArqTime((*next - ArqTime{} + wake_every_ - 1us) / wake_every_ * wake_every_);
      }
      now_ = next ? std::min(std::max(*next, now_ + 1us), until) : until;
    }
  }

 private:
  static ArqConfig config(bool fec) {
    ArqConfig config = lp::test::datagram_config();
    if (fec) config.copy_recent_resends_rtts = lp::TailFecSender::kTailRoundTrips;  // as configure_for_datagrams
    config.send_window_messages = config.receive_window_messages = 50'000;
    config.max_sack_ranges = 640;  // as the datagram carrier configures it (8 ACK datagrams of 80)
    config.min_rto_margin = lp::kDatagramRtoMargin;  // and these
    config.tail_copies = lp::kDatagramTailCopies;
    config.ack_every_messages = lp::kDatagramAckEvery;  // and the receiver's ACKs: one per 4 units,
    config.ack_delay = lp::kDatagramAckDelay;           // or 1 ms, at once on a new or filled hole
    config.ack_new_holes_only = true;
    config.fast_retransmit_messages = lp::kDatagramAckEvery * config.fast_retransmit_threshold;
    return config;
  }

  void step() {
    for (Datagram& datagram : forward_.arrivals(now_)) {
      if (datagram.repair) {
        REQUIRE(fec_receiver_.on_repair(receiver_, datagram.repair->frame(), now_));
        continue;
      }
      const std::uint64_t seq = datagram.data.seq;
      // The kernel's receive time, whenever this end gets round to reading it (wake_every).
      const auto arrived = std::chrono::duration_cast<std::chrono::nanoseconds>(datagram.arrived.time_since_epoch());
      if (arrivals_.count++ == 0) arrivals_.first = arrived;
      arrivals_.newest = std::max(arrivals_.newest, arrived);
      (void)receiver_.on_data(seq, std::move(datagram.data.payload), now_);
      fec_receiver_.on_data(receiver_, seq, now_);
    }
    while (auto delivery = receiver_.receive()) {
      const std::uint64_t number = lp::test::message_number(delivery->payload);
      delivered_bytes_ += delivery->payload.size();
      delivered_.push_back(number);
      last_delivery_ = now_;
      fec_receiver_.on_delivered(delivery->seq, std::move(delivery->payload));
    }
    if (auto ack = receiver_.poll_ack(now_)) {
      acks_.send(TimedAck{*ack, arrivals_}, now_);
      arrivals_.count = 0;
    }
    for (const TimedAck& timed : acks_.arrivals(now_)) {
      const ArqAck& ack = timed.ack;
      REQUIRE(sender_.on_ack(ack, now_));
      pacer_.on_ack(now_, ack.cumulative, ack.sack, timed.arrivals);
    }
    sender_.on_timer(now_);
    if (const auto timeouts = sender_.stats().timeouts; timeouts != timeouts_) {
      timeouts_ = timeouts;
      pacer_.on_timeout();
    }
    while (!outbox_.empty() && sender_.can_accept(outbox_.front().size())) {
      sender_.submit(std::move(outbox_.front()));
      outbox_.pop_front();
    }
    while (pacer_.can_send(now_)) {
      auto frame = sender_.poll_transmit(now_);
      if (!frame) {
        if (!send_repair()) break;
        continue;
      }
      const std::size_t bytes = frame->payload.size() + kOverhead;
      pacer_.on_sent(now_, frame->seq, bytes);
      sent_bytes_ += bytes;
      forward_.send(Datagram{WireData{frame->seq, ArqPayload(frame->payload.begin(), frame->payload.end())}, nullptr}, bytes, now_);
    }
  }

  // As DatagramChannel::pump does when the ARQ has nothing: the tail's repairs, one per call.
  bool send_repair() {
    if (repairs_.empty()) {
      pacer_.on_application_limited();
      if (!fec_) return false;
      for (lp::RepairSymbol& repair : fec_sender_.protect_tail(sender_, now_, pacer_.min_rtt().value_or(50ms),
                                                               lp::TailFecSender::loss_estimate(pacer_.loss_ppm(), sender_.stats(), known_loss_ppm_))) {
        repairs_.push_back(std::move(repair));
      }
    }
    while (!repairs_.empty() && repairs_.front().first_sequence + repairs_.front().data_count <= sender_.acknowledged_below()) {
      repairs_.pop_front();
    }
    if (repairs_.empty()) return false;
    auto repair = std::make_shared<const lp::RepairSymbol>(std::move(repairs_.front()));
    repairs_.pop_front();
    const std::size_t bytes = repair->symbol.size() + kOverhead + lp::kRepairFixedSize - lp::kSequenceSize;
    pacer_.on_unacknowledged_sent(now_, bytes);
    sent_bytes_ += bytes;
    ++repairs_sent_;
    if (repair_loss_ > 0 && std::uniform_real_distribution<double>(0, 1)(repair_rng_) < repair_loss_) return true;
    forward_.send(Datagram{{}, std::move(repair)}, bytes, now_);
    return true;
  }

  Arq sender_, receiver_;
  DatagramPacer pacer_;
  Bottleneck forward_;
  lp::test::SimLink<TimedAck> acks_;
  DatagramPacer::Arrivals arrivals_;  // of the DATA since the receiver's last ACK
  std::deque<ArqPayload> outbox_;  // a batch of 100 MiB is 75000 units: no vector erased at its front
  std::uint64_t queued_ = 0;
  std::vector<std::uint64_t> delivered_;
  std::uint64_t delivered_bytes_ = 0;
  std::uint64_t timeouts_ = 0;
  ArqTime now_{};
  ArqTime last_delivery_{};
  bool fec_ = false;
  lp::TailFecSender fec_sender_;
  lp::TailFecReceiver fec_receiver_;
  std::deque<lp::RepairSymbol> repairs_;
  std::uint64_t repairs_sent_ = 0;
  double repair_loss_ = 0;
  std::mt19937_64 repair_rng_{99};
  ArqDuration wake_every_{0};
  std::int64_t known_loss_ppm_ = -1;
  std::uint64_t sent_bytes_ = 0;
};

// Goodput (message bytes delivered per second) between two fake times.
inline double goodput(PacedTransfer& transfer, ArqTime from, ArqTime to) {
  transfer.run(from, true);
  const std::uint64_t before = transfer.delivered_bytes();
  transfer.run(to, true);
  return static_cast<double>(transfer.delivered_bytes() - before) / std::chrono::duration<double>(to - from).count();
}

// The geostationary path of the emulated `geo` link: 155 Mbit/s, 540 ms RTT, a tail-drop queue of
// one bandwidth-delay product (10.5 MB, ~7100 datagrams: 111 x start-up's first window).
const PathProfile kGeoPath{.rate = 155e6 / 8, .delay = 270ms, .queue = 10'462'500};
constexpr ArqDuration kGeoRtt = 540ms;

// geo-lossy (netem/wan --profile geo-lossy [--loss 5]): random loss both ways.
inline PathProfile geo_path(double loss) {
  PathProfile path = kGeoPath;
  path.loss = path.ack_loss = loss;
  return path;
}

// A long, fast path for the warm start: 50 Mbit/s, 200 ms RTT, a queue of one bandwidth-delay
// product (1.25 MB, ~850 datagrams: 13 x start-up's first window).
const PathProfile kLongPath{.rate = 6.25e6, .delay = 100ms, .queue = 1'250'000};
constexpr ArqDuration kLongRtt = 200ms;

}  // namespace pacer_test
