// Session: one reliable, ordered, bidirectional message channel to one peer endpoint. Outlives its
// connections: the ARQ inside keeps the sequence space and the unacknowledged messages, so a
// reconnect continues where the broken connection stopped. Pure: it decides (what to encode on
// which stream, when to redial, when the peer is dead) and the endpoint and driver act.
//
//   inputs:  attach()/detach() of connections, on_frame(), handle_timeout(now)
//   outputs: frames appended to its streams' output (pump), take_received(), dials wanted and a
//            failure (TimeoutActions), next_deadline()
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "arq/arq.h"
#include "carrier/carrier_choice.h"
#include "config.h"
#include "carrier/datagram/datagram_channel.h"
#include "message.h"
#include "path/path_estimator.h"
#include "stats/stats.h"
#include "session/stream_scheduler.h"
#include "wire/wire_frame.h"

namespace lp {

class Connection;
struct MailboxSlot;

class Session {
 public:
  using Clock = std::chrono::steady_clock;

  Session(std::string peer, const ArqConfig& arq_config, const Config& config, Clock::time_point now);

  const std::string& peer() const { return peer_; }
  bool failed() const { return failed_; }
  bool peer_said_goodbye() const { return peer_said_goodbye_; }
  // Whether the process this session was bound to is gone for good: the session failed, or the
  // peer said goodbye (its engine shut down; that identity never returns) and no stream is left.
  bool peer_gone() const { return failed_ || (peer_left_ && streams_.established() == 0); }
  const std::string& last_error() const { return counters_.last_connection_error; }
  StreamScheduler& streams() { return streams_; }
  const StreamScheduler& streams() const { return streams_; }
  Arq& arq() { return arq_; }
  const Arq& arq() const { return arq_; }
  SessionStatistics& counters() { return counters_; }
  // What the session measured about its path (round trip, rate) and the buffers that follow.
  PathEstimator& path() { return path_; }
  const PathEstimator& path() const { return path_; }
  // Whether both ends' carrier offers were compared (at the first connection). With
  // LONGPIPE_CARRIER=auto the session takes no message into its ARQ before: it does not know yet
  // whether they travel whole (TCP) or in datagram units.
  bool carrier_agreed() const { return carrier_agreed_; }
  // What we offer the peer in each handshake (with auto, our judgement of the path is asked once,
  // by the endpoint, and kept: both ends must see the same offer on every connection).
  std::optional<CarrierOffer> offer;
  // LONGPIPE_CARRIER=auto, a session this end began to dial: its path cache's judgement before the
  // first dial (PathKeeper::judge_before_dial); the offer follows it (Endpoint::offer_for).
  std::optional<DialJudgement> judgement_before_dial;
  // Whether the session is TCP whatever the peer offers (LONGPIPE_CARRIER=tcp, or an offer that
  // binds it: carrier_choice.h): then messages, 0.5-RTT data and spill streams need not wait for
  // the ends to compare offers.
  bool tcp_certain() const;
  // Whether `connection` (ours, CHALLENGE answered) lets the ends' offers be compared now, before the
  // peer's proof and IDENTIFY: CHALLENGE carried the peer's offer, ours is decided, and they agree
  // without an error (an error waits for the peer's IDENTIFY, so that both ends report it alike),
  // or were agreed on the same offer already. The session then sends its first DATA, over TCP or
  // as datagrams, with its IDENTIFY (0.5-RTT data; docs/engine/security.md).
  bool may_agree_early(const Connection& connection) const;
  // auto decided datagrams at CHALLENGE on a path its cache did not know: the spill streams dialled
  // with the first dials (in case of tcp) are not needed as streams. The first kKeyBackups of them
  // whose CHALLENGE comes go on as key backups (keep_as_key_backup), the others close as their
  // CHALLENGE comes or once our datagrams' keys are proven (retire_key_backups). A spill stream
  // whose CHALLENGE came first (`deciding`) stays: the first dials lost a SYN or their CHALLENGE,
  // and it carries the datagrams' keys and the control frames as well as they would.
  void forgo_spill_for_datagrams();
  // Why key backups: the peer opens our datagrams only under keys of a connection it proved (our
  // AUTH and IDENTIFY read). With two first dials, a lost AUTH on the sealing one and any lost
  // segment of the other's handshake leave the first flight unopened until TCP's timers re-send
  // them (a second or more on a long path, then the whole flight again). A backup proven by the
  // peer is a reseal target as a first dial is. One is enough against random loss, and keeps a
  // session's connections within the peer's DatagramChannel::kMaxKeySets (two first dials, one
  // backup, one the peer may dial).
  static constexpr std::size_t kKeyBackups = 1;
  // `spill`, a spill stream of ours, had its CHALLENGE after the session chose datagrams: whether
  // it goes on as a key backup. False: it is removed from the session here, to be closed.
  bool keep_as_key_backup(Connection& spill);
  // Once the peer proved the connection our datagrams are sealed under, the key backups and the
  // spill streams still in their handshake have nothing left to do: removed and returned, to be
  // closed with CLOSE(duplicate) (the peer takes that for no loss). Empty before.
  std::vector<Connection*> retire_key_backups();
  // The peer's auto verdict on the path, from its offer (PathSnapshot::peer_verdict): 1 datagrams,
  // 0 tcp, -1 not heard (not agreed yet, or the peer was set to tcp or udp).
  int peer_verdict() const { return peer_verdict_; }
  // The datagram path of a session on the datagram carrier (LONGPIPE_CARRIER=udp), else null: then
  // DATA and ACK travel as datagrams and the TCP connections (stream 0, and a first dial's second
  // stream, spare or spill stream that came up) carry the handshakes and control frames.
  DatagramChannel* datagram() { return datagram_.get(); }
  const DatagramChannel* datagram() const { return datagram_.get(); }
  // The connection whose keys seal our datagrams (null before one, or once it is gone): the first
  // of the session's connections to attach, whichever stream (a first dial whose SYN or handshake
  // segment was lost does not hold up the datagrams), replaced when it goes, or when another of our
  // first dials is proven by the peer and it is not within kResealWaitShare of a round trip
  // (its AUTH or the peer's answer was lost: the peer cannot open what we seal under its keys).
  const Connection* datagram_keys_connection() const { return sealing_; }
  static constexpr int kResealWaitShare = 8;
  static constexpr std::chrono::milliseconds kMinResealWait{10};

