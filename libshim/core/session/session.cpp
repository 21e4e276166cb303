// A session's connections: the carrier agreement, attaching and confirming streams, datagram keys,
// spill and key-backup streams. Its messages: session_traffic.cpp; its timers: session_timers.cpp.
#include "session/session.h"

#include <algorithm>
#include <chrono>

#include "session/connection.h"
#include "wire/host_port.h"

namespace lp {
namespace {

// A new session's streams are dialled together and come up within a few ms of one another; its
// first DATA waits for the last of them at most this share of the handshake's round trip (a
// slower one costs less than the initial windows the burst would miss).
constexpr int kColdGatherRoundTripShare = 4;

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
  // RTO, over a second on a long path), and the peer holds our datagrams unopened meanwhile.
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

std::optional<std::string> Session::note_handshake_refused(const std::string& peer_text) {
  note_refused();
  if (identity_bound() || ++handshake_refusals_ < kHandshakeRefusalsToFail) return std::nullopt;
  return "the peer refused our handshake " + std::to_string(handshake_refusals_) +
         " times: do the job keys (LONGPIPE_KEY or LONGPIPE_KEY_FILE) match? (its reason: " +
         (peer_text.empty() ? std::string("authentication failed") : peer_text.substr(0, 200)) + ")";
}

void Session::note_dial_error(const std::string& why) {
  counters_.last_connection_error = why;
  ++counters_.connect_failures;
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
  // Through a site gateway the long path's window is the gateway's: a spill stream would only be
  // one more forwarded stream (and its link has no window to spill by).
  if (!site_of_endpoint(peer()).empty()) return slots;
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

}  // namespace lp
