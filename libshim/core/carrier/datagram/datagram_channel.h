// DatagramChannel: a session's DATA and ACK path over the datagram (UDP) carrier. Pure: it
// decides and seals; the driver (datagram_port.h) moves its datagrams through the UDP socket.
//
// The session keeps its TCP control connections (stream 0, and its first dials under auto) for
// the handshakes, keys, keep-alives, CLOSE and the dead-peer and silent-path logic. Its messages
// travel as datagrams:
//   - Fragments: a message is split into balanced units of at most kDatagramUnit bytes (none
//     shorter than a message trailer), each one ARQ message (flags byte | bytes; the last unit
//     flagged), so a loss costs one unit's re-send, not a 1 MiB message's. The receiver joins them.
//   - The ARQ runs in datagram mode (arq.h); its windows count units (arq_config_from).
//   - Pacing: a DatagramPacer decides when the next DATA datagram may leave; ACKs are not paced
//     (one per kDatagramAckEvery units or kDatagramAckDelay, at once for a new or filled hole, and
//     at most one per batch of datagrams read, so they are few).
//   - Repairs (LONGPIPE_DATAGRAM_FEC, tail_fec.h): when the ARQ has no new unit left, repair
//     datagrams over the last round trip's units follow the ARQ's own; they recover lost units.
//   - Keys: each of the session's connections gives a DatagramCrypto (add_keys); datagrams are
//     sealed under one (seal_with) and opened under any, since a session's first dials race and
//     either end may authenticate them in any order (docs/engine/datagram-carrier.md, "A lost handshake
//     segment"). Datagrams sealed under keys the peer does not hold yet are refused there and
//     re-sent by the ARQ.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "arq/arq.h"
#include "config.h"
#include "congestion/datagram_pacer.h"
#include "carrier/datagram/datagram_wire.h"
#include "path/path_estimator.h"
#include "stats/stats.h"
#include "carrier/datagram/tail_fec.h"

namespace lp {

class Handshake;

// The ARQ of a session on the datagram carrier: selective repeat (datagram mode); the windows
// count units of kDatagramUnit bytes, so the byte window sets how many (64 MiB = 47935 units);
// an ACK of up to kDatagramAckParts x kDatagramSackRanges ranges (sent as several datagrams).
void configure_for_datagrams(ArqConfig& arq, const Config& config);

class DatagramChannel {
 public:
  // Datagrams waiting for the socket beyond this: stop encoding (the ARQ keeps the messages).
  static constexpr std::size_t kMaxQueued = 512;
  // IP and UDP headers, counted in what the pacer sees on the wire (IPv4).
  static constexpr std::size_t kIpUdpOverhead = 28;
  // An ACK of more than one datagram (more holes than kDatagramSackRanges) waits until this many
  // DATA datagrams per ACK datagram arrived since the last ACK, or kMultiAckWait passed since it
  // was due: sent once per read turn, a lossy path's many-hole ACKs fill the return path, which
  // the pacer reads as a standing queue (docs/engine/datagram-carrier.md, "Goodput through random loss").
  static constexpr std::size_t kDatagramsPerAckPart = 4;
  static constexpr ArqDuration kMultiAckWait{2000};

  explicit DatagramChannel(const Config& config);

  // Connection `owner` of the session carried a handshake: received datagrams may be sealed under
  // its keys from now on (nothing if the handshake derived none). kMaxKeySets are kept (a
  // connection that went still has datagrams in flight); a new one replaces the oldest that
  // neither seals nor opened the last datagram received.
  void add_keys(std::uint64_t owner, const Handshake& handshake);
  // The same from the keys themselves (`outgoing`: we dialled the connection).
  void add_keys(std::uint64_t owner, const TrafficKeys& datagram_keys, bool outgoing, Protection protection);
  // Seal under `owner`'s keys (added before; false if not) from now on. What was sealed under
  // others (queued or in flight) is dropped from the pacer's count: the peer may refuse it, and
  // the ARQ's carrier_reset() sends it again.
  bool seal_with(std::uint64_t owner);
  // After a seal_with because the peer could not open what we sealed (it never proved those keys):
  // everything unacknowledged goes again as a first flight would (Arq::resend_unread), with repairs.
  void resend_unread(Arq& arq, ArqTime now);
  static constexpr std::size_t kMaxKeySets = 4;
  bool keyed() const { return sealing_ != nullptr; }
  // Changes with every seal_with (the driver re-reads the peer's address then).
  std::uint64_t key_epoch() const { return key_epoch_; }