  // An authenticated connection joins. If the tie-break rejects it or an older one, that loser is
  // returned (the caller closes it with CLOSE(duplicate)); `attached` says whether this one stays.
  // When one of our probes of a silent path wins its slot, our other attempts for that slot that
  // the peer cannot hold yet are `abandoned`: no longer the session's (the caller closes them;
  // they are not failures).
  // The first connection to attach agrees the carrier from both ends' offers (carrier_choice.h);
  // `carrier_error` says why the ends cannot agree (the caller fails the session with it).
  struct Attachment {
    Connection* loser = nullptr;
    bool attached = true;
    std::vector<Connection*> abandoned;
    std::optional<std::string> carrier_error;
  };
  // `proven` false: our AUTH is out but the peer's proof is still to come (0.5-RTT data on a
  // session's first connections): the stream carries DATA, but nothing of the peer's counts yet
  // (no sign of life, no larger frames); confirm() follows once the peer proved itself.
  Attachment attach(Connection& connection, const std::string& local_endpoint, Clock::time_point now,
                    bool proven = true);
  // Returns why the ends cannot agree on a carrier, if they cannot (compared here after an early
  // attach); the caller then fails the session.
  std::optional<std::string> confirm(Connection& connection, Clock::time_point now);
  // A connection of this session closed (`was_attempt`: before it was established).
  void detach(Connection& connection, bool was_attempt, const std::string& why, Clock::time_point now);
  // A dial could not even start (e.g. unresolvable).
  void note_dial_error(const std::string& why);

  // One frame on an established stream. Returns why the connection should close, if it should.
  // Throws MalformedFrame.
  std::optional<std::string> on_frame(Connection& connection, const FrameView& frame, Clock::time_point now);
  void heard_from_peer(Clock::time_point now) {
    // The first sign of life after a silence: replace the suspect streams now, not after the
    // next probe interval (TCP would resend their bytes only when its backed-off timer fires).
    if (now - last_heard_ > silence_threshold()) next_probe_ = now;
    last_heard_ = now;
    refused_since_heard_ = false;
    handshake_refusals_ = 0;
  }
  // The peer's host answered but refused or reset a connection: its process is gone (a silent
  // path answers nothing). Only then does LONGPIPE_DEAD_PEER_MS of silence fail the session.
  void note_refused() { refused_since_heard_ = true; }
  // The peer refused our proof of the key (its CLOSE "authentication failed" during our handshake,
  // `peer_text` its text). Returns why the session fails now: kHandshakeRefusalsToFail refusals
  // with no authenticated frame between, on a session that never authenticated its peer. An
  // honest peer refuses only a job key other than its own, and retrying cannot change that. The
  // refusal is unauthenticated (no common key signs it), so a forger on the path gains what forged
  // resets give it (the session fails, as after LONGPIPE_DEAD_PEER_MS of refusals), only sooner
  // and only before the peer ever proved itself: a bound session ignores refusals here.
  std::optional<std::string> note_handshake_refused(const std::string& peer_text);
  static constexpr int kHandshakeRefusalsToFail = 3;

