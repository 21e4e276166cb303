// RawPeer: a hand-driven LongPipe dialler for the security tests. It speaks the wire protocol
// frame by frame over a blocking loopback socket, so a test can act as a key holder with any
// claimed endpoint and identity, then send sealed frames that are altered, replayed or unsealed.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "authenticator.h"
#include "wire_frame.h"
#include "frame_cipher.h"

namespace lp::test {

// A blocking TCP connection to 127.0.0.1:port with a receive timeout.
inline int connect_loopback(std::uint16_t port, std::chrono::milliseconds timeout) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    throw std::runtime_error("connect failed");
  }
  timeval limit{static_cast<time_t>(timeout.count() / 1000), static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  return fd;
}

inline std::uint16_t port_of(const std::string& endpoint) {
  return static_cast<std::uint16_t>(std::stoi(endpoint.substr(endpoint.rfind(':') + 1)));
}

class RawPeer {
 public:
  enum class Outcome { kEstablished, kClosedByPeer, kCloseFrame };

  explicit RawPeer(const std::string& server_endpoint, std::chrono::milliseconds timeout = std::chrono::seconds(5))
      : fd_(connect_loopback(port_of(server_endpoint), timeout)), reader_(1u << 24) {}
  ~RawPeer() { ::close(fd_); }
  RawPeer(const RawPeer&) = delete;
  RawPeer& operator=(const RawPeer&) = delete;

  // The dialler's side of the handshake, claiming `claimed_endpoint` and presenting `token`.
  Outcome handshake(const std::string& key, const std::string& claimed_endpoint, std::vector<std::byte> token) {
    const Authenticator authenticator(key);
    const auto client_nonce = Authenticator::make_nonce();
    std::vector<std::byte> out;
    encode_hello(out, client_nonce, 0, Protection::kEncrypt, claimed_endpoint);
    if (!send_bytes(out)) return Outcome::kClosedByPeer;
    auto challenge_frame = next_frame();
    if (!challenge_frame) return Outcome::kClosedByPeer;
    if (challenge_frame->type == FrameType::kClose) return Outcome::kCloseFrame;
    const ChallengeFrame challenge = decode_challenge(challenge_frame->payload);
    const auto keys = derive_traffic_keys(key, client_nonce, challenge.nonce,
                                          stronger(challenge.protection, Protection::kEncrypt));
    sealer_ = std::make_unique<FrameCipher>(keys.dialler_to_acceptor, Protection::kEncrypt, FrameCipher::Use::kSeal);
    opener_ = std::make_unique<FrameCipher>(keys.acceptor_to_dialler, Protection::kEncrypt, FrameCipher::Use::kOpen);
    out.clear();
    encode_fixed(out, FrameType::kAuth, authenticator.client_proof(client_nonce, challenge.nonce, claimed_endpoint));
    const std::size_t identify = out.size();
    encode_fixed(out, FrameType::kIdentify, token);
    sealer_->seal_frame(out, identify);
    if (!send_bytes(out)) return Outcome::kClosedByPeer;
    auto proof = next_frame();
    if (!proof) return Outcome::kClosedByPeer;
    if (proof->type == FrameType::kClose) {
      last_close_ = decode_close(proof->payload);
      return Outcome::kCloseFrame;
    }
    reader_.set_tag_size(kTagSize);
    auto identity = next_frame();
    if (!identity || identity->type != FrameType::kIdentify ||
        !opener_->open(identity->header, identity->payload, identity->tag)) {
      return Outcome::kClosedByPeer;
    }
    return Outcome::kEstablished;
  }

  // A sealed DATA frame (the next in our sealing sequence) carrying an empty message.
  std::vector<std::byte> sealed_data(std::uint64_t sequence) {
    std::vector<std::byte> out;
    encode_data(out, sequence, std::vector<std::byte>(kMessageTrailerSize));
    sealer_->seal_frame(out, 0);
    return out;
  }

  // False if the server had already closed the connection.
  bool send_bytes(const std::vector<std::byte>& bytes) {
    return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
  }

  // True if the server closes the connection before the timeout (frames it sends are skipped).
  bool closed_by_server() {
    std::byte buffer[4096];
    while (true) {
      const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
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
      const ssize_t n = ::recv(fd_, area.data(), area.size(), 0);
      if (n <= 0) return std::nullopt;
      reader_.commit(static_cast<std::size_t>(n));
    }
  }

  int fd_;
  FrameReader reader_;
  std::unique_ptr<FrameCipher> sealer_;
  std::unique_ptr<FrameCipher> opener_;
  CloseFrame last_close_;
};

}  // namespace lp::test
