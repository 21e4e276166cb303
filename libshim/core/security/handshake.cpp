#include "security/handshake.h"

#include <stdexcept>

#include "carrier/carrier_choice.h"
#include "wire/host_port.h"

namespace lp {

Handshake Handshake::dialler(const Authenticator& authenticator, std::string local_endpoint, std::size_t stream,
                             std::vector<std::byte> client_nonce, Protection protection,
                             std::vector<std::byte> identity_token, Clock::time_point deadline) {
  Handshake handshake(authenticator, true, deadline);
  handshake.client_endpoint_ = std::move(local_endpoint);
  handshake.stream_ = stream;
  handshake.client_nonce_ = std::move(client_nonce);
  handshake.wanted_ = protection;
  handshake.identity_token_ = std::move(identity_token);
  return handshake;
}

Handshake Handshake::acceptor(const Authenticator& authenticator, std::vector<std::byte> server_nonce,
                              Protection protection, Clock::time_point deadline) {
  Handshake handshake(authenticator, false, deadline);
  handshake.server_nonce_ = std::move(server_nonce);
  handshake.wanted_ = protection;
  handshake.state_ = State::kAwaitHello;
  return handshake;
}

void Handshake::start(std::vector<std::byte>& out) {
  encode_hello(out, client_nonce_, stream_, wanted_, client_endpoint_);
  state_ = State::kAwaitChallenge;
}

void Handshake::derive_ciphers(Protection peer_protection) {
  protection_ = stronger(wanted_, peer_protection);
  keys_ = authenticator_->traffic_keys(client_nonce_, server_nonce_, protection_);
  datagram_keys_ = derive_datagram_keys(*keys_, protection_);
}

void Handshake::start_opening() {
  opener_ = std::make_unique<FrameCipher>(outgoing_ ? keys_->acceptor_to_dialler : keys_->dialler_to_acceptor,
                                          protection_, FrameCipher::Use::kOpen);
}

void Handshake::take_identity(const FrameView& frame) {
  expect(frame, FrameType::kIdentify);
  std::vector<std::byte> payload = decode_fixed(frame.payload, kIdentifyPayloadSize, "IDENTIFY");
  const auto offer = std::to_integer<std::uint8_t>(payload.back());
  CarrierOffer::decode(offer);  // throws MalformedFrame for a byte no LongPipe sends
  if (peer_offer_known_ && offer != peer_carrier_offer_) {
    // The sealed byte is the peer's; the clear one in CHALLENGE was changed on the way (and the
    // carrier may have been agreed on it: Session::attach before the peer's proof).
    throw MalformedFrame("IDENTIFY's carrier offer " + std::to_string(offer) + " differs from CHALLENGE's " +
                         std::to_string(peer_carrier_offer_) + " (altered on the way?)");
  }
  peer_carrier_offer_ = offer;
  peer_offer_known_ = true;
  payload.pop_back();
  peer_token_ = std::move(payload);
}

void Handshake::send_identity(const std::vector<std::byte>& identity_token, std::vector<std::byte>& out) {
  sealer_ = std::make_unique<FrameCipher>(outgoing_ ? keys_->dialler_to_acceptor : keys_->acceptor_to_dialler,
                                          protection_, FrameCipher::Use::kSeal);
  const std::size_t start = out.size();
  std::vector<std::byte> payload = identity_token;
  payload.push_back(std::byte{carrier_offer_});
  encode_fixed(out, FrameType::kIdentify, payload);
  sealer_->seal_frame(out, start);
}

void Handshake::expect(const FrameView& frame, FrameType type) const {
  if (frame.type != type) {
    throw MalformedFrame(std::string("expected ") + frame_type_name(type) + " during the handshake, got " +
                         frame_type_name(frame.type));
  }
}

bool Handshake::proof_accepted(const FrameView& frame, const std::vector<std::byte>& expected,
                               std::vector<std::byte>& out) {
  if (Authenticator::proofs_match(decode_fixed(frame.payload, kMacSize, "AUTH"), expected)) return true;
  encode_close(out, CloseReason::kAuthFailed, "authentication failed");
  state_ = State::kFinished;
  return false;
}

HandshakeStep Handshake::on_frame(const FrameView& frame, std::vector<std::byte>& out) {
  if (state_ == State::kFinished || state_ == State::kConnecting) {
    throw MalformedFrame("frame in an unexpected connection state");
  }
  if (frame.type == FrameType::kClose) {
    const CloseFrame close = decode_close(frame.payload);
    close_text_ = close.text;
    state_ = State::kFinished;
    return close.reason == CloseReason::kAuthFailed ? HandshakeStep::kRefusedByPeer : HandshakeStep::kPeerClosed;
  }
  switch (state_) {
    case State::kAwaitHello: {
      expect(frame, FrameType::kHello);
      HelloFrame hello = decode_hello(frame.payload);
      parse_host_port(hello.endpoint, true);
      client_endpoint_ = std::move(hello.endpoint);
      stream_ = hello.stream;
      client_nonce_ = std::move(hello.nonce);
      protection_ = hello.protection;  // the dialler's wish, until the keys are derived
      if (offer_source_) carrier_offer_ = offer_source_(client_endpoint_);
      encode_challenge(out, server_nonce_, wanted_, carrier_offer_);
      state_ = State::kAwaitClientProof;
      return HandshakeStep::kIdentified;
    }
    case State::kAwaitClientProof: {
      expect(frame, FrameType::kAuth);
      if (!proof_accepted(frame, authenticator_->client_proof(client_nonce_, server_nonce_, client_endpoint_), out)) {
        return HandshakeStep::kRejected;
      }
      derive_ciphers(protection_);
      start_opening();
      state_ = State::kAwaitIdentity;
      return HandshakeStep::kPending;
    }
    case State::kAwaitIdentity:
      take_identity(frame);
      state_ = State::kIdentityPresented;
      return HandshakeStep::kIdentityPresented;
    case State::kAwaitChallenge: {
      expect(frame, FrameType::kChallenge);
      ChallengeFrame challenge = decode_challenge(frame.payload);
      CarrierOffer::decode(challenge.carrier_offer);  // throws MalformedFrame for a byte no LongPipe sends
      peer_carrier_offer_ = challenge.carrier_offer;
      peer_offer_known_ = true;
      server_nonce_ = std::move(challenge.nonce);
      derive_ciphers(challenge.protection);
      encode_fixed(out, FrameType::kAuth, authenticator_->client_proof(client_nonce_, server_nonce_, client_endpoint_));
      send_identity(identity_token_, out);
      state_ = State::kAwaitServerProof;
      return HandshakeStep::kPending;
    }
    case State::kAwaitServerProof: {
      expect(frame, FrameType::kAuth);
      if (!proof_accepted(frame, authenticator_->server_proof(client_nonce_, server_nonce_, client_endpoint_), out)) {
        return HandshakeStep::kRejected;
      }
      start_opening();
      keys_.reset();
      state_ = State::kAwaitPeerIdentity;
      return HandshakeStep::kPending;
    }
    case State::kAwaitPeerIdentity:
      take_identity(frame);
      state_ = State::kFinished;
      return HandshakeStep::kEstablished;
    default:
      throw MalformedFrame("frame in an unexpected connection state");
  }
}

HandshakeStep Handshake::accept_identity(const std::vector<std::byte>& identity_token, std::vector<std::byte>& out) {
  if (state_ != State::kIdentityPresented) throw std::logic_error("accept_identity before an identity was presented");
  encode_fixed(out, FrameType::kAuth, authenticator_->server_proof(client_nonce_, server_nonce_, client_endpoint_));
  send_identity(identity_token, out);
  keys_.reset();
  state_ = State::kFinished;
  return HandshakeStep::kEstablished;
}

void Handshake::refuse_identity(std::vector<std::byte>& out) {
  // In clear: the dialler does not open our frames before our proof (which we do not send).
  encode_close(out, CloseReason::kIdentityRefused,
               "this endpoint's session belongs to another process (a restart without a goodbye, or this "
               "process reached us before under another name than the one dialled now)");
  state_ = State::kFinished;
}

}  // namespace lp