  // Binds the session to the peer's identity token (the first authenticated connection's) or
  // checks a later one against it (constant time). False: another process claims this session.
  bool identity_matches(const std::vector<std::byte>& token);
  // Whether the session is bound to `token` (constant time); binds nothing.
  bool bound_to(const std::vector<std::byte>& token) const;
  // Whether a peer identity is bound (some connection of this session was ever established).
  bool identity_bound() const { return !peer_token_.empty(); }
  // The application named this peer (send()): the session may dial it. A session only the peer
  // opened never dials: the endpoint it announced is a claim, and the peer redials its own.
  void allow_dialling() { may_dial_ = true; }
  bool may_dial() const { return may_dial_; }
  // The endpoint's budget of spill streams (Endpoint::kSpillingSessions): a session is granted
  // its spill streams once, or forgoes them for good (it then dials and waits for none).
  bool spill_granted() const { return spill_granted_; }
  void grant_spill() { spill_granted_ = true; }
  void forgo_spill_streams() { spill_forgone_ = true; }
  bool spill_forgone() const { return spill_forgone_; }

  // Messages the ARQ has in order, appended to `batch`.
  void take_received(std::vector<Message>& batch);
  // Encodes what may go now: DATA striped over the streams, the ACK, keep-alives.
  void pump(Clock::time_point now);
  // Encodes the ACK owed now, delayed or not: before our goodbye, so that the peer does not keep
  // our last messages' answers unacknowledged (and its session with us) after we are gone.
  void acknowledge_owed(Clock::time_point now);

  struct TimeoutActions {
    std::vector<std::size_t> dial;        // our own stream slots to dial now
    std::vector<std::size_t> probe;       // established but silent slots: dial a replacement now
    Clock::duration attempt_limit{};      // how long the dials may take (connect + handshake)
    Clock::duration probe_limit{};        // how long each probe may take (probe_attempt_limit())
    std::optional<std::string> failure;   // give up on the peer
  };
  // `reading_paused`: our own back-pressure, not the peer's silence.
  TimeoutActions handle_timeout(Clock::time_point now, bool reading_paused);
  // The engine itself did not run for `late` before `now` (it watched no socket that long beyond
  // the wait it chose: the host or process was frozen or starved). Nothing could be heard
  // meanwhile, and a peer on a frozen host sent nothing either: beyond stall_tolerance() the
  // silence clock starts again at `now`, as while reading is paused. Returns whether it did.
  bool note_engine_stall(Clock::time_point now, Clock::duration late);
  // The lateness a wake-up may have before it counts as a stall: a share of the margin the silence
  // threshold leaves above the keep-alive interval (probe_interval()).
  Clock::duration stall_tolerance() const;
  // The earliest time handle_timeout() or pump() has something to do.
  Clock::time_point next_deadline(Clock::time_point now) const;

  // A few round trips of the path: a silence is declared after LONGPIPE_KEEPALIVE_MS + this, and
  // redials back off no further.
  Clock::duration probe_interval() const;
  // While a stream is suspect, a new probe for it starts this often (a round trip or two), and
  // each may take probe_attempt_limit(): up to kMaxProbeAttemptsPerSlot overlap, so that one whose
  // SYN or handshake packet was lost (or sent into the outage) does not hold up the next.
  Clock::duration probe_start_interval() const;
  Clock::duration probe_attempt_limit() const;
  // A bound on the probes of one slot in progress at once (= probe_attempt_limit() /
  // probe_start_interval()): a silent path costs a few half-open connections per stream, no more.
  static constexpr std::size_t kMaxProbeAttemptsPerSlot = 3;
  // Nothing heard for this long means the path (or the peer) is silent: keep-alives come every
  // LONGPIPE_KEEPALIVE_MS.
  Clock::duration silence_threshold() const { return config_.keepalive_interval + probe_interval(); }
  // One of our own streams was established before the path fell silent (Connection::suspect).
  bool has_suspect_stream() const;

  // Given up on: no more dials or frames. Returns the connections to close.
  std::vector<Connection*> fail();

  // The mailbox's side of this session (the driver's handle; protocol code does not touch it).
  std::shared_ptr<MailboxSlot> mailbox;
  // Reads a stream's congestion window now (the driver's TCP_INFO; a fake in tests): asked by
  // pump() only while spill streams are up, about the stream a frame would take and, when that
  // one's window is full, about the spill streams. Unset: nothing spills.
  StreamScheduler::WindowLookup window_of;
  Clock::time_point tcp_info_refreshed{};
  // The warm start (path_cache.h), the driver's business: looked up once the handshake measured
  // a round trip; the cache key (the peer's address) of the first stream.
  bool warm_start_looked_up = false;
  std::string path_cache_key;

