// Authenticator: the HMAC-SHA256 challenge-response that opens every connection (OpenSSL libcrypto).
//
//   dialler -> acceptor   HELLO     client nonce Nc, dialler's endpoint E
//   acceptor -> dialler   CHALLENGE server nonce Ns
//   dialler -> acceptor   AUTH      HMAC(key, "longpipe client" | Nc | Ns | E)
//   acceptor -> dialler   AUTH      HMAC(key, "longpipe server" | Ns | Nc | E)
//
// Both sides prove the key, over fresh nonces from both (no replay), with different labels (a proof
// cannot be reflected back). Proofs are compared in constant time. Nothing but these frames is
// accepted before the proof is checked; everything after is sealed (frame_cipher.h) and begins with
// IDENTIFY, which proves which process of the job is speaking (identity_token).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "security/frame_cipher.h"

namespace lp {

class Authenticator {
 public:
  // There is no default key: an empty one throws ConfigError (an engine without a key neither
  // dials nor accepts).
  explicit Authenticator(const std::string& key);

  // kNonceSize bytes from the OpenSSL CSPRNG.
  static std::vector<std::byte> make_nonce();

  std::vector<std::byte> client_proof(std::span<const std::byte> client_nonce, std::span<const std::byte> server_nonce,
                                      const std::string& client_endpoint) const;
  std::vector<std::byte> server_proof(std::span<const std::byte> client_nonce, std::span<const std::byte> server_nonce,
                                      const std::string& client_endpoint) const;

  // Constant-time comparison of a received proof with the expected one.
  static bool proofs_match(std::span<const std::byte> received, std::span<const std::byte> expected);

  // This engine's identity token for the session with `peer_endpoint`: HMAC-SHA256 of the endpoint
  // under a random secret of this engine (made at construction, never sent). Sent sealed in
  // IDENTIFY on every connection; the peer binds the session to the first one it sees and refuses
  // connections that present another. A key holder can thus not join or replace another peer's
  // session, and a token per peer means no peer learns what would open another peer's sessions.
  std::vector<std::byte> identity_token(const std::string& peer_endpoint) const;

  // The connection's traffic keys from the job key and both nonces (frame_cipher.h).
  TrafficKeys traffic_keys(std::span<const std::byte> client_nonce, std::span<const std::byte> server_nonce,
                           Protection protection) const {
    return derive_traffic_keys(key_, client_nonce, server_nonce, protection);
  }

 private:
  std::vector<std::byte> proof(const char* label, std::span<const std::byte> first, std::span<const std::byte> second,
                               const std::string& endpoint) const;
  std::string key_;
  std::vector<std::byte> identity_secret_;
};

}  // namespace lp
