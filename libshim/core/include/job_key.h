// The job key: the one secret every process of a job shares (LONGPIPE_KEY, LONGPIPE_KEY_FILE, or
// made by the front end when neither is set and handed to the job's processes over the job's own
// channel: PVM's spawn environment, MPI's start-up exchange). Every session proves it and derives
// its traffic keys from it (authenticator.h, frame_cipher.h).
#pragma once

#include <string>

namespace lp {

// Bytes of randomness in a key made by make_job_key (256 bits).
constexpr std::size_t kJobKeyRandomBytes = 32;
// A key file (LONGPIPE_KEY_FILE) must hold at least this many bytes: a key short enough to guess
// would protect nothing.
constexpr std::size_t kMinKeyFileBytes = 16;
constexpr std::size_t kMaxKeyBytes = 4096;

// kJobKeyRandomBytes from the OpenSSL CSPRNG, as lowercase hex (an environment variable's value).
// Throws std::runtime_error if the CSPRNG fails.
std::string make_job_key();

// A public name of the key (16 hex digits of HMAC-SHA256(key, label)): processes compare it to
// learn whether they share a key without revealing it.
std::string key_fingerprint(const std::string& key);

// The key in `path` (trailing newlines removed). Refuses, with a ConfigError naming
// LONGPIPE_KEY_FILE, a file that is missing, unreadable, not a regular file, readable or writable
// by group or others (like ssh's private keys), or shorter than kMinKeyFileBytes.
std::string read_key_file(const std::string& path);

}  // namespace lp