 private:
  // The path's round-trip time, and `count` of them within the probe bounds (kMinProbeInterval,
  // LONGPIPE_CONNECT_RETRY_MAX_MS).
  Clock::duration path_rtt() const;
  Clock::duration round_trips(int count) const;
  void deliver(Message message, std::vector<Message>& batch);
  // A new session's first DATA waits until every stream dialled with the first is up (or
  // gather_until_): striped over all of them, a cold burst gets each one's initial window instead
  // of all landing on the first stream up; with the split by size, large messages wait for their
  // stream instead of starting on the small-message stream (ahead of the small ones after them).
  bool cold_gathering(Clock::time_point now) const;
  // Appends an ACK frame to `stream`'s output, sealed (pump, acknowledge_owed).
  void send_ack(Connection& stream, const ArqAck& ack, Clock::time_point now);
  // The spill streams to dial with the session's first ones (LONGPIPE_SPILL_STREAMS) on a session
  // that is or may become tcp (tcp_certain(), or auto deciding at CHALLENGE), again with each redial
  // until a connection was established (the peer may not have been listening yet); never after: a
  // reconnection carries on without them.
  std::vector<std::size_t> spill_slots_to_dial() const;
  // LONGPIPE_CARRIER=udp: a second control connection (slot 1) dialled with the first until one was
  // established, as auto's second stream is: a lost segment of one handshake then costs nothing
  // (datagram_keys_connection). It stays up beside stream 0 and is not redialled.
  std::optional<std::size_t> spare_control_slot_to_dial() const;
  // The bandwidth-delay product a window is judged against (PathEstimator::judged_bdp_bytes).
  double judged_bdp() const;
  // What we offer: the decided offer, or before one is made our setting as it stands.
  CarrierOffer our_offer() const;
  // Compares the offers of `connection`'s handshake; on datagrams, turns an auto session into a
  // datagram session (its ARQ is still empty). Returns why the ends cannot agree, if they cannot.
  std::optional<std::string> agree_carrier_with(const Connection& connection);
  void send_keepalives(Clock::time_point now);
  // A connection of a datagram session attached before the peer proved itself, or proven
  // (confirm): its keys open datagrams, and seal them if nothing seals; a proven one may be the
  // replacement for an unproven sealer.
  void key_datagrams(Connection& connection, Clock::time_point now);
  // The reseal decided by key_datagrams, once its wait is over (pump).
  void reseal_if_due(Clock::time_point now);
  // `connection` leaves the session (closed, or replaced): no pointer to it is kept.
  void forget(const Connection& connection);
  // A stream left while others stay: on TCP its messages are somewhere between here and the peer,
  // so every unacknowledged one goes again on the others. Datagrams do not travel on the streams:
  // nothing is re-sent, and if it sealed them, another proven connection's keys do from now on
  // (the peer holds them: it proved that connection).
  void stream_left(Clock::time_point now);

  std::string peer_;
  const Config& config_;
  Arq arq_;
  StreamScheduler streams_;
  std::unique_ptr<DatagramChannel> datagram_;
  Clock::time_point last_heard_;        // any frame from the peer (or the start of trying)
  Clock::time_point next_dial_;
  Clock::time_point next_probe_{};
  bool refused_since_heard_ = false;    // note_refused() since the last frame from the peer
  int handshake_refusals_ = 0;          // note_handshake_refused() since the last frame from the peer
  Clock::duration backoff_;
  bool peer_said_goodbye_ = false;      // CLOSE(shutdown) received: no redial until there is data
  bool peer_left_ = false;              // CLOSE(shutdown) ever received (a redial does not undo it)
  bool failed_ = false;
  bool ever_established_ = false;
  bool spill_granted_ = false;
  bool spill_forgone_ = false;
  std::size_t key_backups_open_ = 0;    // backups keep_as_key_backup may still take
  bool key_backups_live_ = false;       // spill streams kept after choosing datagrams, not retired
  Clock::time_point gather_until_{};    // cold_gathering(): set at the first attach
  Connection* sealing_ = nullptr;       // datagram_keys_connection()
  Connection* reseal_to_ = nullptr;     // proven while sealing_ was not: seals at reseal_at_ if
  Clock::time_point reseal_at_{};       // sealing_ is still unproven then
  bool may_dial_ = false;
  bool carrier_agreed_ = false;
  int peer_verdict_ = -1;
  std::uint8_t agreed_peer_offer_ = 0;  // the peer's offer the carrier was agreed on
  std::vector<std::byte> peer_token_;   // the peer's identity token, once bound
  SessionStatistics counters_;
  PathEstimator path_;
  ArqConfig arq_config_;  // the endpoint's, for an auto session that turns to datagrams
};

}  // namespace lp
