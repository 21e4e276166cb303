#include "session/endpoint.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "carrier/datagram/datagram_channel.h"

namespace lp {

ArqConfig arq_config_from(const Config& config) {
  ArqConfig arq;
  arq.mode = ArqMode::kReliableCarrier;
  arq.send_window_messages = static_cast<std::uint32_t>(config.window_messages);
  arq.send_window_bytes = config.window_bytes;
  arq.receive_window_messages = static_cast<std::uint32_t>(config.window_messages);
  arq.receive_window_bytes = config.window_bytes;
  arq.initial_rto = config.rto_initial;
  arq.min_rto = config.rto_min;
  arq.max_rto = config.rto_max;
  arq.backoff_factor = config.rto_backoff;
  arq.ack_delay = config.ack_delay;
  arq.ack_every_messages = static_cast<std::uint32_t>(config.ack_every);
  if (config.datagram_carrier()) configure_for_datagrams(arq, config);
  return arq;
}

namespace {

// Whether the peer, agreeing with `challenged` (the offer our CHALLENGE carried), reaches what our
// session reaches with its own `offer`. Offers of one session may differ in auto's view of the path
// (judged per connection), which the agreement with a deciding dialler does not use.
bool same_agreement(const CarrierOffer& offer, const CarrierOffer& challenged, const CarrierOffer& theirs) {
  const CarrierAgreement ours = agree_carrier(offer, theirs), peers = agree_carrier(challenged, theirs);
  return ours.datagrams == peers.datagrams && ours.error.has_value() == peers.error.has_value();
}

// The peer's host answered, but with a refusal or a reset: the process is gone (or restarting),
// which a silent path never says. The carrier reports errors as strerror() texts.
bool host_refused(const std::string& error) {
  for (int code : {ECONNREFUSED, ECONNRESET, EPIPE}) {
    if (error.find(std::strerror(code)) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

Endpoint::Endpoint(const Config& config, std::string local_endpoint, NonceSource make_nonce)
    : config_(config),
      arq_config_(arq_config_from(config)),
      authenticator_(config.key),
      local_endpoint_(std::move(local_endpoint)),
      make_nonce_(std::move(make_nonce)) {}

Session& Endpoint::session_for(const std::string& peer, Clock::time_point now) {
  auto& slot = sessions_[peer];
  if (!slot) {
    slot = std::make_unique<Session>(peer, arq_config_, config_, now);
    slot->window_of = window_of_;
  }
  return *slot;
}

Connection& Endpoint::add(std::unique_ptr<Connection> connection) {
  Connection* raw = connection.get();
  connections_[raw] = std::move(connection);
  return *raw;
}

Connection* Endpoint::on_accepted(std::unique_ptr<CarrierLink> link, Clock::time_point now) {
  if (handshaking_accepted_ >= kMaxHandshakingConnections) {
    ++statistics_.refused_busy;
    return nullptr;  // closed: too many unauthenticated connections at once
  }
  Connection& connection = add(std::make_unique<Connection>(
      Handshake::acceptor(authenticator_, make_nonce_(), wanted_protection(), now + config_.connect_timeout), now));
  connection.link = std::move(link);
  connection.state = ConnectionState::kHandshaking;
  // CHALLENGE carries our carrier offer, decided when HELLO names the peer.
  connection.handshake().decide_offer_with(
      [this, &connection](const std::string& peer) { return challenge_offer(connection, peer).encode(); });
  ++statistics_.accepted;
  ++handshaking_accepted_;
  return &connection;
}

void Endpoint::dial(Session& session, std::size_t stream, Clock::time_point now, Clock::duration attempt_limit) {
  Connection& connection = add(std::make_unique<Connection>(
      Handshake::dialler(authenticator_, local_endpoint_, stream, make_nonce_(), wanted_protection(),
                         authenticator_.identity_token(session.peer()), now + attempt_limit),
      now));
  connection.state = ConnectionState::kConnecting;
  connection.rtt_probe_sent = now;  // the SYN: connected one round trip later
  connection.peer_endpoint = session.peer();
  connection.session = &session;
  connection.stream = stream;
  session.streams().add_attempt(stream, &connection);
  dials_.push_back(&connection);
}

void Endpoint::on_dial_failed(Connection& connection, const std::string& why, Clock::time_point now) {
  close_connection(connection, why, now);
}

void Endpoint::on_connected(Connection& connection, const std::string& error, Clock::time_point now) {
  if (connection.state != ConnectionState::kConnecting) return;
  if (!error.empty()) {
    close_connection(connection, error, now);
    return;
  }
  // TCP Fast Open with a cached cookie: connect() returned at once and no SYN left yet; its time
  // to now is no round trip. HELLO leaves in the SYN.
  connection.hello_in_syn = connection.link != nullptr && connection.link->first_write_in_syn();
  if (!connection.hello_in_syn) connection.note_handshake_answer(now);  // SYN -> SYN-ACK
  connection.rtt_probe_sent = now;  // HELLO: CHALLENGE comes one round trip later
  connection.handshake().start(connection.output());
  connection.state = ConnectionState::kHandshaking;
  mark_flush(connection);
}

void Endpoint::on_read(Connection& connection, IoStatus status, const std::string& error, Clock::time_point now) {
  // What the connection's frames gave its session is delivered even if a later frame of the same
  // read closes the connection (no other read might come for that session).
  Session* receiving = nullptr;
  try {
    while (connection.state != ConnectionState::kClosed) {
      auto frame = connection.reader().next();
      if (!frame) break;
      handle_frame(connection, *frame, now);
      if (connection.session != nullptr && connection.state == ConnectionState::kEstablished) {
        receiving = connection.session;
      }
    }
  } catch (const std::exception& e) {  // MalformedFrame, or a bad endpoint in HELLO
    note_malformed(connection, e.what(), now);
  }
  if (receiving != nullptr) receiving->take_received(received_);
  if (connection.state == ConnectionState::kClosed) return;
  if (status == IoStatus::kEndOfStream) {
    note_host_refused(connection);  // its host closed it
    if (connection.reader().has_partial_frame()) {
      note_malformed(connection, "stream ended inside a frame (truncated frame)", now);
    } else {
      close_connection(connection, "connection closed by peer", now);
    }
    return;
  }
  if (status == IoStatus::kError) {
    close_connection(connection, error, now);
    return;
  }
  Session* session = connection.session;
  // The ACK for what was read goes out at once.
  if (session != nullptr && session->streams().holds(connection)) pump(*session, now);
}

void Endpoint::on_carrier_error(Connection& connection, const std::string& error, Clock::time_point now) {
  close_connection(connection, error, now);
}

void Endpoint::handle_frame(Connection& connection, const FrameView& frame, Clock::time_point now) {
  if (!connection.open(frame)) {
    note_refused_frame(connection, now);
    return;
  }
  connection.last_received = now;  // an authentic frame: the path to this peer is alive
  if (!connection.authenticated()) {
    handle_handshake_frame(connection, frame, now);
    connection.expect_tags_if_sealed();
    return;
  }
  Session* session = connection.session;
  if (session == nullptr) return;  // a connection being replaced: its remaining frames are moot
  session->heard_from_peer(now);    // only authenticated frames are signs of the peer's life
  if (auto why = session->on_frame(connection, frame, now)) close_connection(connection, *why, now);
}

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
    // Nothing unauthenticated ends a session: a failed proof or a CLOSE during the handshake ends
    // this attempt only (the peer may be an impostor at its address); the session redials and
    // fails, if at all, after LONGPIPE_DEAD_PEER_MS with this as its last error.
    case HandshakeStep::kRejected:
      note_rejected(connection);
      if (connection.outgoing()) note_host_refused(connection);  // its host answered: not a silent path
      connection.flush_before_close = true;  // the CLOSE that says why
      close_connection(connection, "the peer failed to prove the key (is LONGPIPE_KEY the same?)", now);
      return;
    case HandshakeStep::kRefusedByPeer:
      note_rejected(connection);
      note_host_refused(connection);
      close_connection(connection, "refused by the peer: authentication failed (is LONGPIPE_KEY the same?)", now);
      return;
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

// 0.5-RTT data: DATA right behind our AUTH and IDENTIFY, sealed under keys of both nonces, but only
// on a session's first connections: on a later one the peer may have restarted at that address, and
// its IDENTIFY must be checked first (libshim/README.md, "Security"). Only on a session whose carrier
// is known now: TCP whatever the peer offers (tcp, or auto that chose tcp: Session::tcp_certain; a
// peer set to udp fails it at Session::confirm), or agreed from the offer in the peer's CHALLENGE
// (Session::may_agree_early): on datagrams the first DATA datagrams leave with the IDENTIFY.
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

void Endpoint::pump(Session& session, Clock::time_point now) {
  session.pump(now);
  for (Connection* stream : session.streams().streams()) {
    if (stream != nullptr && stream->pending_output() > 0) mark_flush(*stream);
  }
}

void Endpoint::service(Session& session, Clock::time_point now, bool reading_paused) {
  if (session.failed()) return;
  pump(session, now);
  if (config_.carrier == CarrierChoice::kAuto && !session.offer && !session.judgement_before_dial &&
      session.may_dial()) {
    // auto: the dialler decides before its first dial if its cache knows the path, so that on tcp
    // its first dial already brings the spill streams and its IDENTIFY the 0.5-RTT data; else at
    // CHALLENGE (carrier_choice.h).
    session.judgement_before_dial = !datagrams_ready_    ? DialJudgement::kTcp
                                    : judge_before_dial_ ? judge_before_dial_(session.peer())
                                                         : DialJudgement::kAtHandshake;
  }
  retire_key_backups(session, now);  // a reseal (in pump) may have proven our datagrams' keys
  Session::TimeoutActions actions = session.handle_timeout(now, reading_paused);
  keep_spill_budget(session, actions.dial);
  for (std::size_t stream : actions.dial) dial(session, stream, now, actions.attempt_limit);
  for (std::size_t stream : actions.probe) dial(session, stream, now, actions.probe_limit);
  if (actions.failure) fail_session(session, *actions.failure, now);
}

void Endpoint::forgo_spill_for_datagrams(Session& session) {
  if (session.spill_granted() && !session.spill_forgone()) --spill_sessions_;  // never used as streams
  session.forgo_spill_for_datagrams();
}

void Endpoint::retire_key_backups(Session& session, Clock::time_point now) {
  for (Connection* retired : session.retire_key_backups()) {
    if (retired->state == ConnectionState::kEstablished) {
      send_close(*retired, CloseReason::kDuplicate, "key backup not needed: the datagrams' keys are proven", now);
    }
    retired->session = nullptr;  // not a loss for the session
    close_connection(*retired, "not needed: the datagrams' keys are proven", now);
  }
}

void Endpoint::keep_spill_budget(Session& session, std::vector<std::size_t>& dials) {
  const auto is_spill = [](std::size_t slot) { return StreamScheduler::is_spill_slot(slot); };
  if (session.spill_granted() || std::none_of(dials.begin(), dials.end(), is_spill)) return;
  if (spill_sessions_ < kSpillingSessions) {
    ++spill_sessions_;
    session.grant_spill();
    return;
  }
  session.forgo_spill_streams();
  std::erase_if(dials, is_spill);
}

void Endpoint::note_wake(Clock::time_point now, Clock::duration late) {
  if (late <= Clock::duration::zero()) return;
  const auto late_ms = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(late).count());
  statistics_.longest_late_wake_ms = std::max(statistics_.longest_late_wake_ms, late_ms);
  bool restarted = false;
  for (auto& [peer, session] : sessions_) restarted |= session->note_engine_stall(now, late);
  if (restarted) ++statistics_.engine_stalls;
}

void Endpoint::expire_handshakes(Clock::time_point now) {
  for (auto& [raw, connection] : connections_) {
    if (!connection->authenticated() && connection->state != ConnectionState::kClosed &&
        now >= connection->handshake().deadline()) {
      close_connection(*connection, "connect or authentication timed out", now);
    }
  }
}

Endpoint::Clock::time_point Endpoint::next_deadline(Clock::time_point now) const {
  Clock::time_point wake = Clock::time_point::max();
  for (const auto& [peer, session] : sessions_) wake = std::min(wake, session->next_deadline(now));
  for (const auto& [raw, connection] : connections_) {
    if (!connection->authenticated() && connection->state != ConnectionState::kClosed) {
      wake = std::min(wake, connection->handshake().deadline());
    }
  }
  return wake;
}

void Endpoint::mark_flush(Connection& connection) {
  if (connection.queued_for_flush) return;
  connection.queued_for_flush = true;
  flushes_.push_back(&connection);
}

std::vector<Connection*> Endpoint::take_flushes() {
  std::vector<Connection*> flushes = std::exchange(flushes_, {});
  for (Connection* connection : flushes) connection->queued_for_flush = false;
  return flushes;
}

void Endpoint::send_close(Connection& connection, CloseReason reason, const std::string& text, Clock::time_point now) {
  if (connection.state == ConnectionState::kClosed) return;
  const std::size_t start = connection.output().size();
  encode_close(connection.output(), reason, text);
  connection.seal_from(start);  // sealed once our sealed frames have begun
  connection.last_sent = now;
  connection.flush_before_close = true;  // best effort: the connection is about to go
}

void Endpoint::close_connection(Connection& connection, const std::string& why, Clock::time_point now) {
  if (connection.state == ConnectionState::kClosed) return;
  if (!connection.outgoing() && connection.state != ConnectionState::kEstablished) --handshaking_accepted_;
  const bool was_attempt = connection.state != ConnectionState::kEstablished;
  connection.state = ConnectionState::kClosed;
  closed_.push_back(&connection);
  if (Session* session = connection.session) {
    if (host_refused(why)) session->note_refused();
    session->detach(connection, was_attempt, why, now);
  }
  connection.session = nullptr;
}

void Endpoint::note_malformed(Connection& connection, const std::string& what, Clock::time_point now) {
  // Counted engine-wide too, as refused frames are: the session of a peer that went away is
  // forgotten with its counters, the engine's total stays.
  if (connection.session != nullptr) ++connection.session->counters().malformed_frames;
  ++statistics_.malformed;
  send_close(connection, CloseReason::kProtocolError, what, now);
  close_connection(connection, "malformed frame: " + what, now);
}

// A sealed frame that does not open: altered, replayed, reordered, or sealed with other keys. The
// byte stream cannot be trusted from here on; the connection goes (the session redials).
void Endpoint::note_refused_frame(Connection& connection, Clock::time_point now) {
  if (connection.session != nullptr) ++connection.session->counters().refused_frames;
  ++statistics_.refused_frames;
  close_connection(connection, "a frame failed its integrity check (altered or replayed)", now);
}

// The peer's host answered and refused (a CLOSE, EOF, RST): LONGPIPE_DEAD_PEER_MS applies, not the
// patience for a silent path (session.h).
void Endpoint::note_host_refused(Connection& connection) {
  if (connection.session != nullptr) connection.session->note_refused();
}

void Endpoint::note_datagram_refused(Session& session, bool malformed) {
  if (malformed) {
    ++session.counters().malformed_frames;
    ++statistics_.malformed;
  } else {
    ++session.counters().refused_frames;
    ++statistics_.refused_frames;
  }
}

void Endpoint::note_rejected(Connection& connection) {
  if (connection.session != nullptr) ++connection.session->counters().rejected_connections;
  ++statistics_.rejected;
}

void Endpoint::fail_session(Session& session, const std::string& reason, Clock::time_point now) {
  if (session.failed()) return;
  for (Connection* connection : session.fail()) close_connection(*connection, reason, now);
  failures_.push_back({&session, reason});
}

Session& Endpoint::replace_gone_session(Session& gone, Clock::time_point now) {
  const std::string peer = gone.peer();
  if (!gone.failed()) {
    const std::string why = "the process at " + peer + " said goodbye and a new process holds its endpoint now";
    if (gone.arq().all_acknowledged()) {
      for (Connection* connection : gone.fail()) close_connection(*connection, why, now);  // nothing lost
    } else {
      fail_session(gone, why + "; what it had not acknowledged cannot be delivered", now);
    }
  }
  auto found = sessions_.find(peer);
  replaced_.push_back(std::move(found->second));
  sessions_.erase(found);
  ++statistics_.sessions_replaced;
  Session& fresh = session_for(peer, now);
  replacements_.push_back(&fresh);
  return fresh;
}

std::vector<Session*> Endpoint::reclaimable() const {
  std::vector<Session*> over;
  for (const auto& [peer, session] : sessions_) {
    const bool quiet = session->streams().established() == 0 && session->arq().all_acknowledged();
    if (!session->may_dial() && (session->failed() || (session->peer_said_goodbye() && quiet))) {
      over.push_back(session.get());
    }
  }
  return over;
}

void Endpoint::close_all(const std::string& why, bool abort, Clock::time_point now) {
  for (auto& [raw, connection] : connections_) {
    if (connection->state == ConnectionState::kClosed) continue;
    connection->abort_on_close = abort;
    close_connection(*connection, why, now);
  }
}

void Endpoint::say_goodbye(Clock::time_point now) {
  for (auto& [peer, session] : sessions_) session->acknowledge_owed(now);
  for (auto& [raw, connection] : connections_) {
    if (connection->state == ConnectionState::kEstablished) {
      send_close(*connection, CloseReason::kShutdown, "engine shutting down", now);
      mark_flush(*connection);
    }
  }
}

}  // namespace lp
