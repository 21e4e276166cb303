// RawPeer: a hand-driven LongPipe dialler for the security and fault tests. It runs the engine's
// own dialler handshake (handshake.h) frame by frame over a blocking socket to any "host:port", so
// a test can act as a key holder with any claimed endpoint and identity, then send sealed frames
// that are altered, replayed, cut short, or bytes that are no frames at all. Shared by
// engine_security_test (loopback) and lp-garbage-peer (across the emulated link).
#pragma once

#include <sys/socket.h>
#include <sys/time.h>

#include <cerrno>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "security/authenticator.h"
#include "file_descriptor.h"
#include "security/frame_cipher.h"
#include "security/handshake.h"
#include "wire/host_port.h"
#include "job_key.h"
#include "message.h"
#include "system_call.h"
#include "carrier/tcp/tcp_socket.h"
#include "wire/wire_frame.h"

namespace lp::test {

// A blocking TCP connection to `endpoint` ("host:port") whose receives time out after `timeout`.
inline FileDescriptor connect_blocking(const std::string& endpoint, std::chrono::milliseconds timeout) {
  socklen_t length = 0;
  const sockaddr_storage address = resolve(parse_host_port(endpoint, true), length);
  FileDescriptor fd(SystemCall("socket", ::socket(address.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0)));
  SystemCall("connect to " + endpoint, ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), length));
  const timeval limit{static_cast<time_t>(timeout.count() / 1000), static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
  SystemCall("SO_RCVTIMEO", ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit));
  return fd;
}

// An identity token no engine issued: a process of its own, as far as the server can tell.
inline std::vector<std::byte> random_token() {
  const std::string key = make_job_key();  // 64 random hex digits
  std::vector<std::byte> token(kIdentityTokenSize);
  for (std::size_t i = 0; i < token.size(); ++i) token[i] = static_cast<std::byte>(key[i]);
  return token;
}

class RawPeer {
 public:
  enum class Outcome { kEstablished, kClosedByPeer, kCloseFrame };

  explicit RawPeer(const std::string& server_endpoint, std::chrono::milliseconds timeout = std::chrono::seconds(5))
      : fd_(connect_blocking(server_endpoint, timeout)), timeout_(timeout), reader_(1u << 24) {}
  RawPeer(const RawPeer&) = delete;
  RawPeer& operator=(const RawPeer&) = delete;

  // The dialler's side of the handshake (stream 0, encrypted), claiming `claimed_endpoint` and
  // presenting `token`.
  // `early`: messages sent as DATA (ARQ sequence 0, 1, ...) in the same write as our AUTH and
  // IDENTIFY, before the acceptor's proof (0.5-RTT data, as the engine's first connections do).
  Outcome handshake(const std::string& key, const std::string& claimed_endpoint, std::vector<std::byte> token,
                    const std::vector<Message>& early = {}) {
    authenticator_ = std::make_unique<Authenticator>(key);
    handshake_ = std::make_unique<Handshake>(Handshake::dialler(*authenticator_, claimed_endpoint, 0,
                                                                Authenticator::make_nonce(), Protection::kEncrypt,
                                                                std::move(token), Handshake::Clock::now() + timeout_));
    handshake_->set_carrier_offer(carrier_offer_);
    std::vector<std::byte> out;
    handshake_->start(out);
    bool early_sent = false;
    while (true) {
      if (handshake_->identity_sent() && !early_sent) {
        early_sent = true;
        if (before_identify) before_identify(*handshake_);
        for (std::size_t i = 0; i < early.size(); ++i) {
          const std::size_t start = out.size();
          encode_data(out, i, pack_message(early[i]));
          handshake_->sealer()->seal_frame(out, start);
        }
      }
      if (!send_bytes(out)) return Outcome::kClosedByPeer;
      out.clear();
      auto frame = next_frame();
      if (!frame) return Outcome::kClosedByPeer;
      // As the engine's Connection does: a frame with a tag is opened before the handshake sees it.
      if (!frame->tag.empty() && !handshake_->opener()->open(frame->header, frame->payload, frame->tag)) {
        return Outcome::kClosedByPeer;
      }
      if (frame->type == FrameType::kClose) last_close_ = decode_close(frame->payload);
      const HandshakeStep step = handshake_->on_frame(*frame, out);
      if (handshake_->opener() != nullptr) reader_.set_tag_size(kTagSize);
      if (step == HandshakeStep::kEstablished) return Outcome::kEstablished;
      if (step == HandshakeStep::kRefusedByPeer || step == HandshakeStep::kPeerClosed) return Outcome::kCloseFrame;
      if (step != HandshakeStep::kPending) return Outcome::kClosedByPeer;  // the server's proof was wrong
    }
  }

