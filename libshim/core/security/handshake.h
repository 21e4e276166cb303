// Handshake: one connection's authentication exchange as a pure state machine (authenticator.h
// has the proofs, frame_cipher.h the traffic keys). Frames in, frames out, a deadline; nonces and
// identity tokens are passed in. No sockets, no clock.
//
//   dialler:  start() -> HELLO;  CHALLENGE -> AUTH(client proof), sealed IDENTIFY;
//             AUTH(server proof) -> (sealed frames from here);  IDENTIFY -> established
//   acceptor: HELLO -> CHALLENGE (with its carrier offer, decided then: decide_offer_with());
//             AUTH(client proof) -> (sealed frames from here);
//             IDENTIFY -> kIdentityPresented: the endpoint checks the token against the session
//             and calls accept_identity() (AUTH(server proof), sealed IDENTIFY, established) or
//             refuse_identity() (CLOSE(identity refused))
//
// Both traffic ciphers (sealer(), opener()) come from HKDF over the job key and both nonces, in
// the stronger of the two sides' protections, and stay with the connection. The caller opens
// sealed frames (opener()) before on_frame() sees them, expecting tags once opener() exists. A
// wrong proof is answered with CLOSE(auth failed) and ends the handshake (kRejected), as does the
// peer's CLOSE. An unexpected frame throws MalformedFrame.
//
// The acceptor's carrier offer (carrier_choice.h) travels in clear in CHALLENGE, so the dialler
// can agree the carrier at once, and again in its sealed IDENTIFY: a difference throws
// MalformedFrame (the clear byte was altered on the way).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "security/authenticator.h"
#include "security/frame_cipher.h"
#include "wire/wire_frame.h"

namespace lp {

enum class HandshakeStep {
  kPending,        // waiting for the peer's next frame
  kIdentified,     // acceptor: HELLO named the peer and the stream; CHALLENGE sent
  kIdentityPresented,  // acceptor: the dialler proved the key and presented peer_token()
  kEstablished,    // both proofs checked, identities exchanged (dialler: peer_token() to check)
  kRejected,       // the peer's proof was wrong; CLOSE(auth failed) appended
  kRefusedByPeer,  // the peer says our proof was wrong
  kPeerClosed,     // the peer closed for another reason (close_text())
};

class Handshake {
 public:
  using Clock = std::chrono::steady_clock;

  // `local_endpoint` is what HELLO announces; the proofs cover it. `identity_token` is ours for
  // the session with the dialled peer (Authenticator::identity_token).
  static Handshake dialler(const Authenticator& authenticator, std::string local_endpoint, std::size_t stream,
                           std::vector<std::byte> client_nonce, Protection protection,
                           std::vector<std::byte> identity_token, Clock::time_point deadline);
  static Handshake acceptor(const Authenticator& authenticator, std::vector<std::byte> server_nonce,
                            Protection protection, Clock::time_point deadline);

  // Dialler, once the carrier link is up: appends HELLO.
  void start(std::vector<std::byte>& out);
  // One frame from the peer; replies are appended to `out`. Throws MalformedFrame, or
  // std::invalid_argument for a malformed endpoint in HELLO.
  HandshakeStep on_frame(const FrameView& frame, std::vector<std::byte>& out);
  // Acceptor, after kIdentityPresented: the token is the session's (or the session is new).
  // Appends AUTH(server proof) and our sealed IDENTIFY (`identity_token`); established.
  HandshakeStep accept_identity(const std::vector<std::byte>& identity_token, std::vector<std::byte>& out);
  // Acceptor, after kIdentityPresented: the session belongs to another process. Appends CLOSE.
  void refuse_identity(std::vector<std::byte>& out);

