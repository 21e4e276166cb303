// Plain types shared by the ARQ parts: clock, tunables, wire fields and statistics.
// See arq.h for the design; everything here is a plain struct the engine can copy, print or encode.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace lp {

// The ARQ never reads a clock: the caller passes `now`, a steady_clock time point (tests pass a fake
// one, ArqTime{} + some duration). Durations are microseconds.
using ArqTime = std::chrono::steady_clock::time_point;
using ArqDuration = std::chrono::microseconds;

// Message bytes; opaque to the ARQ (the engine puts its own message header inside).
using ArqPayload = std::vector<std::byte>;

enum class ArqMode {
  // The carrier is reliable and ordered (TCP). The ARQ never retransmits on a timer (TCP does);
  // carrier_reset() re-sends everything unacknowledged, in order, on the new connection.
  kReliableCarrier,
  // The carrier loses, reorders and duplicates (UDP). Selective repeat with RTO timers, SACK and
  // fast retransmit.
  kDatagram,
};

// Every tunable of the ARQ, with its default. The engine fills it from LONGPIPE_* variables.
struct ArqConfig {
  ArqMode mode = ArqMode::kReliableCarrier;

  // Send window: at most this many messages / bytes submitted but not yet acknowledged. The sender
  // holds a copy of each until it is acknowledged, so this also bounds the sender's memory;
  // can_accept() turns false when full and the engine blocks, fails or drops. A message larger than
  // the byte window is still accepted when nothing else is outstanding (else it could never go).
  // The defaults cover a geostationary path's bandwidth-delay product (155 Mbit/s x 540 ms =
  // 10.5 MB) with room to spare.
  std::uint32_t send_window_messages = 4096;
  std::uint64_t send_window_bytes = 64ull << 20;

  // Receive window: the receiver holds out-of-order messages only with a sequence number below
  // next_expected + receive_window_messages and while their bytes stay within receive_window_bytes;
  // anything beyond is dropped (the sender retransmits it). It is advertised in every ACK and the
  // sender never transmits past it. Keep it >= the peer's send window. In reliable-carrier mode
  // nothing is dropped (no timer would re-send it): the peer's send window bounds held frames, and
  // a peer more than kReliableCarrierWindowSlack windows ahead is refused (on_data returns false,
  // the caller closes that connection, and a reconnect re-sends what was lost).
  std::uint32_t receive_window_messages = 4096;
  std::uint64_t receive_window_bytes = 64ull << 20;

  // Retransmission timeout (RFC 6298; datagram mode only). Before the first RTT sample the RTO is
  // initial_rto; afterwards SRTT + max(clock_granularity, 4 * RTTVAR), clamped to [min_rto, max_rto].
  ArqDuration initial_rto = std::chrono::seconds(1);        // RFC 6298 (2.1)
  ArqDuration min_rto = std::chrono::milliseconds(200);     // Linux's TCP_RTO_MIN; RFC 6298 says 1 s
  ArqDuration max_rto = std::chrono::seconds(60);           // RFC 6298 (2.5) allows >= 60 s
  ArqDuration clock_granularity = std::chrono::milliseconds(1);  // G in RFC 6298: epoll's resolution
  // Each timeout multiplies the RTO by this (still clamped to max_rto); an ACK that acknowledges
  // anything new resets the multiplier to 1.
  double backoff_factor = 2.0;
  // The RTO is at least SRTT + this (0: RFC 6298 as written). On a steady long path RTTVAR decays
  // to a few milliseconds, and an ACK that a loaded receiver sends 10 ms late then fires a timeout
  // that re-sends everything in flight. Linux floors the same term at its rto_min (200 ms). The
  // datagram carrier sets it (configure_for_datagrams).
  ArqDuration min_rto_margin = ArqDuration::zero();

  // Delayed ACK: 0 = an ACK is due as soon as a message arrives. Otherwise an in-order message's ACK
  // waits up to ack_delay, unless ack_every_messages messages are waiting (TCP's every-second-segment
  // rule). Out-of-order, gap-filling, duplicate and out-of-window frames are always ACKed at once so
  // that lost ACKs are repaired and the sender learns about holes quickly.
  ArqDuration ack_delay = ArqDuration::zero();
  std::uint32_t ack_every_messages = 2;
  // Datagram mode (RFC 9000 13.2.1): a message held above a hole that continues the highest one
  // received (no new hole) is acknowledged like an in-order one (ack_delay / ack_every_messages);
  // only one that opens a new hole, or fills one, is acknowledged at once: on a lossy long path a
  // hole is open almost all the time, and every arrival would ACK at once.
  bool ack_new_holes_only = false;

