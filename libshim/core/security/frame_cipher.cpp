#include "security/frame_cipher.h"

#include <openssl/evp.h>
#include <openssl/kdf.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "wire/wire_frame.h"

namespace lp {
namespace {

constexpr std::size_t kNonceBytes = 12;  // GCM's 96-bit IV: 4 zero bytes | 64-bit sequence
// EVP takes int lengths: longer payloads go through in slices of this size.
constexpr std::size_t kMaxUpdate = std::size_t{1} << 30;

[[noreturn]] void crypto_failure(const char* what) {
  throw std::runtime_error(std::string("OpenSSL ") + what + " failed");
}

const unsigned char* bytes_of(std::span<const std::byte> span) {
  return reinterpret_cast<const unsigned char*>(span.data());
}
unsigned char* bytes_of(std::span<std::byte> span) { return reinterpret_cast<unsigned char*>(span.data()); }

TrafficKey hkdf_sha256(std::string_view job_key, std::span<const std::byte> salt, const std::string& info) {
  std::unique_ptr<EVP_PKEY_CTX, decltype(&EVP_PKEY_CTX_free)> context(EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, nullptr),
                                                                      EVP_PKEY_CTX_free);
  TrafficKey key{};
  std::size_t length = key.size();
  if (!context || EVP_PKEY_derive_init(context.get()) <= 0 ||
      EVP_PKEY_CTX_set_hkdf_md(context.get(), EVP_sha256()) <= 0 ||
      EVP_PKEY_CTX_set1_hkdf_salt(context.get(), bytes_of(salt), static_cast<int>(salt.size())) <= 0 ||
      EVP_PKEY_CTX_set1_hkdf_key(context.get(), reinterpret_cast<const unsigned char*>(job_key.data()),
                                 static_cast<int>(job_key.size())) <= 0 ||
      EVP_PKEY_CTX_add1_hkdf_info(context.get(), reinterpret_cast<const unsigned char*>(info.data()),
                                  static_cast<int>(info.size())) <= 0 ||
      EVP_PKEY_derive(context.get(), reinterpret_cast<unsigned char*>(key.data()), &length) <= 0 ||
      length != key.size()) {
    crypto_failure("HKDF-SHA256");
  }
  return key;
}

void put_u32(std::byte* at, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) at[i] = static_cast<std::byte>(value >> (24 - 8 * i));
}

}  // namespace

const char* protection_name(Protection protection) {
  return protection == Protection::kEncrypt ? "aes-256-gcm" : "aes-256-gmac (integrity only)";
}

TrafficKeys derive_traffic_keys(std::string_view job_key, std::span<const std::byte> client_nonce,
                                std::span<const std::byte> server_nonce, Protection protection) {
  std::vector<std::byte> salt(client_nonce.begin(), client_nonce.end());
  salt.insert(salt.end(), server_nonce.begin(), server_nonce.end());
  const std::string label = std::string("longpipe 2 ") + protection_name(protection);
  return {hkdf_sha256(job_key, salt, label + " dialler->acceptor"),
          hkdf_sha256(job_key, salt, label + " acceptor->dialler")};
}

TrafficKeys derive_datagram_keys(const TrafficKeys& traffic, Protection protection) {
  // Input key = a traffic key, salt = the label: the datagram keys say nothing of the stream keys.
  const std::string label = "longpipe datagram";
  const std::span salt(reinterpret_cast<const std::byte*>(label.data()), label.size());
  auto derive = [&](const TrafficKey& key) {
    return hkdf_sha256(std::string_view(reinterpret_cast<const char*>(key.data()), key.size()), salt,
                       std::string("longpipe 2 datagram ") + protection_name(protection));
  };
  return {derive(traffic.dialler_to_acceptor), derive(traffic.acceptor_to_dialler)};
}

FrameCipher::FrameCipher(const TrafficKey& key, Protection protection, Use use)
    : context_(EVP_CIPHER_CTX_new()), protection_(protection), use_(use) {
  if (context_ == nullptr ||
      EVP_CipherInit_ex(context_, EVP_aes_256_gcm(), nullptr, reinterpret_cast<const unsigned char*>(key.data()),
                        nullptr, use == Use::kSeal ? 1 : 0) != 1) {
    EVP_CIPHER_CTX_free(context_);
    crypto_failure("AES-256-GCM initialisation");
  }
}

FrameCipher::~FrameCipher() { EVP_CIPHER_CTX_free(context_); }