  bool outgoing() const { return outgoing_; }
  bool finished() const { return state_ == State::kFinished; }
  // Dialler: our AUTH and IDENTIFY are out, so the acceptor may already hold the connection as
  // established (it does on IDENTIFY); closing it now would take the stream from the acceptor.
  bool identity_sent() const { return state_ == State::kAwaitServerProof || state_ == State::kAwaitPeerIdentity; }
  // The handshake must be over by then (connect included).
  Clock::time_point deadline() const { return deadline_; }
  // Acceptor: the endpoint and stream HELLO announced (dialler: its own).
  const std::string& peer_endpoint() const { return client_endpoint_; }
  std::size_t stream() const { return stream_; }
  const std::string& close_text() const { return close_text_; }
  // The identity token the peer presented (after kIdentityPresented, or kEstablished when dialling).
  const std::vector<std::byte>& peer_token() const { return peer_token_; }
  // The carrier offer (carrier_choice.h) our IDENTIFY carries (and an acceptor's CHALLENGE): a
  // dialler's, set before it answers CHALLENGE; an acceptor's, before HELLO arrives or, with the
  // dialler's endpoint known, decided at HELLO by `source` (it is then fixed for this connection).
  void set_carrier_offer(std::uint8_t offer) { carrier_offer_ = offer; }
  using OfferSource = std::function<std::uint8_t(const std::string& dialler_endpoint)>;
  void decide_offer_with(OfferSource source) { offer_source_ = std::move(source); }
  std::uint8_t carrier_offer() const { return carrier_offer_; }
  // The peer's: a dialler's from CHALLENGE (its IDENTIFY must repeat it), an acceptor's from the
  // dialler's IDENTIFY (with peer_token()). Checked: a byte no LongPipe sends is malformed.
  std::uint8_t peer_carrier_offer() const { return peer_carrier_offer_; }
  bool peer_carrier_offer_known() const { return peer_offer_known_; }
  Protection protection() const { return protection_; }
  // The connection's traffic ciphers: null until the keys are known and that direction is sealed.
  // The datagram carrier's keys of this connection (derive_datagram_keys), once derived: the
  // traffic keys themselves are wiped when the handshake no longer needs them.
  const std::optional<TrafficKeys>& datagram_keys() const { return datagram_keys_; }
  FrameCipher* sealer() const { return sealer_.get(); }
  FrameCipher* opener() const { return opener_.get(); }

 private:
  enum class State {
    kConnecting,
    kAwaitChallenge,
    kAwaitServerProof,
    kAwaitPeerIdentity,  // dialler
    kAwaitHello,
    kAwaitClientProof,
    kAwaitIdentity,      // acceptor
    kIdentityPresented,  // acceptor: waiting for accept_identity() or refuse_identity()
    kFinished,
  };

  Handshake(const Authenticator& authenticator, bool outgoing, Clock::time_point deadline)
      : authenticator_(&authenticator), outgoing_(outgoing), deadline_(deadline) {}
  void expect(const FrameView& frame, FrameType type) const;
  // Checks a received AUTH against `expected`; a wrong one appends CLOSE(auth failed).
  bool proof_accepted(const FrameView& frame, const std::vector<std::byte>& expected, std::vector<std::byte>& out);
  // Derives the traffic keys; creates the cipher for our direction (sealing) and the peer's.
  void derive_ciphers(Protection peer_protection);
  void send_identity(const std::vector<std::byte>& identity_token, std::vector<std::byte>& out);
  void start_opening();                         // the peer's frames are sealed from now on
  void take_identity(const FrameView& frame);  // IDENTIFY -> peer_token_

  const Authenticator* authenticator_;
  bool outgoing_;
  Clock::time_point deadline_;
  State state_ = State::kConnecting;
  std::string client_endpoint_;  // the dialler's endpoint: ours when dialling, the peer's when accepting
  std::size_t stream_ = 0;
  std::vector<std::byte> client_nonce_;
  std::vector<std::byte> server_nonce_;
  std::string close_text_;
  Protection wanted_ = Protection::kEncrypt;   // ours
  Protection protection_ = Protection::kEncrypt;  // the connection's: the stronger of both
  std::vector<std::byte> identity_token_;  // ours (dialler: given at construction)
  std::vector<std::byte> peer_token_;
  std::uint8_t carrier_offer_ = 0;       // tcp, no datagrams (CarrierOffer{}.encode())
  std::uint8_t peer_carrier_offer_ = 0;
  bool peer_offer_known_ = false;
  OfferSource offer_source_;  // acceptor: decides carrier_offer_ at HELLO
  std::optional<TrafficKeys> keys_;
  std::optional<TrafficKeys> datagram_keys_;
  std::unique_ptr<FrameCipher> sealer_;
  std::unique_ptr<FrameCipher> opener_;
};

}  // namespace lp
