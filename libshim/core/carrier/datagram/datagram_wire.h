// The datagram carrier's wire format: one sealed frame per UDP datagram. Pure.
//
//   magic "LD" | version u8 | reserved u8 | sequence u64 | frame (header 8 | payload | tag 16)
//
// The frame is a DATA, ACK or REPAIR frame of wire_frame.h, sealed with AES-256-GCM as TCP frames
// are (frame_cipher.h), but the nonce is the datagram's own sequence number, carried in clear: a
// changed sequence opens under another nonce and fails. The reserved byte is written as 0 and read
// by nobody, so it is not authenticated (giving it a meaning means bringing it under the tag).
// Datagrams are lost, reordered and duplicated, so each is checked on its own, and a ReplayWindow
// refuses any sequence seen before. A malformed, unauthentic or replayed datagram is dropped and
// counted; it never closes anything (anyone can send a datagram).
//
// Keys: per connection and direction, by HKDF from the connection's traffic keys (frame_cipher.h,
// derive_datagram_keys); a channel seals under one connection's and opens under any of them. No
// nonce is reused under a key (the sequence starts at 0 per key pair and never wraps: 2^64).
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "security/frame_cipher.h"
#include "wire/wire_frame.h"

namespace lp {

constexpr std::size_t kDatagramHeaderSize = 12;
// Datagrams we send stay within an IPv4 path MTU of 1500 bytes (IP 20 + UDP 8), so that no
// fragment of an IP packet is ever lost alone; IPv6 (40 + 8) leaves 1452, which kDatagramUnit fits.
constexpr std::size_t kMaxDatagramSize = 1472;
// Payload bytes of one DATA unit (one ARQ message of the datagram carrier): 1472 - 12 (datagram
// header) - 8 (frame header) - 8 (sequence) - 16 (tag) - 1 (fragment flags) = 1427; 1400 keeps
// IPv6 (1452) and a few bytes of slack.
constexpr std::size_t kDatagramUnit = 1400;
// SACK ranges an ACK datagram may carry and still fit (14 + 16 per range <= 1436 bytes); an ACK
// of more ranges goes as several datagrams, up to kDatagramAckParts.
constexpr std::uint32_t kDatagramSackRanges = 80;
constexpr std::uint32_t kDatagramAckParts = 8;
// The datagram ARQ's RTO is at least SRTT + this (ArqConfig::min_rto_margin; Linux's rto_min):
// with RFC 6298's own margin (4 x RTTVAR, a few ms on a steady long path) an ACK delayed by a
// loaded receiver fires a timeout and everything in flight goes again
// (docs/engine/datagram-carrier.md, "Goodput through random loss").
constexpr std::chrono::milliseconds kDatagramRtoMargin{200};
// The receiver's ACKs (ArqConfig::ack_every_messages, ack_delay, ack_new_holes_only): one per
// this many DATA units, or this long after the first unacknowledged one, whichever comes first; at
// once for a unit that opens or fills a hole, or repeats one (QUIC's rule, RFC 9000 13.2.1). One
// ACK per read turn is one per datagram for a receiver woken per datagram, and on a lossy path (a
// hole open nearly always) one per datagram even in larger turns: thousands of wake-ups/s of the
// sender's thread, each waiting for a CPU on a loaded host (docs/engine/datagram-carrier.md, "Fewer ACKs").
//   - 4 units: the ACKs report arrival times, so any number of them times the start-up jump's
//     train (pacer_tuning.h). Fast retransmit (3 ACKs of evidence) follows a hole after ~9 units
//     instead of 3 (~0.7 ms at 155 Mbit/s).
//   - 1 ms: the sender's pacing already works at millisecond resolution (kPacingSlack); below
//     ~50 Mbit/s it decides, bounding ACKs to ~1000/s, and adds at most 1 ms to an RTT sample
//     (the pacer's minimum RTT comes from the undelayed ones; the RTO's margin is 200 ms).
constexpr std::uint32_t kDatagramAckEvery = 4;
constexpr std::chrono::milliseconds kDatagramAckDelay{1};
// Copies of each re-send made while no new unit waits (ArqConfig::tail_copies): at 5 % loss the
// chance that all 3 copies are lost is ~1e-4, against 5 % for one, and each lost one costs the
// burst one more round trip.
constexpr std::uint32_t kDatagramTailCopies = 3;

// Sequences seen recently: refuses duplicates and replays of authentic datagrams, and anything
// older than the window (treated as lost; the ARQ re-sends what matters).
class ReplayWindow {
 public:
  static constexpr std::uint64_t kSize = 4096;
  // Whether `sequence` would be new (call before the costly open).
  bool fresh(std::uint64_t sequence) const;
  // Records an authentic `sequence` (call after it opened).
  void mark(std::uint64_t sequence);

 private:
  bool any_ = false;
  std::uint64_t highest_ = 0;
  std::array<std::uint64_t, kSize / 64> seen_{};  // bit (seq % kSize) for seq in (highest - kSize, highest]
};

// Both directions' datagram ciphers of one connection, from its traffic keys.
class DatagramCrypto {
 public:
  // `outgoing`: we dialled the control connection. `keys`: its datagram keys (Handshake::datagram_keys).
  DatagramCrypto(const TrafficKeys& keys, bool outgoing, Protection protection);

  // A datagram begins with kDatagramHeaderSize bytes of room, then one frame an encoder appended;
  // writes the header and seals the frame. Throws on a libcrypto failure only.
  void seal(std::vector<std::byte>& datagram);

  enum class Verdict { kOpened, kMalformed, kUnauthentic, kReplayed };
  struct Opened {
    Verdict verdict;
    std::string why;              // for kMalformed
    std::optional<FrameView> frame;  // for kOpened: points into `datagram` (opened in place)
  };
  // Checks and opens one received datagram in place. Never throws for any bytes.
  Opened open(std::span<std::byte> datagram);

  std::uint64_t sealed() const { return next_sequence_; }

 private:
  std::unique_ptr<FrameCipher> sealer_;
  std::unique_ptr<FrameCipher> opener_;
  std::uint64_t next_sequence_ = 0;
  ReplayWindow replay_;
};

// Appends the room for a datagram header (kDatagramHeaderSize bytes) to an empty buffer.
inline void begin_datagram(std::vector<std::byte>& out) { out.assign(kDatagramHeaderSize, std::byte{0}); }

}  // namespace lp
