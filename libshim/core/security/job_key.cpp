#include "job_key.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "config.h"

namespace lp {
namespace {

constexpr std::size_t kFingerprintBytes = 8;

std::string hex(const unsigned char* bytes, std::size_t count) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(count * 2);
  for (std::size_t i = 0; i < count; ++i) {
    out += digits[bytes[i] >> 4];
    out += digits[bytes[i] & 0x0f];
  }
  return out;
}

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
  throw ConfigError("LONGPIPE_KEY_FILE='" + path + "' is invalid: " + why);
}

}  // namespace

std::string make_job_key() {
  unsigned char random[kJobKeyRandomBytes];
  if (RAND_bytes(random, sizeof random) != 1) throw std::runtime_error("OpenSSL RAND_bytes failed to make a job key");
  return hex(random, sizeof random);
}

std::string key_fingerprint(const std::string& key) {
  static const char label[] = "longpipe key fingerprint";
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(label),
           sizeof label - 1, mac, &length) == nullptr) {
    throw std::runtime_error("OpenSSL HMAC-SHA256 failed");
  }
  return hex(mac, kFingerprintBytes);
}

std::string read_key_file(const std::string& path) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) refuse(path, std::string("cannot stat it: ") + std::strerror(errno));
  if (!S_ISREG(status.st_mode)) refuse(path, "not a regular file");
  if ((status.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    refuse(path, "group or others may access it (chmod 600 it: the key is the job's only secret)");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) refuse(path, "cannot read it");
  std::string key((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!key.empty() && (key.back() == '\n' || key.back() == '\r')) key.pop_back();
  if (key.size() < kMinKeyFileBytes || key.size() > kMaxKeyBytes) {
    refuse(path, "it holds " + std::to_string(key.size()) + " bytes of key; expected " +
                     std::to_string(kMinKeyFileBytes) + " to " + std::to_string(kMaxKeyBytes) +
                     " (e.g. `openssl rand -hex 32 > FILE`)");
  }
  return key;
}

}  // namespace lp
