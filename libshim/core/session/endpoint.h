// Endpoint: every session and connection of one engine. Maps peers to sessions and connections to
// their handshake or session; limits unauthenticated connections; decides what to close. Does no
// I/O: it leaves commands for the driver (links to open, connections to retune, flush and close)
// and events (received messages, failed sessions), and says when it next needs the time.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "security/authenticator.h"
#include "carrier/carrier.h"
#include "config.h"
#include "session/connection.h"
#include "message.h"
#include "session/session.h"
#include "stats/stats.h"

namespace lp {

class Endpoint {
 public:
  using Clock = std::chrono::steady_clock;
  // Randomness comes in from outside: nonces for new handshakes.
  using NonceSource = std::function<std::vector<std::byte>()>;
  // Accepted connections that have not authenticated yet: beyond this, new ones are refused. Room
  // for a dial storm of 16 fresh sessions (2 streams + 8 spill streams each), e.g. the 16 ranks of
  // one site opening to one rank at start-up; a refused one waits round trips longer for its first
  // batch (docs/engine/first-batch.md, "Spill streams").
  // Each costs a descriptor and a few hundred bytes until authenticated or LONGPIPE_CONNECT_TIMEOUT_MS.
  static constexpr std::size_t kMaxHandshakingConnections = 160;
  // Sessions of this endpoint that may dial spill streams (LONGPIPE_SPILL_STREAMS each): the first
  // ones it dials. A process that talks to many peers (an MPI rank) would otherwise hold 10
  // connections per peer for good and bring 10 handshakes at once to every acceptor it dials,
  // whose kMaxHandshakingConnections then refuses regular streams too; 4 sessions' spill streams
  // (32 connections) cover the cold first burst of a program with a few remote peers.
  static constexpr std::size_t kSpillingSessions = 4;

  Endpoint(const Config& config, std::string local_endpoint, NonceSource make_nonce);

  const std::string& local_endpoint() const { return local_endpoint_; }
  const std::map<std::string, std::unique_ptr<Session>>& sessions() const { return sessions_; }
  Session& session_for(const std::string& peer, Clock::time_point now);
  const EndpointStatistics& statistics() const { return statistics_; }

  // --- inputs from the carrier (via the driver) ---
  // A link a peer opened; null if refused (too many unauthenticated connections).
  Connection* on_accepted(std::unique_ptr<CarrierLink> link, Clock::time_point now);
  // A dial could not start.
  void on_dial_failed(Connection& connection, const std::string& why, Clock::time_point now);
  // A dialled link is up ("" error) or failed.
  void on_connected(Connection& connection, const std::string& error, Clock::time_point now);
  // Bytes arrived in the connection's reader (`status` and `error` from the read).
  void on_read(Connection& connection, IoStatus status, const std::string& error, Clock::time_point now);
  // A datagram (datagram_port.h) for `session` was malformed or did not open (counted; nothing closes),
  // or came from no known peer.
  void note_datagram_refused(Session& session, bool malformed);
  void note_datagram_refused_unknown() { ++statistics_.refused_frames; }

