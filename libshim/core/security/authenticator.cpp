#include "security/authenticator.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <cstring>
#include <stdexcept>

#include "config.h"
#include "wire/wire_frame.h"

namespace lp {

Authenticator::Authenticator(const std::string& key) : key_(key), identity_secret_(make_nonce()) {
  if (key_.empty()) {
    throw ConfigError(
        "no job key: set LONGPIPE_KEY or LONGPIPE_KEY_FILE (the same in every process of the job; the PVM and MPI "
        "front ends make one per job when neither is set)");
  }
}

std::vector<std::byte> Authenticator::make_nonce() {
  std::vector<std::byte> nonce(kNonceSize);
  if (RAND_bytes(reinterpret_cast<unsigned char*>(nonce.data()), static_cast<int>(nonce.size())) != 1) {
    throw std::runtime_error("OpenSSL RAND_bytes failed to produce a nonce");
  }
  return nonce;
}

std::vector<std::byte> Authenticator::proof(const char* label, std::span<const std::byte> first,
                                            std::span<const std::byte> second, const std::string& endpoint) const {
  std::vector<unsigned char> input;
  input.insert(input.end(), label, label + std::strlen(label) + 1);  // with its NUL: unambiguous
  auto append = [&](std::span<const std::byte> bytes) {
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    input.insert(input.end(), p, p + bytes.size());
  };
  append(first);
  append(second);
  input.insert(input.end(), endpoint.begin(), endpoint.end());

  std::vector<std::byte> mac(EVP_MAX_MD_SIZE);
  unsigned int length = 0;
  if (HMAC(EVP_sha256(), key_.data(), static_cast<int>(key_.size()), input.data(), input.size(),
           reinterpret_cast<unsigned char*>(mac.data()), &length) == nullptr ||
      length != kMacSize) {
    throw std::runtime_error("OpenSSL HMAC-SHA256 failed");
  }
  mac.resize(length);
  return mac;
}

std::vector<std::byte> Authenticator::client_proof(std::span<const std::byte> client_nonce,
                                                   std::span<const std::byte> server_nonce,
                                                   const std::string& client_endpoint) const {
  return proof("longpipe client", client_nonce, server_nonce, client_endpoint);
}

std::vector<std::byte> Authenticator::server_proof(std::span<const std::byte> client_nonce,
                                                   std::span<const std::byte> server_nonce,
                                                   const std::string& client_endpoint) const {
  return proof("longpipe server", server_nonce, client_nonce, client_endpoint);
}

std::vector<std::byte> Authenticator::identity_token(const std::string& peer_endpoint) const {
  static const char label[] = "longpipe identity";  // with its NUL, as in proof()
  std::vector<unsigned char> input(label, label + sizeof label);
  input.insert(input.end(), peer_endpoint.begin(), peer_endpoint.end());
  std::vector<std::byte> token(EVP_MAX_MD_SIZE);
  unsigned int length = 0;
  if (HMAC(EVP_sha256(), identity_secret_.data(), static_cast<int>(identity_secret_.size()), input.data(),
           input.size(), reinterpret_cast<unsigned char*>(token.data()), &length) == nullptr ||
      length != kIdentityTokenSize) {
    throw std::runtime_error("OpenSSL HMAC-SHA256 failed");
  }
  token.resize(length);
  return token;
}

bool Authenticator::proofs_match(std::span<const std::byte> received, std::span<const std::byte> expected) {
  return received.size() == expected.size() && CRYPTO_memcmp(received.data(), expected.data(), expected.size()) == 0;
}

}  // namespace lp
