#include "session/session.h"

#include <algorithm>
#include <chrono>

#include "arq/arq_wire.h"
#include "session/connection.h"
#include "security/frame_cipher.h"

namespace lp {
namespace {

// The probe interval (silence threshold, redial back-off ceiling) is kProbeRoundTrips round
// trips, but not less than kMinProbeInterval (a busy host needs that long for connect +
// handshake) nor more than LONGPIPE_CONNECT_RETRY_MAX_MS.
constexpr int kProbeRoundTrips = 6;
constexpr std::chrono::milliseconds kMinProbeInterval{250};
// While a path is silent a new probe starts every kProbeStartRoundTrips round trips (within the
// same bounds): after the link returns, the next one starts within that, and a connection needs
// 3 round trips (SYN, HELLO/CHALLENGE, AUTH/IDENTIFY) before data. Each probe may take
// Session::kMaxProbeAttemptsPerSlot start intervals (6 round trips): room for one lost packet.
constexpr int kProbeStartRoundTrips = 2;
// A new session's streams are dialled together and come up within a few ms of one another; its
// first DATA waits for the last of them at most this share of the handshake's round trip (a
// slower one costs less than the initial windows the burst would miss).
constexpr int kColdGatherRoundTripShare = 4;
// A stall of the engine's own thread longer than this share of the probe interval restarts the
// silence clock (Session::note_engine_stall): longer ones, plus the keep-alive spacing, could alone
// exceed the silence threshold (a frozen host or process stopped for 3 s made both ends probe and
// re-send a live path: core.engine-freeze). Ordinary late wake-ups on the loaded 2-core test
// machine stayed at or below 138 ms (geo collectives benchmark, load up to 29), far below half of it
// (1 s on geo).
constexpr int kStallToleranceDivisor = 2;

}  // namespace

Session::Session(std::string peer, const ArqConfig& arq_config, const Config& config, Clock::time_point now)
    : peer_(std::move(peer)),
      config_(config),
      arq_(arq_config),
      // On the datagram carrier one TCP connection (the control connection) and no split by size.
      streams_(config.datagram_carrier() ? 1 : config.streams, config.datagram_carrier() ? 0 : config.small_message,
               config.spill_large),
      datagram_(config.datagram_carrier() ? std::make_unique<DatagramChannel>(config) : nullptr),
      last_heard_(now),
      next_dial_(now),
      backoff_(config.connect_retry_initial),
      path_(config.rtt_given ? std::optional<std::chrono::microseconds>(config.rtt) : std::nullopt,
            config.bandwidth_cap_bytes_per_second()),
      arq_config_(arq_config) {}

bool Session::tcp_certain() const {
  if (config_.carrier == CarrierChoice::kTcp) return true;
  if (offer) return offer_binds_tcp(*offer);
  return judgement_before_dial == DialJudgement::kTcp;  // decided, and the offer will say tcp
}

bool Session::may_agree_early(const Connection& connection) const {
  const Handshake& handshake = connection.handshake();
  if (!offer || !connection.outgoing() || !handshake.peer_carrier_offer_known()) return false;
  // Agreed already on another of the first connections (the large-message stream's CHALLENGE came
  // first): it stands for this one if the peer offers the same here.
  if (carrier_agreed_) return handshake.peer_carrier_offer() == agreed_peer_offer_;
  return !agree_carrier(*offer, CarrierOffer::decode(handshake.peer_carrier_offer())).error;
}

CarrierOffer Session::our_offer() const {
  return offer.value_or(CarrierOffer{config_.carrier, config_.datagram_carrier(), false});
}

std::optional<std::string> Session::agree_carrier_with(const Connection& connection) {
  carrier_agreed_ = true;
  const CarrierOffer ours = our_offer();
  agreed_peer_offer_ = connection.handshake().peer_carrier_offer();
  const CarrierOffer theirs = CarrierOffer::decode(agreed_peer_offer_);
  if (theirs.setting == CarrierChoice::kAuto && theirs.datagrams_ready) peer_verdict_ = theirs.prefers_datagrams ? 1 : 0;
  const CarrierAgreement agreed = agree_carrier(ours, theirs);
  if (agreed.error) return agreed.error;
  if (agreed.datagrams && !datagram_) {
    // An auto session: nothing was submitted yet (the driver waits for carrier_agreed()).
    ArqConfig datagram_config = arq_config_;
    configure_for_datagrams(datagram_config, config_);
    arq_ = Arq(datagram_config);
    datagram_ = std::make_unique<DatagramChannel>(config_);
    streams_.use_control_stream_only();
  }
  return std::nullopt;
}

Session::Attachment Session::attach(Connection& connection, const std::string& local_endpoint, Clock::time_point now,
                                    bool proven) {
  const bool carrier_was_down = streams_.established() == 0;
  const bool our_attempt = streams_.is_attempt(connection);
  Attachment result;
  streams_.ensure_slot(connection.stream);
  if (Connection* old = streams_.stream(connection.stream)) {
    // Simultaneous connections for one stream (both sides dialled, or a redial). A connection
    // that has been silent (an outage: both ends see it so) always gives way to the new one.
    const std::string& old_dialler = old->outgoing() ? local_endpoint : peer_;
    const std::string& new_dialler = connection.outgoing() ? local_endpoint : peer_;
    const bool old_is_silent = old->suspect || now - old->last_received > silence_threshold();
    if (!old_is_silent && StreamScheduler::keep_existing(old_dialler, new_dialler)) {
      streams_.remove(connection);  // it may be our own dial for this slot
      return {&connection, false, {}, std::nullopt};
    }
    result.loser = old;
  }
  streams_.install(connection);
  // Else at confirm(), with the peer's IDENTIFY (an error, or an acceptor's offer not known yet).
  if (!carrier_agreed_ && (proven || may_agree_early(connection))) {
    result.carrier_error = agree_carrier_with(connection);
    if (result.carrier_error) return result;
  }
  if (result.loser != nullptr) forget(*result.loser);  // replaced: the new one seals if the loser did
  if (datagram_ && !proven) key_datagrams(connection, now);  // a proven one: confirm() below
  // The first of our probes to get through carries the stream; the later ones would only replace
  // it again (the newer wins between two of ours) and send the whole window once more. Those the
  // peer may already hold (IDENTIFY sent) go on: abandoning one the peer took for the stream
  // would leave neither end with it; when it is up it replaces this one on both ends alike.
  if (our_attempt) {
    const std::vector<Connection*> others = streams_.attempts(connection.stream);
    for (Connection* other : others) {
      if (other->handshake().identity_sent()) continue;
      streams_.remove(*other);
      result.abandoned.push_back(other);
    }
  }
  if (ever_established_ && carrier_was_down) ++counters_.reconnects;  // a loss, not a tie-break
  if (!ever_established_ && gather_until_ == Clock::time_point{}) {
    gather_until_ = now + Clock::duration(path_.handshake_rtt().value_or(config_.rtt)) / kColdGatherRoundTripShare;
  }
  if (proven) confirm(connection, now);
  // When the carrier comes back (or a stream is replaced, taking its bytes with it), every
  // unacknowledged message goes again; the peer drops what it already had.
  if (carrier_was_down || result.loser != nullptr) arq_.carrier_reset(now);
  return result;
}

std::optional<std::string> Session::confirm(Connection& connection, Clock::time_point now) {
  if (!carrier_agreed_) {
    if (auto error = agree_carrier_with(connection)) return error;
  } else if (const std::uint8_t theirs = connection.handshake().peer_carrier_offer(); theirs != agreed_peer_offer_) {
    // A peer keeps one offer per session; a different one, sealed, means the carrier was agreed on
    // an offer the peer never made (a first CHALLENGE altered on the way, its connection closed at
    // IDENTIFY): the messages taken since are in the wrong carrier's form.
    const CarrierOffer ours = our_offer();
    const CarrierAgreement again = agree_carrier(ours, CarrierOffer::decode(theirs));
    if (again.error) return again.error;
    if (again.datagrams != (datagram_ != nullptr)) {
      return std::string("the peer's carrier offer differs from the one this session agreed on (altered on the way?)");
    }
  }
  connection.reader().set_max_payload(kSequenceSize + config_.max_message + kMessageTrailerSize);
  heard_from_peer(now);
  backoff_ = config_.connect_retry_initial;
  peer_said_goodbye_ = false;
  ++counters_.connections_established;
  ever_established_ = true;
  if (connection.link) counters_.tuning = connection.link->tuning();
  counters_.protection = protection_name(connection.handshake().protection());
  if (datagram_) key_datagrams(connection, now);
  return std::nullopt;
}

void Session::key_datagrams(Connection& connection, Clock::time_point now) {
  datagram_->add_keys(connection.id(), connection.handshake());
  if (sealing_ == nullptr) {
    if (datagram_->seal_with(connection.id())) sealing_ = &connection;
    return;
  }
  // Our first dials' AUTH and IDENTIFY left together, and the peer answers each as it reads it:
  // one proven well before the sealer means the sealer's were lost (TCP re-sends them after its
  // RTO, over a second on a long path), and the peer holds our datagrams unopened until then.
  if (&connection != sealing_ && sealing_->awaiting_peer_proof && connection.authenticated() && reseal_to_ == nullptr) {
    reseal_to_ = &connection;
    const auto round_trip = Clock::duration(path_.handshake_rtt().value_or(config_.rtt));
    reseal_at_ = now + std::max<Clock::duration>(kMinResealWait, round_trip / kResealWaitShare);
  }
}

void Session::forget(const Connection& connection) {
  if (&connection == sealing_) sealing_ = nullptr;  // its keys still open; the next attached one seals
  if (&connection == reseal_to_) reseal_to_ = nullptr;
}

void Session::stream_left(Clock::time_point now) {
  if (streams_.established() == 0) return;
  if (!datagram_) {
    // Duplicates are dropped at the peer.
    arq_.carrier_reset(now);
    return;
  }
  if (sealing_ != nullptr) return;
  for (Connection* stream : streams_.streams()) {
    if (stream != nullptr && stream->authenticated() && datagram_->seal_with(stream->id())) {
      sealing_ = stream;
      return;
    }
  }
}

void Session::reseal_if_due(Clock::time_point now) {
  if (reseal_to_ == nullptr || now < reseal_at_) return;
  Connection* proven = std::exchange(reseal_to_, nullptr);
  if (sealing_ == nullptr || !sealing_->awaiting_peer_proof || !datagram_->seal_with(proven->id())) return;
  sealing_ = proven;
  ++counters_.datagram_reseals;
  datagram_->resend_unread(arq_, now);  // what went under the old keys waits unopened at the peer
}

void Session::detach(Connection& connection, bool was_attempt, const std::string& why, Clock::time_point now) {
  counters_.last_connection_error = why;
  forget(connection);
  if (streams_.remove(connection)) {
    next_dial_ = now + backoff_;
    stream_left(now);
  } else if (was_attempt && connection.outgoing()) {
    ++counters_.connect_failures;
  }
}

bool Session::identity_matches(const std::vector<std::byte>& token) {
  if (peer_token_.empty()) {
    peer_token_ = token;
    return true;
  }
  return bound_to(token);
}

bool Session::bound_to(const std::vector<std::byte>& token) const {
  return !peer_token_.empty() && Authenticator::proofs_match(token, peer_token_);
}

void Session::note_dial_error(const std::string& why) {
  counters_.last_connection_error = why;
  ++counters_.connect_failures;
}

std::optional<std::string> Session::on_frame(Connection& connection, const FrameView& frame, Clock::time_point now) {
  if (datagram_ && (frame.type == FrameType::kData || frame.type == FrameType::kAck)) {
    throw MalformedFrame(std::string(frame_type_name(frame.type)) +
                         " on the control connection of a datagram session (is LONGPIPE_CARRIER the same at both ends?)");
  }
  switch (frame.type) {
    case FrameType::kData: {
      const DataFrame data = decode_data(frame.payload, config_.max_message);
      if (!arq_.on_data(data.sequence, ArqPayload(data.message.begin(), data.message.end()), now)) {
        throw MalformedFrame("DATA " + std::to_string(data.sequence) + " lies far beyond the receive window");
      }
      return std::nullopt;
    }
    case FrameType::kAck:
      if (!arq_.on_ack(from_wire(decode_ack(frame.payload)), now)) {
        throw MalformedFrame("ACK acknowledges messages never sent");
      }
      return std::nullopt;
    case FrameType::kKeepalive:
      return std::nullopt;
    case FrameType::kClose: {
      const CloseFrame close = decode_close(frame.payload);
      if (close.reason == CloseReason::kShutdown) peer_said_goodbye_ = peer_left_ = true;
      if (close.reason == CloseReason::kDuplicate && streams_.remove(connection)) {
        // The peer keeps another connection for this stream (or, on datagrams, no longer needs
        // this key backup): not a loss.
        connection.session = nullptr;
        forget(connection);
        stream_left(now);
      }
      return "peer closed the connection: " + close.text;
    }
    default:
      throw MalformedFrame(std::string(frame_type_name(frame.type)) + " after the handshake");
  }
}

void Session::take_received(std::vector<Message>& batch) {
  if (datagram_) {
    std::vector<ArqPayload> packed;
    if (!datagram_->take_received(arq_, packed)) ++counters_.malformed_frames;
    for (ArqPayload& bytes : packed) {
      try {
        deliver(unpack_message(std::move(bytes)), batch);
      } catch (const std::exception&) {
        ++counters_.malformed_frames;  // an authenticated peer's units did not form a message
      }
    }
    return;
  }
  while (auto delivery = arq_.receive()) deliver(unpack_message(std::move(delivery->payload)), batch);
}

void Session::deliver(Message message, std::vector<Message>& batch) {
  message.peer_endpoint = peer_;
  ++counters_.messages_received;
  counters_.bytes_received += message.body.size();
  batch.push_back(std::move(message));
}

void Session::pump(Clock::time_point now) {
  // Datagrams flow on the keys of the last sealing connection even while it is being replaced.
  if (datagram_) {
    reseal_if_due(now);
    datagram_->pump(arq_, now);
  }
  Connection* first = streams_.first();
  if (first == nullptr) return;
  if (datagram_) {
    send_keepalives(now);
    return;
  }
  // DATA striped over the streams; the receiver's ARQ puts the messages back in order.
  const bool may_spill = window_of && streams_.spill_established() > 0;
  const double path_bdp = may_spill ? judged_bdp() : 0;
  // One TCP_INFO read per stream and pump: what this pump encodes is counted by pending_output().
  std::vector<std::optional<StreamWindow>> windows(may_spill ? streams_.slots() : 0);
  const StreamScheduler::WindowLookup window = [&](const Connection& stream) {
    std::optional<StreamWindow>& seen = windows[stream.stream];
    if (!seen) seen = window_of(stream);
    return *seen;
  };
  while (Connection* target = cold_gathering(now) ? nullptr : streams_.next_with_room()) {
    auto frame = arq_.poll_transmit(now);
    if (!frame) break;
    Connection* preferred = streams_.by_size(frame->payload.size());
    if (preferred != nullptr) target = preferred;
    if (may_spill) {
      const std::size_t frame_bytes = kFrameHeaderSize + kSequenceSize + frame->payload.size() + kTagSize;
      if (Connection* spill = streams_.spill_target(*target, frame_bytes, path_bdp, window)) {
        target = spill;
        if (frame_bytes > StreamScheduler::kLargeSpillFrame) spill->carried_large_spill = true;
        preferred = nullptr;  // the frame's own stream may be full: the loop goes on
        ++counters_.spilled_messages;
      }
    }
    const std::size_t start = target->output().size();
    encode_data(target->output(), frame->seq, frame->payload);
    target->seal_from(start);
    target->last_sent = now;
    streams_.sent_on(*target);
    // A full preferred stream waits for its carrier rather than spilling onto the other kind.
    if (preferred != nullptr && preferred->pending_output() >= StreamScheduler::kOutputHighWater) break;
  }
  if (auto ack = arq_.poll_ack(now)) send_ack(*first, *ack, now);
  send_keepalives(now);
}

void Session::acknowledge_owed(Clock::time_point now) {
  if (failed_ || !arq_.ack_deadline()) return;
  if (datagram_) {
    datagram_->acknowledge_now(arq_);
    return;
  }
  if (Connection* first = streams_.first()) send_ack(*first, arq_.make_ack(), now);
}

// ACKs on one stream (the first), so that they stay in order.
void Session::send_ack(Connection& stream, const ArqAck& ack, Clock::time_point now) {
  const std::size_t start = stream.output().size();
  encode_ack(stream.output(), to_wire(ack));
  stream.seal_from(start);
  stream.last_sent = now;
}

bool Session::cold_gathering(Clock::time_point now) const {
  if (now >= gather_until_) return false;
  for (std::size_t slot = 0; slot < streams_.slots(); ++slot) {
    if ((slot < streams_.own_streams() || StreamScheduler::is_spill_slot(slot)) && streams_.stream(slot) == nullptr &&
        !streams_.attempts(slot).empty()) {
      return true;
    }
  }
  return false;
}

std::vector<std::size_t> Session::spill_slots_to_dial() const {
  std::vector<std::size_t> slots;
  const bool may_be_tcp = tcp_certain() || (!offer && judgement_before_dial == DialJudgement::kAtHandshake);
  if (ever_established_ || spill_forgone_ || datagram_ || !may_be_tcp) return slots;
  for (std::size_t slot = kFirstSpillStream; slot < kFirstSpillStream + config_.spill_streams; ++slot) {
    if (streams_.free_to_dial(slot)) slots.push_back(slot);
  }
  return slots;
}

std::optional<std::size_t> Session::spare_control_slot_to_dial() const {
  constexpr std::size_t kSpareSlot = 1;
  if (ever_established_ || !datagram_ || streams_.own_streams() != 1 || !streams_.free_to_dial(kSpareSlot)) {
    return std::nullopt;
  }
  return kSpareSlot;
}

void Session::forgo_spill_for_datagrams() {
  spill_forgone_ = true;
  key_backups_open_ = kKeyBackups;
  key_backups_live_ = true;
}

bool Session::keep_as_key_backup(Connection& spill) {
  const bool keys_proven = sealing_ != nullptr && sealing_->authenticated();
  if (datagram_ && key_backups_open_ > 0 && !keys_proven) {
    --key_backups_open_;
    return true;
  }
  streams_.remove(spill);
  return false;
}

std::vector<Connection*> Session::retire_key_backups() {
  if (!key_backups_live_ || sealing_ == nullptr || !sealing_->authenticated()) return {};
  key_backups_live_ = false;
  key_backups_open_ = 0;
  std::vector<Connection*> retired;
  for (std::size_t slot = kFirstSpillStream; slot < streams_.slots(); ++slot) {
    for (Connection* attempt : std::vector<Connection*>(streams_.attempts(slot))) {
      streams_.remove(*attempt);
      retired.push_back(attempt);
    }
    if (Connection* stream = streams_.stream(slot); stream != nullptr && stream != sealing_) {
      forget(*stream);
      streams_.remove(*stream);
      retired.push_back(stream);
    }
  }
  return retired;
}

double Session::judged_bdp() const {
  return path_.judged_bdp_bytes(config_.bandwidth_mbit * 1e6 / 8,
                                std::chrono::duration_cast<std::chrono::microseconds>(config_.rtt));
}

void Session::send_keepalives(Clock::time_point now) {
  for (Connection* stream : streams_.streams()) {
    if (stream != nullptr && stream->pending_output() == 0 && now - stream->last_sent >= config_.keepalive_interval) {
      const std::size_t start = stream->output().size();
      encode_keepalive(stream->output());
      stream->seal_from(start);
      stream->last_sent = now;
    }
  }
}

Session::Clock::duration Session::path_rtt() const {
  // The carrier's own RTT (TCP_INFO, refreshed by the driver): the ARQ's message-level SRTT
  // includes the time messages queue in socket buffers, which a connect never waits for.
  const std::chrono::microseconds carrier_rtt(counters_.tcp.rtt_us);
  const ArqDuration message_rtt = arq_.stats().srtt;
  // Before either, the handshake's round trip (path_estimator.h), else LONGPIPE_RTT or its default.
  const auto measured = path_.handshake_rtt();
  return carrier_rtt.count() > 0   ? Clock::duration(carrier_rtt)
         : message_rtt.count() > 0 ? Clock::duration(message_rtt)
         : measured                ? Clock::duration(*measured)
                                   : Clock::duration(config_.rtt);
}

Session::Clock::duration Session::round_trips(int count) const {
  return std::clamp<Clock::duration>(path_rtt() * count, kMinProbeInterval,
                                     std::max<Clock::duration>(kMinProbeInterval, config_.connect_retry_max));
}

Session::Clock::duration Session::probe_interval() const { return round_trips(kProbeRoundTrips); }

Session::Clock::duration Session::probe_start_interval() const { return round_trips(kProbeStartRoundTrips); }

Session::Clock::duration Session::probe_attempt_limit() const {
  return std::min<Clock::duration>(probe_start_interval() * kMaxProbeAttemptsPerSlot, config_.connect_timeout);
}

Session::Clock::duration Session::stall_tolerance() const { return probe_interval() / kStallToleranceDivisor; }

bool Session::note_engine_stall(Clock::time_point now, Clock::duration late) {
  if (failed_ || late <= stall_tolerance()) return false;
  last_heard_ = std::max(last_heard_, now);
  ++counters_.engine_stalls;
  return true;
}

Session::TimeoutActions Session::handle_timeout(Clock::time_point now, bool reading_paused) {
  TimeoutActions actions;
  if (failed_) return actions;
  if (reading_paused) last_heard_ = now;  // our own back-pressure, not the peer's silence
  const bool has_work = !arq_.all_acknowledged();
  const Clock::duration silent_for = now - last_heard_;
  const bool silent = !peer_said_goodbye_ && silent_for > silence_threshold();
  // While the path is silent a redial is short and they follow each other closely (unchanged);
  // probes overlap instead (probe_attempt_limit()).
  actions.attempt_limit = silent ? std::min<Clock::duration>(probe_interval(), config_.connect_timeout)
                                 : Clock::duration(config_.connect_timeout);
  actions.probe_limit = probe_attempt_limit();
  // Redial our own streams that are down (the peer redials its own too; ties are broken in attach).
  if (may_dial_ && now >= next_dial_ && (!peer_said_goodbye_ || has_work)) {
    actions.dial = streams_.slots_to_dial();
    if (!actions.dial.empty()) {
      for (std::size_t slot : spill_slots_to_dial()) actions.dial.push_back(slot);
      if (auto spare = spare_control_slot_to_dial()) actions.dial.push_back(*spare);
      if (peer_said_goodbye_) last_heard_ = now, peer_said_goodbye_ = false;
      next_dial_ = now + backoff_;
      // The back-off stops at a few round trips of the path (and LONGPIPE_CONNECT_RETRY_MAX_MS).
      backoff_ = std::min<Clock::duration>({backoff_ * 2, Clock::duration(config_.connect_retry_max),
                                            std::max<Clock::duration>(config_.connect_retry_initial, probe_interval())});
    }
  }
  // A dead peer: silent for LONGPIPE_DEAD_PEER_MS while its host refuses or resets connections.
  // A silent path (nothing answers) keeps its session, window and probes: outages end.
  const auto last_error = [this] {  // built only for a failure: handle_timeout runs every turn
    return counters_.last_connection_error.empty() ? std::string() : "; last error: " + counters_.last_connection_error;
  };
  if (!peer_said_goodbye_ && refused_since_heard_ && silent_for > config_.dead_peer_timeout) {
    actions.failure = "no sign of life for " + std::to_string(config_.dead_peer_timeout.count()) +
                      " ms (LONGPIPE_DEAD_PEER_MS) and its host refuses or resets connections" + last_error();
    return actions;
  }
  if (!peer_said_goodbye_ && config_.silent_path_timeout.count() > 0 && silent_for > config_.silent_path_timeout) {
    actions.failure = "the path has been silent for " + std::to_string(config_.silent_path_timeout.count()) +
                      " ms (LONGPIPE_SILENT_PATH_MS)" + last_error();
    return actions;
  }
  // Streams established before a silence may be stuck behind TCP's backed-off retransmission
  // timer (seconds to a minute after a long outage, in either direction, even once the other one
  // flows again): probe the path with fresh connections per such stream, a new one every probe
  // start interval, a few in progress at once; once one is up it replaces the suspect one (the
  // others are abandoned) and everything unacknowledged goes again.
  if (silent) {
    for (Connection* stream : streams_.streams()) {
      if (stream != nullptr) stream->suspect = true;
    }
  }
  if (has_suspect_stream() && now >= next_probe_) {
    next_probe_ = now + probe_start_interval();
    for (std::size_t slot = 0; slot < streams_.own_streams(); ++slot) {
      const Connection* stream = streams_.stream(slot);
      if (stream != nullptr && stream->suspect && streams_.attempts(slot).size() < kMaxProbeAttemptsPerSlot) {
        actions.probe.push_back(slot);
      }
    }
    counters_.path_probes += actions.probe.size();
  }
  return actions;
}

bool Session::has_suspect_stream() const {
  for (std::size_t slot = 0; slot < streams_.own_streams(); ++slot) {
    if (const Connection* stream = streams_.stream(slot); stream != nullptr && stream->suspect) return true;
  }
  return false;
}

Session::Clock::time_point Session::next_deadline(Clock::time_point now) const {
  Clock::time_point wake = Clock::time_point::max();
  if (failed_) return wake;
  if (datagram_) {
    if (auto deadline = datagram_->next_deadline(arq_, now)) wake = std::min(wake, *deadline);
    if (reseal_to_ != nullptr) wake = std::min(wake, reseal_at_);
  } else if (streams_.first() != nullptr) {  // nothing can be sent without a connection
    if (auto deadline = arq_.next_deadline()) wake = std::min(wake, *deadline);
    // pump() stops at a stream's high-water mark; once the carrier has taken that output (a write
    // that took it all leaves nothing to wait for, no event follows), the rest must go now.
    if (cold_gathering(now)) {
      wake = std::min(wake, gather_until_);
    } else if (auto bytes = arq_.next_transmit_bytes(); bytes && streams_.has_room_for(*bytes)) {
      wake = std::min(wake, now);
    }
  }
  for (const Connection* stream : streams_.streams()) {
    if (stream != nullptr && stream->pending_output() == 0) {
      wake = std::min(wake, stream->last_sent + config_.keepalive_interval);
    }
  }
  if (may_dial_ && (!peer_said_goodbye_ || !arq_.all_acknowledged()) && !streams_.slots_to_dial().empty()) {
    wake = std::min(wake, std::max(now, next_dial_));
  }
  // Strictly after the timeouts: handle_timeout() compares with ">".
  constexpr std::chrono::milliseconds kJustAfter{1};
  if (!peer_said_goodbye_) {
    if (refused_since_heard_) wake = std::min(wake, last_heard_ + config_.dead_peer_timeout + kJustAfter);
    if (config_.silent_path_timeout.count() > 0) {
      wake = std::min(wake, last_heard_ + config_.silent_path_timeout + kJustAfter);
    }
    if (has_suspect_stream()) {
      wake = std::min(wake, next_probe_);
    } else if (streams_.established() > 0) {
      wake = std::min(wake, last_heard_ + silence_threshold() + kJustAfter);
    }
  }
  return wake;
}

std::vector<Connection*> Session::fail() {
  failed_ = true;
  sealing_ = reseal_to_ = nullptr;  // the connections are closed
  std::vector<Connection*> connections;
  for (std::size_t slot = 0; slot < streams_.slots(); ++slot) {
    if (Connection* c = streams_.stream(slot)) connections.push_back(c);
    for (Connection* c : streams_.attempts(slot)) connections.push_back(c);
  }
  return connections;
}

}  // namespace lp