  // Whether the engine's UDP socket is bound (part of every handshake's carrier offer,
  // carrier_choice.h), and with LONGPIPE_CARRIER=auto the driver's judge of a connection's path
  // (true: datagrams; it knows the peer's address and the path cache), asked once per session.
  // `dialler`: the judgement is this end's decision (it may heed the peer's earlier verdict), not
  // an acceptor's own view.
  using PathJudge = std::function<bool(const Connection& connection, const std::string& peer_endpoint, bool dialler)>;
  // `judge_before_dial`: the path cache's judgement before a session's first dial, from the peer's
  // endpoint alone (no connection, no round trip yet): with auto the dialler decides, at the dial
  // on a path the cache knows, else at CHALLENGE (carrier_choice.h). None: decided at CHALLENGE.
  using PeerJudge = std::function<DialJudgement(const std::string& peer_endpoint)>;
  void set_carrier_capability(bool datagrams_ready, PathJudge judge, PeerJudge judge_before_dial = nullptr) {
    datagrams_ready_ = datagrams_ready;
    judge_path_ = std::move(judge);
    judge_before_dial_ = std::move(judge_before_dial);
  }
  // The driver has the peer's address for a dial (its name looked up off the progress thread): a
  // session left to be judged at handshake for want of that address is judged again from it, as
  // long as nothing has been offered yet, so that a path the cache knows is decided before the dial.
  void judge_again_with_address(const std::string& peer_endpoint);
  // The driver's reader of a stream's congestion window (Session::window_of), given to every session.
  void set_window_lookup(StreamScheduler::WindowLookup lookup) { window_of_ = std::move(lookup); }
  // The carrier failed the connection (e.g. a write error).
  void on_carrier_error(Connection& connection, const std::string& error, Clock::time_point now);

  // A session's turn: encode what may go, redial, detect a dead peer.
  void service(Session& session, Clock::time_point now, bool reading_paused);
  // Fails handshakes past their deadline.
  void expire_handshakes(Clock::time_point now);
  // The progress thread is back at `now` after watching no socket for `late` beyond the wait it
  // chose (session.h, note_engine_stall).
  void note_wake(Clock::time_point now, Clock::duration late);
  // The earliest time service() or expire_handshakes() has something to do.
  Clock::time_point next_deadline(Clock::time_point now) const;

  const std::map<Connection*, std::unique_ptr<Connection>>& connections() const { return connections_; }
  // Closes every connection; `abort`: abruptly (testing: as a network reset would).
  void close_all(const std::string& why, bool abort, Clock::time_point now);
  // The ACKs owed, then CLOSE(shutdown) on every established connection.
  void say_goodbye(Clock::time_point now);

  // --- outputs for the driver ---
  std::vector<Connection*> take_dials() { return std::exchange(dials_, {}); }
  std::vector<Connection*> take_retunes() { return std::exchange(retunes_, {}); }
  std::vector<Connection*> take_flushes();
  std::vector<Connection*> take_closed() { return std::exchange(closed_, {}); }
  std::vector<Message>& received() { return received_; }
  struct Failure {
    Session* session;
    std::string reason;
  };
  std::vector<Failure> take_failures() { return std::exchange(failures_, {}); }
  // Sessions begun for a new process at the endpoint of a gone one (replace_gone_session), since
  // the last call: the driver gives each a mailbox slot of its own if the old one's failed.
  std::vector<Session*> take_replacements() { return std::exchange(replacements_, {}); }
  // Frees the sessions replaced so far; after take_failures() was handled (it may name them).
  void forget_replaced() { replaced_.clear(); }
  // Sessions only the peer opened (never allowed to dial) that are over: the peer said goodbye
  // and nothing is left, or it was given up on. The driver forgets them (erase_session) so that
  // endpoints peers announce cost nothing once they are gone.
  std::vector<Session*> reclaimable() const;
  void erase_session(const std::string& peer) { sessions_.erase(peer); }
  // The application tries a failed peer again: its failed session goes (freed with the replaced
  // ones), and the next send or the peer's next dial begins a new one.
  void retire_failed(const std::string& peer);
  // Frees closed connections after the driver has closed their links.
  void erase(Connection* connection) { connections_.erase(connection); }

