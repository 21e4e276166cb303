// Handshake: one connection's authentication exchange as a pure state machine (authenticator.h
// has the proofs). Frames in, frames out, a deadline; the nonce is passed in. No sockets, no clock.
//
//   dialler:  start() -> HELLO;  CHALLENGE -> AUTH(client proof);  AUTH(server proof) -> established
//   acceptor: HELLO -> CHALLENGE;  AUTH(client proof) -> AUTH(server proof), established
//
// A wrong proof is answered with CLOSE(auth failed) and ends the handshake (kRejected); a CLOSE
// from the peer ends it too. A frame the state does not expect throws MalformedFrame.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "authenticator.h"
#include "wire_frame.h"

namespace lp {

enum class HandshakeStep {
  kPending,        // waiting for the peer's next frame
  kIdentified,     // acceptor: HELLO named the peer and the stream; CHALLENGE sent
  kEstablished,    // both proofs checked
  kRejected,       // the peer's proof was wrong; CLOSE(auth failed) appended
  kRefusedByPeer,  // the peer says our proof was wrong
  kPeerClosed,     // the peer closed for another reason (close_text())
};

class Handshake {
 public:
  using Clock = std::chrono::steady_clock;

  // `local_endpoint` is what HELLO announces; the proofs cover it.
  static Handshake dialler(const Authenticator& authenticator, std::string local_endpoint, std::size_t stream,
                           std::vector<std::byte> client_nonce, Clock::time_point deadline);
  static Handshake acceptor(const Authenticator& authenticator, std::vector<std::byte> server_nonce,
                            Clock::time_point deadline);

  // Dialler, once the carrier link is up: appends HELLO.
  void start(std::vector<std::byte>& out);
  // One frame from the peer; replies are appended to `out`. Throws MalformedFrame, or
  // std::invalid_argument for a malformed endpoint in HELLO.
  HandshakeStep on_frame(const FrameView& frame, std::vector<std::byte>& out);

  bool outgoing() const { return outgoing_; }
  bool finished() const { return state_ == State::kFinished; }
  // The handshake must be over by then (connect included).
  Clock::time_point deadline() const { return deadline_; }
  // Acceptor: the endpoint and stream HELLO announced (dialler: its own).
  const std::string& peer_endpoint() const { return client_endpoint_; }
  std::size_t stream() const { return stream_; }
  const std::string& close_text() const { return close_text_; }

 private:
  enum class State { kConnecting, kAwaitChallenge, kAwaitServerProof, kAwaitHello, kAwaitClientProof, kFinished };

  Handshake(const Authenticator& authenticator, bool outgoing, Clock::time_point deadline)
      : authenticator_(&authenticator), outgoing_(outgoing), deadline_(deadline) {}
  void expect(const FrameView& frame, FrameType type) const;
  // Checks a received AUTH against `expected`; a wrong one appends CLOSE(auth failed).
  bool proof_accepted(const FrameView& frame, const std::vector<std::byte>& expected, std::vector<std::byte>& out);

  const Authenticator* authenticator_;
  bool outgoing_;
  Clock::time_point deadline_;
  State state_ = State::kConnecting;
  std::string client_endpoint_;  // the dialler's endpoint: ours when dialling, the peer's when accepting
  std::size_t stream_ = 0;
  std::vector<std::byte> client_nonce_;
  std::vector<std::byte> server_nonce_;
  std::string close_text_;
};

}  // namespace lp
