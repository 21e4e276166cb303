#include "carrier/datagram/datagram_channel.h"

#include <algorithm>
#include <limits>

#include "arq/arq_wire.h"
#include "security/handshake.h"
#include "message.h"

namespace lp {
namespace {

// A unit's first byte: set on the last unit of a message.
constexpr std::byte kLastUnit{1};

std::size_t units_for(std::size_t bytes) { return std::max<std::size_t>(1, (bytes + kDatagramUnit - 1) / kDatagramUnit); }

// The peer's arrival times for the pacer; none if it reported none (it has received no DATA yet).
std::optional<DatagramPacer::Arrivals> pacer_arrivals(const AckArrivals& wire) {
  if (wire.newest_ns == 0) return std::nullopt;
  const std::chrono::nanoseconds newest(static_cast<std::int64_t>(wire.newest_ns & INT64_MAX));
  return DatagramPacer::Arrivals{newest, newest - std::chrono::nanoseconds(wire.first_ns), wire.count};
}

}  // namespace

void configure_for_datagrams(ArqConfig& arq, const Config& config) {
  arq.mode = ArqMode::kDatagram;
  const auto units = std::min<std::uint64_t>(std::numeric_limits<std::uint32_t>::max(),
                                             std::max<std::uint64_t>(config.window_messages, config.window_bytes / kDatagramUnit + 1));
  arq.send_window_messages = arq.receive_window_messages = static_cast<std::uint32_t>(units);
  arq.max_sack_ranges = kDatagramSackRanges * kDatagramAckParts;
  arq.min_rto_margin = kDatagramRtoMargin;
  arq.tail_copies = kDatagramTailCopies;
  // Fewer ACKs (kDatagramAckEvery); LONGPIPE_ACK_DELAY_MS, if set, replaces the delay.
  arq.ack_every_messages = kDatagramAckEvery;
  arq.ack_delay = config.ack_delay > ArqDuration::zero() ? ArqDuration(config.ack_delay) : ArqDuration(kDatagramAckDelay);
  arq.ack_new_holes_only = true;
  // What fast_retransmit_threshold ACKs of kDatagramAckEvery units each acknowledge: the same
  // evidence when ACKs come one per turn, each for many units (a burst's tail).
  arq.fast_retransmit_messages = kDatagramAckEvery * arq.fast_retransmit_threshold;
  // With the tail's repairs (new units), its recent re-sends get copies (tail_fec.h).
  if (config.datagram_fec) arq.copy_recent_resends_rtts = TailFecSender::kTailRoundTrips;
}

DatagramChannel::DatagramChannel(const Config& config) : config_(config), pacer_(config.rtt, config.start_jump, config.pacing_catch_up) {}

void DatagramChannel::add_keys(std::uint64_t owner, const Handshake& handshake) {
  if (!handshake.datagram_keys()) return;
  add_keys(owner, *handshake.datagram_keys(), handshake.outgoing(), handshake.protection());
}

void DatagramChannel::add_keys(std::uint64_t owner, const TrafficKeys& datagram_keys, bool outgoing,
                               Protection protection) {
  for (const KeySet& set : key_sets_) {
    if (set.owner == owner) return;
  }
  if (key_sets_.size() == kMaxKeySets) {
    // The oldest that neither seals nor opened the last datagram goes: a connection's keys are
    // never replaced while it seals, nor the ones the peer seals under, as far as we know.
    const auto oldest = std::find_if(key_sets_.begin(), key_sets_.end(), [this](const KeySet& set) {
      return set.crypto.get() != sealing_ && set.crypto.get() != last_opened_;
    });
    key_sets_.erase(oldest);
  }
  key_sets_.push_back({owner, std::make_unique<DatagramCrypto>(datagram_keys, outgoing, protection)});
}

bool DatagramChannel::seal_with(std::uint64_t owner) {
  auto set = std::find_if(key_sets_.begin(), key_sets_.end(), [&](const KeySet& s) { return s.owner == owner; });
  if (set == key_sets_.end()) return false;
  sealing_ = set->crypto.get();
  ++key_epoch_;
  outgoing_.clear();  // sealed under other keys: the peer may refuse them (the ARQ re-sends)
  // Neither these nor the datagrams in flight may ever be acknowledged. Counted in flight they
  // kept the window shut, so nothing was transmitted and no retransmission timer ran: the session
  // stalled for good (both ends dialling at once replaces the first control connection).
  pacer_.forget_in_flight();
  return true;
}

DatagramCrypto::Opened DatagramChannel::open(std::span<std::byte> datagram) {
  DatagramCrypto* first = last_opened_ != nullptr ? last_opened_ : sealing_;
  if (first == nullptr) return {DatagramCrypto::Verdict::kUnauthentic, {}, {}};  // no keys yet: nothing can be checked
  if (key_sets_.size() == 1) return first->open(datagram);
  open_scratch_.assign(datagram.begin(), datagram.end());
  DatagramCrypto::Opened opened = first->open(datagram);
  bool replayed = opened.verdict == DatagramCrypto::Verdict::kReplayed;
  if (opened.verdict != DatagramCrypto::Verdict::kUnauthentic && !replayed) return opened;  // opened, or malformed under any key
  for (auto set = key_sets_.rbegin(); set != key_sets_.rend(); ++set) {
    if (set->crypto.get() == first) continue;
    std::copy(open_scratch_.begin(), open_scratch_.end(), datagram.begin());
    opened = set->crypto->open(datagram);
    if (opened.verdict == DatagramCrypto::Verdict::kOpened) {
      last_opened_ = set->crypto.get();
      return opened;
    }
    // Fresh under these keys and not one frame: malformed, whichever key set called it a replay.
    if (opened.verdict == DatagramCrypto::Verdict::kMalformed) return opened;
    replayed = replayed || opened.verdict == DatagramCrypto::Verdict::kReplayed;
  }
  return {replayed ? DatagramCrypto::Verdict::kReplayed : DatagramCrypto::Verdict::kUnauthentic, {}, {}};
}

void DatagramChannel::warm_start(double rate, ArqDuration min_rtt, std::int64_t loss_ppm) {
  warm_start_offered_ = true;
  warm_start_rate_ = rate;
  known_loss_ppm_ = loss_ppm;
  (void)pacer_.seed(rate, min_rtt);  // its state (seed_state) says whether it was taken
}

bool DatagramChannel::can_accept(const Arq& arq, std::size_t bytes) const {
  return arq.can_accept(bytes + units_for(bytes));
}

void DatagramChannel::submit(Arq& arq, ArqPayload packed) {
  const std::size_t count = units_for(packed.size());
  const std::size_t size = (packed.size() + count - 1) / count;  // balanced: none much shorter
  for (std::size_t i = 0, offset = 0; i < count; ++i) {
    const std::size_t take = std::min(size, packed.size() - offset);
    ArqPayload unit;
    unit.reserve(take + 1);
    unit.push_back(i + 1 == count ? kLastUnit : std::byte{0});
    unit.insert(unit.end(), packed.begin() + static_cast<std::ptrdiff_t>(offset),
                packed.begin() + static_cast<std::ptrdiff_t>(offset + take));
    offset += take;
    arq.submit(std::move(unit));
  }
}

void DatagramChannel::push(std::vector<std::byte> datagram) {
  sealing_->seal(datagram);
  ++datagrams_sent_;
  outgoing_.push_back(std::move(datagram));
}

void DatagramChannel::resend_unread(Arq& arq, ArqTime now) {
  arq.resend_unread(now);
  repairs_.clear();  // over copies the peer could not read: the re-sent tail gets its own
  fec_sender_.protect_again_from(arq.acknowledged_below());
}

void DatagramChannel::pump(Arq& arq, ArqTime now) {
  arq.on_timer(now);
  if (const std::uint64_t timeouts = arq.stats().timeouts; timeouts != timeouts_seen_) {
    timeouts_seen_ = timeouts;
    pacer_.on_timeout();  // the ARQ presumed everything in flight lost
  }
  if (sealing_ == nullptr) return;
  bool data_sent = false;  // this turn: an ACK owed goes with it
  while (outgoing_.size() < kMaxQueued && now >= pacer_.next_send_time()) {
    // A full window holds units back, not a tail's repairs: no ACK names them, so they were never
    // in it, and behind a first flight that filled the initial window they would wait for the
    // next timer while the units they recover are re-sent.
    const bool window_open = pacer_.window_open();
    if (!window_open && (arq.next_transmit_bytes() || (repairs_.empty() && !fec_sender_.owes_repairs(arq)))) break;
    auto frame = window_open ? arq.poll_transmit(now) : std::nullopt;
    if (!frame) {
      if (const std::uint64_t end = arq.transmitted_end(); end != tail_marked_end_) {
        if (end - tail_marked_end_ >= kMeasuredTailUnits) tail_started_ = now;
        tail_marked_end_ = end;
      }
      if (repairs_.empty()) {
        if (window_open) pacer_.on_application_limited();
        if (!config_.datagram_fec) break;
        // The burst's last new unit has left: repairs over its last round trip.
        const double loss = TailFecSender::loss_estimate(pacer_.loss_ppm(), arq.stats(), known_loss_ppm_);
        for (RepairSymbol& repair : fec_sender_.protect_tail(arq, now, pacer_.min_rtt().value_or(config_.rtt), loss)) {
          repairs_.push_back(std::move(repair));
        }
      }
      // Repairs of blocks the peer has acknowledged whole are of no use any more.
      while (!repairs_.empty() && repairs_.front().first_sequence + repairs_.front().data_count <= arq.acknowledged_below()) {
        repairs_.pop_front();
      }
      if (repairs_.empty()) break;
      std::vector<std::byte> datagram;
      begin_datagram(datagram);
      encode_repair(datagram, repairs_.front().frame());
      repairs_.pop_front();
      push(std::move(datagram));
      ++repairs_sent_;
      pacer_.on_unacknowledged_sent(now, outgoing_.back().size() + kIpUdpOverhead);
      continue;
    }
    std::vector<std::byte> datagram;
    begin_datagram(datagram);
    encode_data(datagram, frame->seq, frame->payload);
    const std::uint64_t seq = frame->seq;
    push(std::move(datagram));
    pacer_.on_sent(now, seq, outgoing_.back().size() + kIpUdpOverhead);
    data_sent = true;
  }
  if (!ack_may_go(arq, now)) return;
  std::optional<ArqAck> ack = arq.poll_ack(now);
  // An ACK owed but delayed (kDatagramAckDelay) goes now if this turn sends data anyway: a reply
  // would otherwise reach the peer before the ACK of what it
  // answers, and the peer's next burst would begin with the last one unacknowledged.
  if (!ack && data_sent && arq.ack_deadline()) ack = arq.make_ack();
  if (ack) send_ack(*ack);
}

void DatagramChannel::acknowledge_now(Arq& arq) {
  if (sealing_ != nullptr && arq.ack_deadline()) send_ack(arq.make_ack());
}

void DatagramChannel::send_ack(const ArqAck& ack) {
  // When the DATA it answers arrived (the sender's packet train measures the path by them). The
  // further datagrams of a long ACK count none: they report no arrival the first did not.
  AckArrivals arrivals;
  arrivals.newest_ns = static_cast<std::uint64_t>(std::max<std::int64_t>(newest_arrival_, 0));
  if (data_since_ack_ > 0) {
    const std::int64_t first = std::clamp<std::int64_t>(newest_arrival_ - first_arrival_since_ack_, 0, UINT32_MAX);
    arrivals.first_ns = static_cast<std::uint32_t>(first);
    arrivals.count = static_cast<std::uint16_t>(std::min<std::uint64_t>(data_since_ack_, UINT16_MAX));
  }
  data_since_ack_ = 0;
  // One ACK datagram per kDatagramSackRanges ranges, lowest first, each a complete ACK of its
  // own (the same cumulative point): a long list of holes (5 % loss of a 10 MB window is ~350)
  // reaches the sender whole, not cut at what one datagram holds.
  std::size_t first = 0;
  do {
    const std::size_t count = std::min<std::size_t>(kDatagramSackRanges, ack.sack.size() - first);
    ArqAck part{ack.cumulative, {}, ack.window_messages};
    part.sack.assign(ack.sack.begin() + static_cast<std::ptrdiff_t>(first),
                     ack.sack.begin() + static_cast<std::ptrdiff_t>(first + count));
    first += count;
    AckFrame frame = to_wire(part);
    frame.arrivals = arrivals;
    arrivals.count = 0;
    arrivals.first_ns = 0;
    std::vector<std::byte> datagram;
    begin_datagram(datagram);
    encode_ack(datagram, frame);
    push(std::move(datagram));
  } while (first < ack.sack.size());
}

std::size_t DatagramChannel::ack_parts(const Arq& arq) const {
  const std::size_t ranges = std::min<std::size_t>(arq.sack_ranges(), arq.config().max_sack_ranges);
  return std::max<std::size_t>(1, (ranges + kDatagramSackRanges - 1) / kDatagramSackRanges);
}

bool DatagramChannel::ack_may_go(const Arq& arq, ArqTime now) const {
  const std::size_t parts = ack_parts(arq);
  if (parts == 1 || data_since_ack_ >= kDatagramsPerAckPart * parts) return true;
  const auto due = arq.ack_deadline();
  return due && now >= *due + kMultiAckWait;
}

std::optional<ArqTime> DatagramChannel::next_deadline(const Arq& arq, ArqTime now) const {
  if (sealing_ == nullptr) return std::nullopt;  // nothing can go before the keys (seal_with comes with an event)
  std::optional<ArqTime> wake = arq.retransmit_deadline();
  if (auto due = arq.ack_deadline()) {
    // A long ACK held back goes when enough data came (pump after that read) or at the latest here.
    const ArqTime ack = ack_may_go(arq, now) ? *due : *due + kMultiAckWait;
    wake = wake ? std::min(*wake, ack) : ack;
  }
  // A tail owed its repairs counts as something to send: the pump that finds the ARQ empty makes
  // them, and it may never come otherwise. When the application submits slower than the pacer
  // lets units go, each pump ends on the pacer's gap after one unit; after the last one nothing
  // else wakes the channel in time (the repairs would arrive after the receiver's SACKs asked for
  // the unit they recover).
  const bool tail_owed = config_.datagram_fec && fec_sender_.owes_repairs(arq);
  const bool units_wait = arq.next_transmit_bytes().has_value();
  if (outgoing_.size() < kMaxQueued &&
      ((pacer_.window_open() && (units_wait || !repairs_.empty() || tail_owed)) ||
       (!units_wait && (!repairs_.empty() || tail_owed)))) {  // repairs go past a full window (pump)
    const ArqTime paced = std::max(now, pacer_.next_send_time());
    wake = wake ? std::min(*wake, paced) : paced;
  }
  return wake;
}

DatagramChannel::Verdict DatagramChannel::on_datagram(Arq& arq, std::span<std::byte> datagram,
                                                      std::int64_t arrival_ns, ArqTime now, std::string& why) {
  DatagramCrypto::Opened opened = open(datagram);
  switch (opened.verdict) {
    case DatagramCrypto::Verdict::kOpened: break;
    case DatagramCrypto::Verdict::kMalformed: why = opened.why; return Verdict::kMalformed;
    case DatagramCrypto::Verdict::kUnauthentic: return Verdict::kUnauthentic;
    case DatagramCrypto::Verdict::kReplayed: return Verdict::kReplayed;
  }
  ++datagrams_received_;
  const FrameView& frame = *opened.frame;
  try {
    if (frame.type == FrameType::kData) {
      const DataFrame data = decode_data(frame.payload, kDatagramUnit);
      if (data.message.empty() || !arq.on_data(data.sequence, ArqPayload(data.message.begin(), data.message.end()), now)) {
        why = "DATA unit refused by the ARQ";
        return Verdict::kMalformed;
      }
      if (data_since_ack_++ == 0) first_arrival_since_ack_ = arrival_ns;
      newest_arrival_ = std::max(newest_arrival_, arrival_ns);
      fec_receiver_.on_data(arq, data.sequence, now);
      return Verdict::kAccepted;
    }
    if (frame.type == FrameType::kRepair) {
      if (!fec_receiver_.on_repair(arq, decode_repair(frame.payload), now)) {
        why = "REPAIR disagrees with its block";
        return Verdict::kMalformed;
      }
      return Verdict::kAccepted;
    }
    if (frame.type == FrameType::kAck) {
      const AckFrame wire = decode_ack(frame.payload);
      const ArqAck ack = from_wire(wire);
      if (!arq.on_ack(ack, now)) {
        why = "ACK acknowledges units never sent";
        return Verdict::kMalformed;
      }
      pacer_.on_ack(now, ack.cumulative, ack.sack, pacer_arrivals(wire.arrivals));
      if (tail_started_ && arq.all_acknowledged()) {
        tail_total_ += std::chrono::duration_cast<ArqDuration>(now - *tail_started_);
        ++tails_;
        tail_started_.reset();
      }
      return Verdict::kAccepted;
    }
    why = std::string(frame_type_name(frame.type)) + " in a datagram";
  } catch (const MalformedFrame& e) {
    why = e.what();
  }
  return Verdict::kMalformed;
}

DatagramStatistics DatagramChannel::statistics() const {
  DatagramStatistics s;
  s.used = true;
  s.datagrams_sent = datagrams_sent_;
  s.datagrams_received = datagrams_received_;
  s.pacer_phase = pacer_phase_name(pacer_.phase());
  s.warm_start = pacer_.warm_seed() ? pacer_seed_name(pacer_.seed_state()) : "none";
  s.start_jump = pacer_jump_name(pacer_);
  s.train_rate_mbit = pacer_.train_rate() * 8 / 1e6;
  s.trains = pacer_.trains();
  for (std::size_t i = 0; i < static_cast<std::size_t>(DatagramPacer::TrainRefusal::kCount); ++i) {
    const auto why = static_cast<DatagramPacer::TrainRefusal>(i);
    if (pacer_.train_refusals(why) > 0) s.train_refusals.emplace_back(train_refusal_name(why), pacer_.train_refusals(why));
  }
  s.pacing_rate_mbit = pacer_.pacing_rate() * 8 / 1e6;
  s.bandwidth_mbit = pacer_.bandwidth() * 8 / 1e6;
  s.window_bytes = pacer_.window_bytes();
  s.min_rtt_ms = pacer_.min_rtt() ? std::chrono::duration<double, std::milli>(*pacer_.min_rtt()).count() : 0;
  s.lost_datagrams = pacer_.lost_datagrams();
  s.backoffs_for_delay = pacer_.backoffs_for_delay();
  s.backoffs_for_loss = pacer_.backoffs_for_loss();
  s.in_flight_bytes = pacer_.in_flight();
  s.timeouts = timeouts_seen_;
  s.pacing_behind_ms = std::chrono::duration<double, std::milli>(pacer_.behind()).count();
  s.pacing_caught_up_ms = std::chrono::duration<double, std::milli>(pacer_.caught_up()).count();
  s.repairs_sent = repairs_sent_;
  s.repairs_received = fec_receiver_.repairs_received();
  s.units_recovered = fec_receiver_.recovered_units();
  s.burst_tails = tails_;
  s.burst_tail_ms = tails_ == 0 ? 0 : std::chrono::duration<double, std::milli>(tail_total_).count() / static_cast<double>(tails_);
  return s;
}

bool DatagramChannel::take_received(Arq& arq, std::vector<ArqPayload>& messages) {
  bool whole = true;
  while (auto delivery = arq.receive()) {
    const ArqPayload& unit = delivery->payload;
    partial_.insert(partial_.end(), unit.begin() + 1, unit.end());
    if (partial_.size() > config_.max_message + kMessageTrailerSize) {
      partial_.clear();  // an authenticated peer that does not follow the format: drop it
      whole = false;
      continue;
    }
    if ((unit.front() & kLastUnit) == kLastUnit) messages.push_back(std::exchange(partial_, {}));
    fec_receiver_.on_delivered(delivery->seq, std::move(delivery->payload));
  }
  return whole;
}

std::optional<PathSnapshot> DatagramChannel::path_snapshot() const {
  const auto min_rtt = pacer_.min_rtt();
  double rate = pacer_.path_rate();
  if (rate <= 0 && pacer_.seed_state() == DatagramPacer::Seed::kConfirmed) rate = warm_start_rate_;
  if (!min_rtt || rate <= 0) return std::nullopt;
  PathSnapshot out;
  out.min_rtt = std::chrono::duration_cast<std::chrono::microseconds>(*min_rtt);
  out.rate_bytes_per_second = rate;
  out.loss_ppm = pacer_.loss_ppm();
  return out;  // no TCP window or socket buffers: the control connection's say nothing
}

}  // namespace lp
