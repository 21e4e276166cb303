// The 0-RTT parts of the handshake (handshake.h): the dialler's first flight with data, and the
// acceptor's verdict on it.
#include <algorithm>
#include <stdexcept>

#include "carrier/carrier_choice.h"
#include "security/handshake.h"

namespace lp {

void Handshake::enable_early(std::uint64_t timestamp_ms, std::string dialled_endpoint) {
  if (!outgoing_ || state_ != State::kConnecting) throw std::logic_error("enable_early after start");
  // The acceptor's wish for protection is not known before CHALLENGE: 0-RTT data goes only in the
  // strongest mode, which no wish can raise.
  if (wanted_ != Protection::kEncrypt) return;
  early_ = HelloEarlyPart{timestamp_ms, std::move(dialled_endpoint)};
}

std::vector<std::byte> Handshake::early_context() const {
  return Authenticator::early_context(early_->timestamp_ms, early_->dialled_endpoint, client_endpoint_, stream_,
                                      protection_);
}

void Handshake::take_challenge(const ChallengeFrame& challenge) {
  CarrierOffer::decode(challenge.carrier_offer);  // throws MalformedFrame for a byte no LongPipe sends
  peer_carrier_offer_ = challenge.carrier_offer;
  peer_offer_known_ = true;
  server_nonce_ = challenge.nonce;
  derive_ciphers(challenge.protection);
}

HandshakeStep Handshake::on_early_proof(const FrameView& frame, std::vector<std::byte>& out) {
  expect(frame, FrameType::kAuth);
  if (protection_ != Protection::kEncrypt) throw MalformedFrame("0-RTT data without encryption");
  const std::vector<std::byte> context = early_context();
  // A wrong proof is a wrong key (or a forger), refused as in the 1-RTT exchange.
  if (!proof_accepted(frame, authenticator_->early_proof(client_nonce_, context), out)) return HandshakeStep::kRejected;
  early_proven_ = true;
  opener_ = std::make_unique<FrameCipher>(authenticator_->early_key(client_nonce_, context, protection_), protection_,
                                          FrameCipher::Use::kOpen);
  // Only a flight addressed to this endpoint reaches the gate: the register holds admitted nonces only.
  if (gate_ == nullptr) {
    early_refusal_ = "0-RTT data not taken here";
  } else if (std::find(local_names_.begin(), local_names_.end(), early_->dialled_endpoint) == local_names_.end()) {
    early_refusal_ = "dialled as " + early_->dialled_endpoint + ", not a name of this process";
  } else if (const auto verdict = gate_->admit(client_nonce_, early_->timestamp_ms, wall_now_);
             verdict != EarlyGate::Verdict::kAdmitted) {
    early_refusal_ = early_verdict_name(verdict);
  } else {
    early_accepted_ = true;
  }
  derive_ciphers(protection_);  // ours is sealed under the traffic keys, as in the 1-RTT exchange
  encode_challenge(out, server_nonce_, wanted_, carrier_offer_, early_accepted_);
  state_ = early_accepted_ ? State::kAwaitIdentity : State::kDroppingEarly;
  return HandshakeStep::kPending;
}

HandshakeStep Handshake::on_early_challenge(const FrameView& frame, std::vector<std::byte>& out) {
  expect(frame, FrameType::kChallenge);
  const ChallengeFrame challenge = decode_challenge(frame.payload);
  take_challenge(challenge);
  state_ = State::kAwaitServerProof;
  if (challenge.early_accepted) {
    early_accepted_ = true;  // the server's AUTH must prove it (server_early_proof)
    return HandshakeStep::kPending;
  }
  // Refused: our proof over both nonces, still under the early key (the acceptor reads our early
  // frames to here), then our IDENTIFY and everything after under the traffic key.
  const std::size_t start = out.size();
  encode_fixed(out, FrameType::kAuth, authenticator_->client_proof(client_nonce_, server_nonce_, client_endpoint_));
  sealer_->seal_frame(out, start);
  send_identity(identity_token_, out);
  return HandshakeStep::kEarlyRefused;
}

}  // namespace lp