  // Fast retransmit (datagram mode): a message is re-sent before its RTO when this many ACKs have
  // selectively acknowledged later messages since it was last sent. 0 disables.
  std::uint32_t fast_retransmit_threshold = 3;
  // ... or when this many messages sent after it have been acknowledged, by however few ACKs
  // (0: off). A receiver that acknowledges once per read turn sends a burst's tail two or three
  // ACKs, each for dozens of messages: its holes never meet the threshold above and wait for the RTO.
  std::uint32_t fast_retransmit_messages = 0;

  // Datagram mode: a retransmission that leaves while no new message waits (the tail of a burst)
  // goes this many times (1: once). A lost re-send is found only once something sent after it is
  // acknowledged, a round trip later, and at a few % loss some of a tail's many re-sends are lost,
  // each such round costing the burst another round trip. Extra copies go after the other re-sends.
  std::uint32_t tail_copies = 1;
  // Datagram mode: when new messages run out, re-sends made while they still flowed, within this
  // many minimum RTTs, get the tail's extra copies too (0: off): a lost re-send in a burst's last
  // round trip is found only after the burst's end (tail_fec.h's repairs cover new units only).
  double copy_recent_resends_rtts = 0;

  // At most this many SACK ranges in an ACK (the ones closest to the cumulative point).
  std::uint32_t max_sack_ranges = 16;

  // Dead peer (datagram mode): after a message has been transmitted this many times without being
  // acknowledged, peer_dead() turns true. 0 = never; the engine can also apply its dead-peer timeout
  // to oldest_unacked_since(), which works in both modes.
  std::uint32_t max_transmissions = 0;
};

// A data frame to put on the wire. `payload` points into the sender's copy and stays valid until the
// next non-const call on the ARQ; encode it (copy it out) first.
struct ArqDataFrame {
  std::uint64_t seq = 0;                 // 0, 1, 2, ... per direction of a session; never wraps
  std::span<const std::byte> payload;
};

// Selectively acknowledged messages: seq in [begin, end).
struct ArqSackRange {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  bool operator==(const ArqSackRange&) const = default;
};

// An acknowledgement frame to put on the wire.
struct ArqAck {
  // Next expected sequence number: every message with seq < cumulative has been received (0 = none).
  std::uint64_t cumulative = 0;
  // Received messages above `cumulative`, ascending, disjoint, each begin > the previous end.
  // Over a reliable carrier only present while frames striped over several connections are
  // out of order. The receiver never discards what it SACKed, so the sender frees those copies.
  std::vector<ArqSackRange> sack;
  // How many sequence numbers from `cumulative` on the receiver will accept (its receive window).
  std::uint32_t window_messages = 0;
};

// Counters and current state, for the engine's per-session statistics.
struct ArqStats {
  // Sender.
  std::uint64_t messages_submitted = 0;
  std::uint64_t messages_sent = 0;            // first transmissions
  std::uint64_t bytes_sent = 0;
  std::uint64_t messages_retransmitted = 0;   // every later transmission (timeout, fast, reset)
  std::uint64_t bytes_retransmitted = 0;
  std::uint64_t fast_retransmits = 0;         // included in messages_retransmitted
  // Transmissions an ACK of a later-sent message showed missing (datagram mode): the path's losses
  // (and reorderings), those that repairs recovered before any re-send included.
  std::uint64_t messages_seen_missing = 0;
  std::uint64_t timeouts = 0;                 // RTO expiries (each may re-send several messages)
  std::uint64_t messages_acked = 0;
  std::uint64_t acks_received = 0;
  std::uint64_t invalid_acks = 0;             // acknowledged what was never sent
  std::uint64_t carrier_resets = 0;
  std::uint64_t rtt_samples = 0;
  ArqDuration srtt{0};                        // 0 until the first sample
  ArqDuration rttvar{0};
  ArqDuration rto{0};                         // current, back-off included
  std::uint64_t in_flight_messages = 0;       // submitted, not yet acknowledged
  std::uint64_t in_flight_bytes = 0;
  std::uint32_t send_window_messages = 0;
  std::uint64_t send_window_bytes = 0;
  std::uint32_t peer_window_messages = 0;     // last advertised by the peer
  // Receiver.
  std::uint64_t messages_received = 0;        // distinct messages accepted
  std::uint64_t messages_delivered = 0;       // handed out by receive()
  std::uint64_t bytes_delivered = 0;
  std::uint64_t duplicates_dropped = 0;
  // Messages a later one overtook on arrival (datagram mode: lost, then re-sent or recovered, or
  // reordered): the loss of the path towards us, which the tail repairs' estimate also weighs.
  std::uint64_t messages_skipped = 0;
  std::uint64_t out_of_window_dropped = 0;
  std::uint64_t acks_sent = 0;
  std::uint64_t held_out_of_order_messages = 0;   // now
  std::uint64_t held_out_of_order_bytes = 0;      // now
  std::uint64_t max_held_out_of_order_messages = 0;  // high-water mark
};

}  // namespace lp
