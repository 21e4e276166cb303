// Arq: LongPipe's message-level sliding-window ARQ for one session (both directions), a pure state
// machine in the spirit of KCP's ikcp.c: no I/O, no clock reads, no threads, no allocation beyond
// the messages it holds. The caller (the engine's progress thread, the only one that touches it)
// passes `now` and moves frames between the Arq and the carrier.
//
//   - Sequence: every message of a direction gets a 64-bit number 0, 1, 2, ... (never wraps); the
//     payload is opaque. One Arq per session, not per socket: a reconnect continues the sequence.
//   - Sender: submit() takes a message (moved) if can_accept(); the window bounds unacknowledged
//     messages in count and bytes, so the engine can block, fail or drop when it is full.
//     poll_transmit() hands out queued retransmissions first (oldest first), then new messages in
//     order, never past the peer's advertised receive window. A copy is freed once a cumulative ACK
//     or a SACK range covers it (the receiver never discards what it has SACKed).
//   - Receiver: on_data() accepts frames in any order; receive() hands out each message once, in
//     order (drain it after each batch: that queue is not bounded). Out-of-order frames are held
//     within the receive window in datagram mode; over a reliable carrier (frames striped over
//     several connections) always, since no timer would re-send them. Duplicates and old frames
//     are dropped and counted.
//   - ACK: `cumulative` is the NEXT EXPECTED sequence number, plus SACK ranges [begin, end) of held
//     messages and the receive window. Due at once (ack_delay = 0) or after ack_delay /
//     ack_every_messages; out-of-order, gap-filling, duplicate and old frames make it due at once,
//     so a lost ACK is repaired by the next (re)transmission; with ack_new_holes_only (datagrams)
//     only a frame that opens or fills a hole does (RFC 9000 13.2.1). Call poll_ack() after
//     handling everything read in one go: one ACK then covers the batch.
//   - RTT: RFC 6298 (SRTT, RTTVAR, RTO in [min_rto, max_rto]); one sample per ACK, from the newest
//     message it newly acknowledges if sent exactly once (Karn's rule). Taken in both modes (over
//     TCP it includes socket queues: reported). Each timeout multiplies the RTO by backoff_factor,
//     up to max_rto; an ACK of anything new resets the back-off.
//   - kReliableCarrier (TCP): no retransmission timers (TCP retransmits). After a reconnect,
//     carrier_reset() re-sends every unacknowledged message in order and the peer drops the ones
//     it had, so a reset loses and duplicates nothing; the receiver owes an ACK at once.
//   - kDatagram (UDP): selective repeat. One RFC 6298 timer runs while messages are in flight,
//     restarted by an ACK of anything new; on expiry every in-flight message not SACKed is queued
//     again (as TCP with SACK marks them lost) and the RTO backs off. SACK ranges free copies early
//     and drive fast retransmit: after fast_retransmit_threshold ACKs of later-sent messages, or
//     once fast_retransmit_messages of them are acknowledged (however few ACKs).
//
// Tunables: ArqConfig in arq_types.h documents each and its default; validate() checks ranges.
// Dead peer: the engine applies its dead-peer timeout to oldest_unacked_since() (both modes); in
// datagram mode max_transmissions can flag peer_dead().
//
// Typical progress-thread use:
//   arq.submit(payload)                           (after can_accept)
//   on readable:  for each frame read: arq.on_data(seq, payload, now) / arq.on_ack(ack, now)
//                 while (auto m = arq.receive()) deliver(*m)
//   any time:     arq.on_timer(now) when now >= next_deadline()
//                 while (writable && (f = arq.poll_transmit(now))) encode(*f)
//                 if (auto a = arq.poll_ack(now)) encode(*a)
//   on reconnect: arq.carrier_reset(now)
#pragma once

#include <optional>

#include "arq/arq_receiver.h"
#include "arq/arq_sender.h"
#include "arq/arq_types.h"

namespace lp {

// Throws std::invalid_argument naming the first ArqConfig field out of range (windows >= 1,
// 0 < min_rto <= initial_rto <= max_rto, backoff_factor >= 1, ack_every_messages >= 1, ...).
// The Arq constructor calls it; the engine can call it earlier to report a bad LONGPIPE_* value.
void validate(const ArqConfig& config);

class Arq {
 public:
  using Delivery = ArqReceiver::Delivery;

  explicit Arq(const ArqConfig& config = {});  // validates config

