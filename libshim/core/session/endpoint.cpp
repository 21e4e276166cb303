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

// The peer's host answered, but with a refusal or a reset: the process is gone (or restarting),
// which a silent path never says. The carrier reports errors as strerror() texts, and a gateway's
// refusal with kRefusedByGateway.
bool host_refused(const std::string& error) {
  if (error.find(kRefusedByGateway) != std::string::npos) return true;
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

void Endpoint::retire_failed(const std::string& peer) {
  const auto found = sessions_.find(peer);
  if (found == sessions_.end() || !found->second->failed()) return;
  replaced_.push_back(std::move(found->second));
  sessions_.erase(found);
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