  // Our carrier offer in IDENTIFY (CarrierOffer::encode(); default tcp, no datagrams).
  void set_carrier_offer(std::uint8_t offer) { carrier_offer_ = offer; }
  // Called once CHALLENGE is answered, before our AUTH and IDENTIFY go (the keys are known then):
  // a test sends datagrams that overtake the IDENTIFY.
  std::function<void(const Handshake&)> before_identify;

  // After handshake(): our next frames, sealed in our sequence (as the engine would send them).
  // A DATA frame carrying an empty message with ARQ sequence `sequence`:
  std::vector<std::byte> sealed_data(std::uint64_t sequence) {
    std::vector<std::byte> out;
    encode_data(out, sequence, std::vector<std::byte>(kMessageTrailerSize));
    handshake_->sealer()->seal_frame(out, 0);
    return out;
  }
  // A KEEPALIVE (delivers nothing to the application):
  std::vector<std::byte> sealed_keepalive() {
    std::vector<std::byte> out;
    encode_keepalive(out);
    handshake_->sealer()->seal_frame(out, 0);
    return out;
  }

  // False if the server had already closed the connection.
  bool send_bytes(const std::vector<std::byte>& bytes) {
    return ::send(fd_.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
  }

  // Closes our side (FIN); the server then sees the end of the stream.
  void close() { fd_.reset(); }
  // Ends our sending (FIN) and keeps reading: the server sees the end of the stream.
  void finish_sending() { ::shutdown(fd_.get(), SHUT_WR); }

  // After handshake(): the type of the server's next frame, opened as the engine would; nothing if
  // the stream ended, a frame did not open, or the receive timed out.
  std::optional<FrameType> next_frame_type() {
    auto frame = next_frame();
    if (!frame || !handshake_->opener()->open(frame->header, frame->payload, frame->tag)) return std::nullopt;
    return frame->type;
  }

  // True if the server closes the connection before the timeout (frames it sends are skipped).
  bool closed_by_server() {
    std::byte buffer[4096];
    while (true) {
      const ssize_t n = ::recv(fd_.get(), buffer, sizeof buffer, 0);
      if (n == 0 || (n < 0 && errno == ECONNRESET)) return true;
      if (n < 0) return false;  // timed out
    }
  }

  const CloseFrame& last_close() const { return last_close_; }

 private:
  std::optional<FrameView> next_frame() {
    while (true) {
      if (auto frame = reader_.next()) return frame;
      auto area = reader_.write_area(4096);
      const ssize_t n = ::recv(fd_.get(), area.data(), area.size(), 0);
      if (n <= 0) return std::nullopt;
      reader_.commit(static_cast<std::size_t>(n));
    }
  }

  FileDescriptor fd_;
  std::chrono::milliseconds timeout_;
  FrameReader reader_;
  std::unique_ptr<Authenticator> authenticator_;  // the handshake refers to it
  std::unique_ptr<Handshake> handshake_;
  CloseFrame last_close_;
  std::uint8_t carrier_offer_ = 0;
};

}  // namespace lp::test
