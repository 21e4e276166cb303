// The endpoint's side of a connection's handshake (endpoint.h): the handshake's frames, the session
// a proven peer belongs to, the carrier offers, and the move to an established connection.
#include "session/endpoint.h"

namespace lp {
namespace {

// Whether the peer, agreeing with `challenged` (the offer our CHALLENGE carried), reaches what our
// session reaches with its own `offer`. Offers of one session may differ in auto's view of the path
// (judged per connection), which the agreement with a deciding dialler does not use.
bool same_agreement(const CarrierOffer& offer, const CarrierOffer& challenged, const CarrierOffer& theirs) {
  const CarrierAgreement ours = agree_carrier(offer, theirs), peers = agree_carrier(challenged, theirs);
  return ours.datagrams == peers.datagrams && ours.error.has_value() == peers.error.has_value();
}

}  // namespace

void Endpoint::handle_handshake_frame(Connection& connection, const FrameView& frame, Clock::time_point now) {
  Handshake& handshake = connection.handshake();
  if (connection.outgoing()) {
    // The peer's first frame (CHALLENGE) answers HELLO: its round trip is taken before the carrier
    // decision below judges the path by it (with HELLO in the SYN it is the only one).
    note_challenge_time(connection, now);
    // A dialler's IDENTIFY goes out with its answer to CHALLENGE.
    if (Session* session = connection.session) {
      const bool deciding = !session->offer;
      const CarrierOffer offer = offer_for(*session, connection);
      handshake.set_carrier_offer(offer.encode());
      if (deciding && !offer_binds_tcp(offer)) {
        forgo_spill_for_datagrams(*session);
      } else if (!deciding && !handshake.identity_sent() && session->spill_forgone() &&
                 StreamScheduler::is_spill_slot(connection.stream) && !session->keep_as_key_backup(connection)) {
        // Its CHALLENGE, after the session chose datagrams.
        connection.session = nullptr;  // not a loss for the session
        close_connection(connection, "not needed: the session chose datagrams", now);
        return;
      }
    }
  }
  const HandshakeStep step = handshake.on_frame(frame, connection.output());
  switch (step) {
    case HandshakeStep::kPending:
      mark_flush(connection);
      if (may_send_early(connection)) establish(connection, now, false);
      return;
    case HandshakeStep::kIdentified:
      connection.rtt_probe_sent = now;  // CHALLENGE: AUTH comes one round trip later
      connection.peer_endpoint = handshake.peer_endpoint();
      connection.stream = handshake.stream();
      retunes_.push_back(&connection);
      mark_flush(connection);
      return;
    case HandshakeStep::kIdentityPresented: {
      connection.note_handshake_answer(now);  // CHALLENGE -> AUTH
      Session& session = session_identified(connection.peer_endpoint, handshake.peer_token(), now);
      if (!session.identity_matches(handshake.peer_token())) {
        // A key holder claiming a live peer's endpoint, or that peer restarted without a goodbye
        // while we still hold its old session (which ends after LONGPIPE_DEAD_PEER_MS of silence).
        ++session.counters().identity_refused;
        ++statistics_.identity_refused;
        handshake.refuse_identity(connection.output());
        connection.flush_before_close = true;
        close_connection(connection, "identity refused", now);
        return;
      }
      // Our IDENTIFY repeats the offer our CHALLENGE carried (the dialler may have agreed on it).
      const CarrierOffer challenged = CarrierOffer::decode(handshake.carrier_offer());
      if (!session.offer) session.offer = challenged;
      if (!same_agreement(*session.offer, challenged, CarrierOffer::decode(handshake.peer_carrier_offer()))) {
        // Both ends dialled at once and our session decided its offer (our own dial's CHALLENGE)
        // after this connection's CHALLENGE went out, differently: the other connection carries
        // the session.
        send_close(connection, CloseReason::kDuplicate, "carrier offers crossed (both ends dialled at once)", now);
        close_connection(connection, "carrier offers crossed", now);
        return;
      }
      // The token this session's peer has from us: under the name we know it by.
      handshake.accept_identity(authenticator_.identity_token(session.peer()), connection.output());
      connection.session = &session;
      mark_flush(connection);
      establish(connection, now);
      return;
    }
    case HandshakeStep::kEstablished: {
      if (connection.session == nullptr) return;  // established early, then replaced: moot
      Session& session = *connection.session;  // dialling: the session that dialled
      if (!session.identity_matches(handshake.peer_token())) {
        // Authenticated, at the peer's own address, yet another process than the session began
        // with: what the old one had not acknowledged cannot be delivered.
        ++session.counters().identity_refused;
        fail_session(session, "the process at " + session.peer() + " is not the one this session began with (it restarted)",
                     now);
        return;
      }
      mark_flush(connection);
      if (connection.awaiting_peer_proof) {
        connection.awaiting_peer_proof = false;
        // Whatever the session sent so far went before the peer's proof: its 0.5-RTT data.
        if (session.counters().early_messages == 0) session.counters().early_messages = session.arq().stats().messages_sent;
        if (auto error = session.confirm(connection, now)) {
          send_close(connection, CloseReason::kProtocolError, "cannot agree on a carrier", now);
          fail_session(session, "cannot agree on a carrier: " + *error, now);
          return;
        }
        pump(session, now);
        retire_key_backups(session, now);
        return;
      }
      establish(connection, now);
      return;
    }
    // Nothing unauthenticated ends an established session: a failed proof or a CLOSE during the
    // handshake ends this attempt only (the peer may be an impostor at its address); the session
    // redials and fails, if at all, after LONGPIPE_DEAD_PEER_MS with this as its last error.
    case HandshakeStep::kRejected:
      note_rejected(connection);
      if (connection.outgoing()) note_host_refused(connection);  // its host answered: not a silent path
      connection.flush_before_close = true;  // the CLOSE that says why
      close_connection(connection, "the peer failed to prove the key (is LONGPIPE_KEY the same?)", now);
      return;
    case HandshakeStep::kRefusedByPeer: {
      // Unlike a CLOSE of another reason, a refusal of our key fails a session that never
      // authenticated its peer after a few in a row (Session::note_handshake_refused says why
      // that gives a forger no more than forged resets do).
      note_rejected(connection);
      Session* session = connection.session;
      close_connection(connection, "refused by the peer: authentication failed (is LONGPIPE_KEY the same?)", now);
      if (session == nullptr) return;
      if (auto why = session->note_handshake_refused(handshake.close_text())) fail_session(*session, *why, now);
      return;
    }
    case HandshakeStep::kPeerClosed:
      note_host_refused(connection);
      close_connection(connection, "peer closed during the handshake: " + handshake.close_text(), now);
      return;
  }
}

Session& Endpoint::session_identified(const std::string& announced, const std::vector<std::byte>& token,
                                      Clock::time_point now) {
  const auto named = sessions_.find(announced);
  if (named == sessions_.end() || !named->second->bound_to(token)) {
    // A process we dialled by another name than the one it announces (127.0.0.1 for site-a:7636)
    // dials us back: the token is the one it presented on our dial. Only it and we know that
    // token, so no key holder can join a session this way.
    for (auto& [peer, session] : sessions_) {
      if (!session->failed() && session->bound_to(token)) {
        ++statistics_.accepted_by_alias;
        return *session;
      }
    }
  }
  Session* known = &session_for(announced, now);
  if (!known->identity_matches(token) && known->peer_gone()) {
    known = &replace_gone_session(*known, now);  // a new process at a gone one's endpoint
  }
  return *known;
}

// 0.5-RTT data: DATA right behind our AUTH and IDENTIFY, sealed under keys of both nonces, only on
// a session's first connections (on a later one the peer may have restarted at that address, and
// its IDENTIFY must be checked first: docs/engine/security.md), and only once the carrier is
// known: TCP whatever the peer offers (Session::tcp_certain; a peer set to udp fails it at
// Session::confirm), or agreed from the peer's CHALLENGE (Session::may_agree_early).
bool Endpoint::may_send_early(const Connection& connection) const {
  const Session* session = connection.session;
  return connection.outgoing() && connection.state == ConnectionState::kHandshaking &&
         connection.handshake().identity_sent() && session != nullptr && !session->failed() &&
         !session->identity_bound() && (session->tcp_certain() || session->may_agree_early(connection));
}

void Endpoint::note_challenge_time(Connection& connection, Clock::time_point now) {
  if (connection.rtt_probe_sent == Clock::time_point{}) return;  // measured already
  if (connection.hello_in_syn && connection.link != nullptr && !connection.link->fast_open().accepted) {
    // The peer's host did not take the SYN's data (its TCP Fast Open off, or the cookie stale):
    // HELLO went again after the SYN-ACK, and HELLO -> CHALLENGE spans two round trips. The
    // kernel's smallest sample so far is the SYN's round trip.
    connection.rtt_probe_sent = {};
    const LinkPathInfo info = connection.link->path_info();
    if (info.valid) connection.note_handshake_sample(std::chrono::microseconds(info.min_rtt_us));
    return;
  }
  connection.note_handshake_answer(now);  // HELLO -> CHALLENGE
}

void Endpoint::establish(Connection& connection, Clock::time_point now, bool proven) {
  Session& session = *connection.session;
  if (!connection.outgoing()) --handshaking_accepted_;
  if (connection.link != nullptr) {
    // Known by now: a dialler has CHALLENGE (after the SYN-ACK), an acceptor the peer's AUTH.
    const FastOpenResult fast_open = connection.link->fast_open();
    session.counters().fast_open_syn_data += fast_open.syn_data ? 1 : 0;
    session.counters().fast_open_accepted += fast_open.accepted ? 1 : 0;
  }
  connection.state = ConnectionState::kEstablished;
  connection.awaiting_peer_proof = !proven;
  if (session.failed()) {
    close_connection(connection, "session already failed", now);
    return;
  }
  if (connection.handshake_rtt != Clock::duration{}) {
    session.path().on_handshake_rtt(std::chrono::duration_cast<std::chrono::microseconds>(connection.handshake_rtt));
  }
  const Session::Attachment attachment = session.attach(connection, local_endpoint_, now, proven);
  for (Connection* other : attachment.abandoned) {
    other->session = nullptr;  // another probe got through first: not a failure of the session
    close_connection(*other, "another probe replaced the silent stream first", now);
  }
  if (attachment.loser != nullptr) {
    Connection& loser = *attachment.loser;
    send_close(loser, CloseReason::kDuplicate, "duplicate connection", now);
    loser.session = nullptr;  // not a loss for the session
    close_connection(loser, attachment.attached ? "replaced by a newer connection" : "duplicate connection", now);
    if (!attachment.attached) return;
  }
  if (attachment.carrier_error) {
    // The peer compares the same two offers and fails its session with the mirrored reason; our
    // AUTH and IDENTIFY (an acceptor's are still in the output) must reach it for that.
    send_close(connection, CloseReason::kProtocolError, "cannot agree on a carrier", now);
    fail_session(session, "cannot agree on a carrier: " + *attachment.carrier_error, now);
    return;
  }
  pump(session, now);
}

CarrierOffer Endpoint::challenge_offer(Connection& connection, const std::string& peer) {
  // The kernel's SYN round trip, the only one measured yet (auto's judgement validates the path's
  // cache entry with it); CHALLENGE -> AUTH follows later.
  if (connection.link != nullptr) {
    const LinkPathInfo info = connection.link->path_info();
    if (info.valid && info.min_rtt_us > 0) connection.note_handshake_sample(std::chrono::microseconds(info.min_rtt_us));
  }
  // A session we have with that peer keeps its one offer; HELLO's endpoint is only a claim, so
  // none is made for it, and its IDENTIFY adopts this offer (kIdentityPresented).
  if (auto found = sessions_.find(peer); found != sessions_.end()) return offer_for(*found->second, connection);
  CarrierOffer offer{config_.carrier, datagrams_ready_, false};
  if (config_.carrier == CarrierChoice::kAuto && datagrams_ready_ && judge_path_) {
    offer.prefers_datagrams = judge_path_(connection, peer, false);
  }
  return offer;
}

void Endpoint::judge_again_with_address(const std::string& peer_endpoint) {
  const auto found = sessions_.find(peer_endpoint);
  if (found == sessions_.end() || !judge_before_dial_) return;
  Session& session = *found->second;
  if (session.offer || session.judgement_before_dial != DialJudgement::kAtHandshake) return;
  session.judgement_before_dial = judge_before_dial_(peer_endpoint);
}

CarrierOffer Endpoint::offer_for(Session& session, const Connection& connection) {
  if (!session.offer && session.judgement_before_dial) {
    // We dialled (whichever connection this is): our decision. Never datagrams once tcp was decided
    // (spill streams dialled, 0.5-RTT data sent). A known path's entry must be confirmed by the
    // handshake's round trip; one it contradicts is a new path, judged as one.
    const auto handshake_rtt = std::chrono::duration_cast<std::chrono::microseconds>(connection.handshake_rtt);
    const bool long_new_path = handshake_rtt.count() > 0 && new_path_worth_datagrams(handshake_rtt);
    bool worth = false;
    switch (*session.judgement_before_dial) {
      case DialJudgement::kTcp: break;
      case DialJudgement::kDatagrams:
        worth = (judge_path_ && judge_path_(connection, session.peer(), true)) || long_new_path;
        break;
      case DialJudgement::kAtHandshake: worth = long_new_path; break;
    }
    session.offer = dialler_offer(config_.carrier, datagrams_ready_, worth && datagrams_ready_);
  }
  if (!session.offer) {
    // An acceptor (or tcp/udp): auto states its own view, which a dialler's decision overrides.
    CarrierOffer offer{config_.carrier, datagrams_ready_, false};
    if (config_.carrier == CarrierChoice::kAuto && datagrams_ready_ && judge_path_) {
      offer.prefers_datagrams = judge_path_(connection, session.peer(), false);
    }
    session.offer = offer;
  }
  return *session.offer;
}

}  // namespace lp
