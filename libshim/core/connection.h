// Connection: one TCP connection of a session, from the dial (or accept) through the
// authentication handshake to established. Owns the socket, the frame reader and the bytes
// waiting to be written. The engine's progress thread drives it; it never blocks.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "file_descriptor.h"
#include "frame.h"
#include "frame_cipher.h"
#include "tcp_socket.h"

namespace lp {

class Session;

enum class ConnectionState {
  kConnecting,        // dialler: non-blocking connect in progress
  kAwaitChallenge,    // dialler: HELLO sent
  kAwaitServerProof,  // dialler: AUTH and sealed IDENTIFY sent
  kAwaitPeerIdentity, // dialler: the acceptor's proof checked; its sealed IDENTIFY comes next
  kAwaitHello,        // acceptor: nothing received yet
  kAwaitClientProof,  // acceptor: CHALLENGE sent
  kAwaitIdentity,     // acceptor: the dialler's proof checked; its sealed IDENTIFY comes next
  kEstablished,       // both proofs and identities checked: sealed DATA and ACK flow
  kClosed,            // waiting to be swept away
};

enum class IoStatus { kOk, kEndOfStream, kError };

class Connection {
 public:
  using Clock = std::chrono::steady_clock;

  Connection(FileDescriptor fd, bool outgoing, Clock::time_point now);

  int fd() const { return fd_.get(); }
  bool outgoing() const { return outgoing_; }

  // Frames to send are appended here; write_pending() moves them to the socket.
  std::vector<std::byte>& output() { return output_; }
  std::size_t pending_output() const { return output_.size() - written_; }
  // Writes until the socket is full or nothing is left.
  IoStatus write_pending(std::string& error);
  // Reads up to `budget` bytes into the frame reader (fewer if the socket has fewer).
  IoStatus read_available(std::size_t budget, std::string& error, std::size_t& bytes_read);

  FrameReader& reader() { return reader_; }
  void close_socket() { fd_.reset(); }

  // Traffic keys from the handshake (frame_cipher.h). Our frames are sealed from start_sealing()
  // on, the peer's are opened from start_opening() on (each side's first sealed frame is IDENTIFY).
  void set_traffic_keys(const TrafficKeys& keys, Protection protection);
  void start_sealing();
  void start_opening();
  // Seals the frame an encoder appended at output()[start], once sealing has started.
  void seal_from(std::size_t start) {
    if (sealer_) sealer_->seal_frame(output_, start);
  }
  // Opens a received frame in place; true for a frame of an unprotected phase (no tag).
  bool open(const FrameView& frame) {
    return frame.tag.empty() || (opener_ && opener_->open(frame.header, frame.payload, frame.tag));
  }
  Protection protection() const { return protection_; }
  bool authenticated() const { return state == ConnectionState::kEstablished; }

  ConnectionState state = ConnectionState::kConnecting;
  Session* session = nullptr;                // null until an accepted connection says HELLO
  std::string peer_endpoint;                 // dialled, or announced in HELLO
  std::size_t stream = 0;                    // which of the session's parallel streams
  std::vector<std::byte> client_nonce;
  std::vector<std::byte> server_nonce;
  Clock::time_point deadline;                // connect + handshake must finish by then
  Clock::time_point last_sent;               // for keep-alives
  bool writable_interest = false;            // EPOLLOUT registered
  bool read_paused = false;                  // EPOLLIN dropped while the receive queue is full
  SocketTuning tuning;

 private:
  FileDescriptor fd_;
  bool outgoing_;
  FrameReader reader_;
  Protection protection_ = Protection::kEncrypt;
  std::optional<TrafficKeys> keys_;        // until both ciphers exist
  std::unique_ptr<FrameCipher> sealer_;    // our direction
  std::unique_ptr<FrameCipher> opener_;    // the peer's
  std::vector<std::byte> output_;
  std::size_t written_ = 0;
};

}  // namespace lp
