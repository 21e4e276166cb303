// FrameCipher: the AEAD that protects every frame after the handshake (OpenSSL libcrypto EVP).
//
// Each connection has a traffic key per direction, by HKDF-SHA256 from the job key and both
// handshake nonces (derive_traffic_keys): no two connections, directions or modes share a key.
// A frame is sealed as
//
//   header (8 bytes, authenticated, in clear) | payload (encrypted in place) | tag [16]
//
// with AES-256-GCM; the header's length counts the tag. The nonce is the frame's sequence number
// in its direction (implicit: 0, 1, 2, ... on the connection), so a replayed, dropped, reordered
// or altered frame fails to open, and a frame cannot be moved to another connection. With
// Protection::kIntegrityOnly (LONGPIPE_ENCRYPTION=off, for links that are already protected) the
// payload stays in clear and is authenticated as additional data (AES-GMAC, RFC 4543's idea).
//
// Sealing and opening work in place and allocate nothing; one FrameCipher serves one direction.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "wire/wire_frame.h"

using EVP_CIPHER_CTX = struct evp_cipher_ctx_st;  // <openssl/evp.h>, kept out of this header

namespace lp {

constexpr std::size_t kTagSize = 16;          // AES-GCM tag
constexpr std::size_t kTrafficKeySize = 32;   // AES-256

const char* protection_name(Protection protection);

using TrafficKey = std::array<std::byte, kTrafficKeySize>;

struct TrafficKeys {
  TrafficKey dialler_to_acceptor;
  TrafficKey acceptor_to_dialler;
};

// HKDF-SHA256 (salt = client nonce | server nonce, input key = the job key, info = a label naming
// the protocol version, the protection mode and the direction). Throws std::runtime_error if
// libcrypto fails.
TrafficKeys derive_traffic_keys(std::string_view job_key, std::span<const std::byte> client_nonce,
                                std::span<const std::byte> server_nonce, Protection protection);

// The datagram carrier's keys of a connection (datagram_wire.h): HKDF-SHA256 of each traffic key
// under the label "longpipe datagram", one per direction as the traffic keys are.
TrafficKeys derive_datagram_keys(const TrafficKeys& traffic, Protection protection);

class FrameCipher {
 public:
  enum class Use { kSeal, kOpen };

  FrameCipher(const TrafficKey& key, Protection protection, Use use);
  ~FrameCipher();
  FrameCipher(const FrameCipher&) = delete;
  FrameCipher& operator=(const FrameCipher&) = delete;

  // Seals (Use::kSeal only) the frame that starts at out[frame_start], header and payload as the
  // encoders wrote them: adds the tag to the header's length, encrypts the payload in place and appends the tag.
  void seal_frame(std::vector<std::byte>& out, std::size_t frame_start);

  // Opens (Use::kOpen only) one received frame in place: `payload` is decrypted, `tag` checked
  // against the header and the expected sequence number. False (and nothing usable in payload) if the frame is not
  // the next one sealed with this key; every later call fails too (the connection must be closed).
  bool open(std::span<const std::byte> header, std::span<std::byte> payload, std::span<const std::byte> tag);

  // Datagrams (datagram_wire.h) are lost and reordered, so their sequence number travels with them
  // and is the nonce: seal or open one frame under `sequence`, leaving the implicit count alone. The
  // caller never seals two frames with one sequence and rejects replays (a ReplayWindow).
  void seal_frame_at(std::vector<std::byte>& out, std::size_t frame_start, std::uint64_t sequence);
  bool open_at(std::uint64_t sequence, std::span<const std::byte> header, std::span<std::byte> payload,
               std::span<const std::byte> tag);

  Protection protection() const { return protection_; }
  std::uint64_t frames() const { return next_sequence_; }

 private:
  void set_nonce();

  EVP_CIPHER_CTX* context_;
  Protection protection_;
  Use use_;
  std::uint64_t next_sequence_ = 0;
  bool broken_ = false;  // an open failed: the sequence is lost for good
};

}  // namespace lp