  const ArqConfig& config() const { return config_; }

  // ---- Sender ----
  // True if a message of `bytes` fits in the send window now.
  bool can_accept(std::size_t bytes) const { return sender_.can_accept(bytes); }
  // Takes the message (even if the window is full: checking can_accept is the caller's policy) and
  // returns its sequence number.
  std::uint64_t submit(ArqPayload payload) { return sender_.submit(std::move(payload)); }
  // The next data frame to put on the wire, if any; the Arq counts it as transmitted at `now`.
  // Call while the carrier can take more. Runs on_timer(now) first.
  std::optional<ArqDataFrame> poll_transmit(ArqTime now);
  // Payload bytes of the frame poll_transmit(now) would hand out next, without taking it (nullopt:
  // none may go now; a retransmission timer not yet run is left to next_deadline()).
  std::optional<std::size_t> next_transmit_bytes() const { return sender_.next_transmit_bytes(); }
  // An ACK from the peer. Returns false (and ignores it) if it acknowledges a message never
  // transmitted or is malformed: a protocol violation, the engine should close that connection.
  bool on_ack(const ArqAck& ack, ArqTime now) { return sender_.on_ack(ack, now); }
  // No message outstanding: everything submitted has been acknowledged.
  bool all_acknowledged() const { return sender_.idle(); }
  // When the oldest unacknowledged message was first transmitted (nullopt if none is in flight).
  std::optional<ArqTime> oldest_unacked_since() const { return sender_.oldest_unacked_since(); }
  // Some message reached max_transmissions (datagram mode, if configured).
  bool peer_dead() const { return sender_.peer_dead(); }

  // What the sender still holds (datagram carrier's repair symbols, tail_fec.h; ArqSender).
  std::uint64_t acknowledged_below() const { return sender_.base_seq(); }
  std::uint64_t transmitted_end() const { return sender_.transmitted_end(); }
  const ArqPayload* held_copy(std::uint64_t seq, ArqTime& first_sent) const { return sender_.held_copy(seq, first_sent); }

  // ---- Receiver ----
  // A data frame from the peer, in any order, possibly duplicated. False: refused because it lies
  // far beyond the receive window (reliable-carrier mode; see ArqConfig::receive_window_messages).
  [[nodiscard]] bool on_data(std::uint64_t seq, ArqPayload payload, ArqTime now) {
    return receiver_.on_data(seq, std::move(payload), now);
  }
  // A message received but not yet handed out by receive(), or nullptr (ArqReceiver::find).
  const ArqPayload* received(std::uint64_t seq) const { return receiver_.find(seq); }
  // Messages below this have all been received.
  std::uint64_t received_below() const { return receiver_.next_expected(); }
  // The next message in order, exactly once.
  std::optional<Delivery> receive() { return receiver_.receive(); }
  // The ACK to send if one is due at `now` (marks it sent).
  std::optional<ArqAck> poll_ack(ArqTime now);
  // The current ACK regardless of the delay, e.g. to piggyback it (marks it sent).
  ArqAck make_ack() { return receiver_.make_ack(); }

  // ---- Both ----
  // Retransmission timers and delayed ACKs; harmless to call early or often.
  void on_timer(ArqTime now) { sender_.on_timer(now); }
  // When on_timer/poll_ack next needs calling (nullopt: nothing pending, wait for I/O).
  std::optional<ArqTime> next_deadline() const;
  // Its two parts: the retransmission timer, and when an ACK is due (nullopt: none owed).
  std::optional<ArqTime> retransmit_deadline() const { return sender_.next_deadline(); }
  std::optional<ArqTime> ack_deadline() const { return receiver_.next_deadline(); }
  // SACK ranges the next ACK would carry (before max_sack_ranges).
  std::size_t sack_ranges() const { return receiver_.held_ranges(); }
  // The carrier was broken and re-established (or, in datagram mode, the path changed).
  void carrier_reset(ArqTime now);
  // Datagram mode: the peer could read nothing we sent so far (sealed under keys it never proved).
  // As carrier_reset, and each message's next copy counts as its first for loss detection
  // (ArqSender::resend_unread); the ACKs we sent were unread too: one is owed at once.
  void resend_unread(ArqTime now);
  ArqStats stats() const;

 private:
  ArqConfig config_;
  ArqSender sender_;
  ArqReceiver receiver_;
};

}  // namespace lp
