// Connection: one link of a session as the protocol sees it, from the dial (or accept) through
// the handshake to established: the handshake state, the frame reader and the bytes waiting for
// the carrier. Pure: the carrier link that moves its bytes (carrier.h) is attached by the driver.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "carrier/carrier.h"
#include "security/handshake.h"
#include "wire/wire_frame.h"

namespace lp {

class Session;

enum class ConnectionState {
  kConnecting,   // dialler: the carrier is opening the link
  kHandshaking,  // authentication frames (handshake.h)
  kEstablished,  // both proofs checked (or ours, awaiting_peer_proof): DATA and ACK flow
  kClosed,       // waiting to be swept away
};

class Connection {
 public:
  using Clock = std::chrono::steady_clock;

  Connection(Handshake handshake, Clock::time_point now);

  bool outgoing() const { return handshake_.outgoing(); }
  // Unique in this process, never reused (an address may be, once a connection is gone): what a
  // session's datagram channel files this connection's keys under.
  std::uint64_t id() const { return id_; }
  Handshake& handshake() { return handshake_; }
  const Handshake& handshake() const { return handshake_; }

  // Frames to send are appended here; the driver hands unsent() to the carrier.
  std::vector<std::byte>& output() { return output_; }
  std::size_t pending_output() const { return output_.size() - written_; }
  std::span<const std::byte> unsent() const { return std::span<const std::byte>(output_).subspan(written_); }
  // The carrier took `count` bytes of unsent().
  void consume(std::size_t count);

  FrameReader& reader() { return reader_; }

  // Seals the frame an encoder appended at output()[start], once our frames are sealed (from our
  // IDENTIFY on: handshake.h). Every frame after the handshake goes through here.
  void seal_from(std::size_t start) {
    if (FrameCipher* sealer = handshake_.sealer()) sealer->seal_frame(output_, start);
  }
  // Opens a received frame in place (true for a frame of the unsealed handshake phase); false: it
  // was altered, replayed, reordered or sealed with other keys.
  bool open(const FrameView& frame) {
    if (frame.tag.empty()) return true;
    FrameCipher* opener = handshake_.opener();
    return opener != nullptr && opener->open(frame.header, frame.payload, frame.tag);
  }
  // Once the peer's frames are sealed, every frame it sends ends with a tag.
  void expect_tags_if_sealed() {
    if (handshake_.opener() != nullptr) reader_.set_tag_size(kTagSize);
  }

  // Both proofs checked and the peer's identity presented: read like a session's stream.
  bool authenticated() const { return state == ConnectionState::kEstablished && !awaiting_peer_proof; }

  ConnectionState state = ConnectionState::kConnecting;
  // Dialler, a session's first connections: DATA goes right behind our AUTH (0.5-RTT data) while
  // the acceptor's proof and IDENTIFY are still on their way (endpoint_handshake.cpp, establish).
  bool awaiting_peer_proof = false;
  Session* session = nullptr;                // null until an accepted connection has authenticated
  std::string peer_endpoint;                 // dialled, or announced in HELLO
  std::size_t stream = 0;                    // which of the session's parallel streams
  Clock::time_point last_sent;               // for keep-alives
  Clock::time_point last_received;           // the peer's last frame on this connection
  bool suspect = false;                      // established before a silence of the path: TCP may hold
                                             // its bytes behind a backed-off timer; a new one replaces it
  bool carried_large_spill = false;          // a spill stream given a frame larger than an initial
                                             // window: its grown window is worth keeping (CarrierLink::keep_grown_window)
  bool queued_for_flush = false;             // on the endpoint's flush list
  bool flush_before_close = false;           // a CLOSE frame is waiting: write it before closing
  bool abort_on_close = false;               // close abruptly (a reset, for testing)
  bool writable_interest = false;            // the event loop watches for writability
  Clock::time_point coalesce_until{};        // a small write held back to this time (coalesce_delay)
  bool read_paused = false;                  // not read while the receive queue is full
  std::unique_ptr<CarrierLink> link;         // null until the carrier opened it
  // Round trips of the handshake (path_estimator.h): when the frame (or SYN) that the peer answers
  // at once left, and the smallest answer time so far (zero = none yet).
  Clock::time_point rtt_probe_sent{};
  Clock::duration handshake_rtt{};
  // TCP_INFO's cumulative segment counters at the last path sample (the driver takes differences).
  std::uint64_t sampled_segments_out = 0;
  std::uint32_t sampled_retransmits = 0;
  // Dialler, TCP Fast Open: HELLO left in the SYN (CarrierLink::first_write_in_syn), so no SYN ->
  // SYN-ACK time was taken and HELLO -> CHALLENGE is one round trip only if the peer took the SYN's data.
  bool hello_in_syn = false;
  void note_handshake_answer(Clock::time_point now) {
    if (rtt_probe_sent == Clock::time_point{}) return;
    note_handshake_sample(now - rtt_probe_sent);
    rtt_probe_sent = {};
  }
  void note_handshake_sample(Clock::duration sample) {
    if (sample <= Clock::duration{}) return;
    if (handshake_rtt == Clock::duration{} || sample < handshake_rtt) handshake_rtt = sample;
  }

 private:
  std::uint64_t id_;
  Handshake handshake_;
  FrameReader reader_;
  std::vector<std::byte> output_;
  std::size_t written_ = 0;
};

}  // namespace lp
