#include "handshake.h"

#include "host_port.h"

namespace lp {

Handshake Handshake::dialler(const Authenticator& authenticator, std::string local_endpoint, std::size_t stream,
                             std::vector<std::byte> client_nonce, Clock::time_point deadline) {
  Handshake handshake(authenticator, true, deadline);
  handshake.client_endpoint_ = std::move(local_endpoint);
  handshake.stream_ = stream;
  handshake.client_nonce_ = std::move(client_nonce);
  return handshake;
}

Handshake Handshake::acceptor(const Authenticator& authenticator, std::vector<std::byte> server_nonce,
                              Clock::time_point deadline) {
  Handshake handshake(authenticator, false, deadline);
  handshake.server_nonce_ = std::move(server_nonce);
  handshake.state_ = State::kAwaitHello;
  return handshake;
}

void Handshake::start(std::vector<std::byte>& out) {
  encode_hello(out, client_nonce_, stream_, client_endpoint_);
  state_ = State::kAwaitChallenge;
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
      encode_fixed(out, FrameType::kChallenge, server_nonce_);
      state_ = State::kAwaitClientProof;
      return HandshakeStep::kIdentified;
    }
    case State::kAwaitClientProof: {
      expect(frame, FrameType::kAuth);
      if (!proof_accepted(frame, authenticator_->client_proof(client_nonce_, server_nonce_, client_endpoint_), out)) {
        return HandshakeStep::kRejected;
      }
      encode_fixed(out, FrameType::kAuth, authenticator_->server_proof(client_nonce_, server_nonce_, client_endpoint_));
      state_ = State::kFinished;
      return HandshakeStep::kEstablished;
    }
    case State::kAwaitChallenge: {
      expect(frame, FrameType::kChallenge);
      server_nonce_ = decode_fixed(frame.payload, kNonceSize, "CHALLENGE");
      encode_fixed(out, FrameType::kAuth, authenticator_->client_proof(client_nonce_, server_nonce_, client_endpoint_));
      state_ = State::kAwaitServerProof;
      return HandshakeStep::kPending;
    }
    case State::kAwaitServerProof: {
      expect(frame, FrameType::kAuth);
      if (!proof_accepted(frame, authenticator_->server_proof(client_nonce_, server_nonce_, client_endpoint_), out)) {
        return HandshakeStep::kRejected;
      }
      state_ = State::kFinished;
      return HandshakeStep::kEstablished;
    }
    default:
      throw MalformedFrame("frame in an unexpected connection state");
  }
}

}  // namespace lp