 private:
  void handle_frame(Connection& connection, const FrameView& frame, Clock::time_point now);
  void handle_handshake_frame(Connection& connection, const FrameView& frame, Clock::time_point now);
  // A dialler got the peer's first frame: HELLO -> CHALLENGE as a handshake round trip, unless
  // HELLO rode in a SYN whose data the peer's host did not take (then the kernel's SYN round trip).
  void note_challenge_time(Connection& connection, Clock::time_point now);
  // `proven` false: our proof is out, the peer's still to come (may_send_early).
  void establish(Connection& connection, Clock::time_point now, bool proven = true);
  bool may_send_early(const Connection& connection) const;
  // Grants `session` its spill streams while the budget lasts; past it, drops them from `dials`.
  void keep_spill_budget(Session& session, std::vector<std::size_t>& dials);
  // auto decided datagrams at CHALLENGE (DialJudgement::kAtHandshake): the spill streams dialled in
  // case it decided tcp are not needed as streams (Session::forgo_spill_for_datagrams: one goes on
  // as a key backup, the others are closed as their CHALLENGE comes), and the session's spill grant
  // goes back to the budget.
  void forgo_spill_for_datagrams(Session& session);
  // Closes what Session::retire_key_backups hands back once our datagrams' keys are proven.
  void retire_key_backups(Session& session, Clock::time_point now);
  void dial(Session& session, std::size_t stream, Clock::time_point now, Clock::duration attempt_limit);
  void pump(Session& session, Clock::time_point now);
  void mark_flush(Connection& connection);
  void send_close(Connection& connection, CloseReason reason, const std::string& text, Clock::time_point now);
  void close_connection(Connection& connection, const std::string& why, Clock::time_point now);
  void fail_session(Session& session, const std::string& reason, Clock::time_point now);
  // A newcomer presented another identity at the endpoint of `gone`, whose process is gone for
  // good (Session::peer_gone): `gone` ends (a failure if it had unacknowledged messages) and a
  // fresh session takes its place.
  Session& replace_gone_session(Session& gone, Clock::time_point now);
  // The session a dialler's IDENTIFY (`token`, `announced` in its HELLO) belongs to: the one of
  // that name, replaced if its process is gone, or the one that knows the process by another name.
  Session& session_identified(const std::string& announced, const std::vector<std::byte>& token,
                              Clock::time_point now);
  void note_malformed(Connection& connection, const std::string& what, Clock::time_point now);
  void note_host_refused(Connection& connection);
  void note_rejected(Connection& connection);
  void note_refused_frame(Connection& connection, Clock::time_point now);
  Protection wanted_protection() const {
    return config_.encryption ? Protection::kEncrypt : Protection::kIntegrityOnly;
  }
  Connection& add(std::unique_ptr<Connection> connection);

  const Config& config_;
  const ArqConfig arq_config_;
  const Authenticator authenticator_;
  const std::string local_endpoint_;
  NonceSource make_nonce_;
  bool datagrams_ready_ = false;
  PathJudge judge_path_;
  PeerJudge judge_before_dial_;
  StreamScheduler::WindowLookup window_of_;
  // The session's offer, decided when its first IDENTIFY goes out and kept for every later
  // connection (both ends must see one offer from each other on all of them).
  CarrierOffer offer_for(Session& session, const Connection& connection);
  // An acceptor's offer in CHALLENGE, when HELLO names the `peer`: its session's, else auto's own
  // view of the path (the dialler decides: carrier_choice.h).
  CarrierOffer challenge_offer(Connection& connection, const std::string& peer);
  std::map<std::string, std::unique_ptr<Session>> sessions_;
  std::map<Connection*, std::unique_ptr<Connection>> connections_;
  std::size_t handshaking_accepted_ = 0;
  std::size_t spill_sessions_ = 0;  // sessions granted spill streams (kSpillingSessions)
  EndpointStatistics statistics_;
  std::vector<Connection*> dials_, retunes_, flushes_, closed_;
  std::vector<Message> received_;
  std::vector<Failure> failures_;
  std::vector<Session*> replacements_;
  std::vector<std::unique_ptr<Session>> replaced_;  // kept until forget_replaced()
};

// The ARQ settings of a session, from the configuration (reliable-carrier mode over TCP, datagram
// mode over the datagram carrier).
ArqConfig arq_config_from(const Config& config);

}  // namespace lp