void FrameCipher::set_nonce() {
  unsigned char nonce[kNonceBytes] = {};
  for (int i = 0; i < 8; ++i) nonce[4 + i] = static_cast<unsigned char>(next_sequence_ >> (56 - 8 * i));
  // Only the IV changes: the key schedule set up in the constructor is kept.
  if (EVP_CipherInit_ex(context_, nullptr, nullptr, nullptr, nonce, -1) != 1) crypto_failure("AES-256-GCM nonce");
}

namespace {
// Authenticates (and with `encrypt`, encrypts or decrypts in place) `payload` after `header`.
bool process(EVP_CIPHER_CTX* context, std::span<const std::byte> header, std::span<std::byte> payload, bool encrypt) {
  int length = 0;
  if (EVP_CipherUpdate(context, nullptr, &length, bytes_of(header), static_cast<int>(header.size())) != 1) {
    return false;
  }
  for (std::size_t done = 0; done < payload.size();) {
    const std::size_t slice = std::min(payload.size() - done, kMaxUpdate);
    unsigned char* at = bytes_of(payload) + done;
    // In place: GCM's output may be its input. Integrity only: the payload is more additional data.
    if (EVP_CipherUpdate(context, encrypt ? at : nullptr, &length, at, static_cast<int>(slice)) != 1) return false;
    done += slice;
  }
  return true;
}
}  // namespace

void FrameCipher::seal_frame(std::vector<std::byte>& out, std::size_t frame_start) {
  if (use_ != Use::kSeal) throw std::logic_error("FrameCipher::seal_frame on an opening cipher");
  const std::size_t payload_start = frame_start + kFrameHeaderSize;
  const std::size_t payload_size = out.size() - payload_start;
  put_u32(out.data() + frame_start + 4, static_cast<std::uint32_t>(payload_size + kTagSize));
  out.resize(out.size() + kTagSize);
  set_nonce();
  const std::span<std::byte> frame(out.data() + frame_start, kFrameHeaderSize + payload_size + kTagSize);
  int length = 0;
  unsigned char* tag = bytes_of(frame.subspan(kFrameHeaderSize + payload_size));
  if (!process(context_, frame.first(kFrameHeaderSize), frame.subspan(kFrameHeaderSize, payload_size),
               protection_ == Protection::kEncrypt) ||
      EVP_CipherFinal_ex(context_, tag, &length) != 1 ||
      EVP_CIPHER_CTX_ctrl(context_, EVP_CTRL_AEAD_GET_TAG, static_cast<int>(kTagSize), tag) != 1) {
    crypto_failure("AES-256-GCM seal");
  }
  ++next_sequence_;
}

bool FrameCipher::open(std::span<const std::byte> header, std::span<std::byte> payload,
                       std::span<const std::byte> tag) {
  if (use_ != Use::kOpen) throw std::logic_error("FrameCipher::open on a sealing cipher");
  if (broken_ || tag.size() != kTagSize) return false;
  set_nonce();
  unsigned char expected[kTagSize];
  std::copy(bytes_of(tag), bytes_of(tag) + kTagSize, expected);
  int length = 0;
  const bool authentic = process(context_, header, payload, protection_ == Protection::kEncrypt) &&
                         EVP_CIPHER_CTX_ctrl(context_, EVP_CTRL_AEAD_SET_TAG, static_cast<int>(kTagSize), expected) == 1 &&
                         EVP_CipherFinal_ex(context_, expected, &length) == 1;  // compares in constant time
  if (!authentic) {
    broken_ = true;
    return false;
  }
  ++next_sequence_;
  return true;
}

void FrameCipher::seal_frame_at(std::vector<std::byte>& out, std::size_t frame_start, std::uint64_t sequence) {
  const std::uint64_t implicit = std::exchange(next_sequence_, sequence);
  seal_frame(out, frame_start);
  next_sequence_ = implicit;
}

bool FrameCipher::open_at(std::uint64_t sequence, std::span<const std::byte> header, std::span<std::byte> payload,
                          std::span<const std::byte> tag) {
  // A forged datagram must not break the cipher for the genuine ones: no broken_ state here.
  const std::uint64_t implicit = std::exchange(next_sequence_, sequence);
  const bool was_broken = std::exchange(broken_, false);
  const bool authentic = open(header, payload, tag);
  next_sequence_ = implicit;
  broken_ = was_broken;
  return authentic;
}

}  // namespace lp
