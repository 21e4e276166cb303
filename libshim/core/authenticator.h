// Authenticator: the HMAC-SHA256 challenge-response that opens every connection (OpenSSL libcrypto).
//
//   dialler -> acceptor   HELLO     client nonce Nc, dialler's endpoint E
//   acceptor -> dialler   CHALLENGE server nonce Ns
//   dialler -> acceptor   AUTH      HMAC(key, "longpipe client" | Nc | Ns | E)
//   acceptor -> dialler   AUTH      HMAC(key, "longpipe server" | Ns | Nc | E)
//
// Both sides prove the key, over fresh nonces from both (no replay), with different labels (a proof
// cannot be reflected back). Proofs are compared in constant time. Nothing but these frames is
// accepted before the proof is checked.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

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

 private:
  std::vector<std::byte> proof(const char* label, std::span<const std::byte> first, std::span<const std::byte> second,
                               const std::string& endpoint) const;
  std::string key_;
};

}  // namespace lp