  // --- sending ---
  // Whether a packed message of `bytes` fits the ARQ's window now.
  bool can_accept(const Arq& arq, std::size_t bytes) const;
  // Splits a packed message into units and submits them to the ARQ.
  void submit(Arq& arq, ArqPayload packed);
  // Runs the ARQ's timers and encodes what pacing lets go now, and the ACK if one is due.
  void pump(Arq& arq, ArqTime now);
  // Sealed datagrams for the socket, oldest first; the driver pops what it sent.
  std::deque<std::vector<std::byte>>& outgoing() { return outgoing_; }
  // Sends the ACK owed now, delayed or not (before our goodbye: the peer would otherwise keep
  // what it sent last unacknowledged, and its session with us open, after we are gone).
  void acknowledge_now(Arq& arq);
  // When pump() has something to do (nullopt: wait for a datagram or the socket).
  std::optional<ArqTime> next_deadline(const Arq& arq, ArqTime now) const;

  // --- receiving ---
  enum class Verdict { kAccepted, kMalformed, kUnauthentic, kReplayed };
  // One received datagram (opened in place), which the kernel received at `arrival_ns` (its
  // clock: UdpCarrier::Sink; the ACKs report the arrival times of DATA). `why` says what was
  // malformed.
  Verdict on_datagram(Arq& arq, std::span<std::byte> datagram, std::int64_t arrival_ns, ArqTime now,
                      std::string& why);
  // Whole messages the ARQ has in order, appended to `messages`. False: a peer's units do not
  // form a message within LONGPIPE_MAX_MESSAGE (the partial one is dropped).
  bool take_received(Arq& arq, std::vector<ArqPayload>& messages);

  // A validated warm start (path_keeper.cpp): the cached rate (bytes/s) and minimum RTT seed the
  // pacer if it has no ACK yet (DatagramPacer::seed), and the cached loss (-1: none measured) may
  // raise the tail repairs' prior (TailFecSender::loss_estimate). Offered once.
  void warm_start(double rate, ArqDuration min_rtt, std::int64_t loss_ppm);
  bool warm_start_offered() const { return warm_start_offered_; }
  // What the session learnt of the path, for the warm-start cache: the pacer's measurements (its
  // rate once start-up was over, or a confirmed seed's while it has none of its own; its minimum
  // RTT; its loss without a queue), never the control connection's (a few KB/s). Nothing
  // without a rate: a session of small bursts measures the application, not the path.
  std::optional<PathSnapshot> path_snapshot() const;

  const DatagramPacer& pacer() const { return pacer_; }
  DatagramStatistics statistics() const;
  std::uint64_t datagrams_sent() const { return datagrams_sent_; }
  std::uint64_t datagrams_received() const { return datagrams_received_; }

 private:
  void push(std::vector<std::byte> datagram);
  void send_ack(const ArqAck& ack);
  // Datagrams the ACK owed now takes, and whether it may go now.
  std::size_t ack_parts(const Arq& arq) const;
  bool ack_may_go(const Arq& arq, ArqTime now) const;

  const Config& config_;
  DatagramPacer pacer_;
  struct KeySet {
    std::uint64_t owner;
    std::unique_ptr<DatagramCrypto> crypto;
  };
  // Opens `datagram` in place under the key set that opened the last one, else under each of the
  // others (a failed open leaves garbage in place: each try works on a copy).
  DatagramCrypto::Opened open(std::span<std::byte> datagram);
  std::vector<KeySet> key_sets_;  // oldest first
  DatagramCrypto* sealing_ = nullptr;
  DatagramCrypto* last_opened_ = nullptr;
  std::vector<std::byte> open_scratch_;  // the sealed datagram, while open() tries more than one key set
  std::uint64_t key_epoch_ = 0;
  std::uint64_t timeouts_seen_ = 0;
  bool warm_start_offered_ = false;
  double warm_start_rate_ = 0;  // the cached rate offered (bytes/s)
  std::int64_t known_loss_ppm_ = -1;  // the cached loss offered
  std::deque<std::vector<std::byte>> outgoing_;
  ArqPayload partial_;  // units of the message being reassembled
  std::uint64_t datagrams_sent_ = 0;
  std::uint64_t datagrams_received_ = 0;
  std::uint64_t data_since_ack_ = 0;  // DATA datagrams accepted since the last ACK went
  std::int64_t first_arrival_since_ack_ = 0;  // ... the first one's arrival (kernel clock, ns)
  std::int64_t newest_arrival_ = 0;           // the newest DATA datagram's arrival (0: none yet)
  // Burst tails, measured (statistics): from when a burst of at least kMeasuredTailUnits new units
  // ran out to when the peer had acknowledged everything: one round trip if nothing was lost at
  // the end, two or more if the last round trip's losses waited for re-sends.
  static constexpr std::uint64_t kMeasuredTailUnits = 1000;
  std::uint64_t tail_marked_end_ = 0;  // ARQ transmitted_end() when the last tail began
  std::optional<ArqTime> tail_started_;
  std::uint64_t tails_ = 0;
  ArqDuration tail_total_{0};
  TailFecSender fec_sender_;
  TailFecReceiver fec_receiver_;
  std::deque<RepairSymbol> repairs_;  // to send once the ARQ has nothing (tail_fec.h)
  std::uint64_t repairs_sent_ = 0;
};

}  // namespace lp
