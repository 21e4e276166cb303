#include "task_directory.h"

#include <cstdio>
#include <stdexcept>
#include <vector>

namespace lp::pvm {
namespace {

// Longest endpoint ("host:port") accepted from an entry; anything longer is not LongPipe's.
constexpr int kMaxEndpointBytes = 1024;
constexpr int kMaxFingerprintBytes = 64;

}  // namespace

std::string TaskDirectory::entry_name(int tid) {
  char name[32];
  std::snprintf(name, sizeof name, "longpipe:%x", static_cast<unsigned>(tid));
  return name;
}

void TaskDirectory::pack(const LibPvm& lib, const Entry& entry) {
  int length = static_cast<int>(entry.endpoint.size());
  int signature = entry.data_signature;
  lib.pkint(&length, 1, 1);
  lib.pkbyte(const_cast<char*>(entry.endpoint.data()), length, 1);
  lib.pkint(&signature, 1, 1);
  int fingerprint_length = static_cast<int>(entry.key_fingerprint.size());
  lib.pkint(&fingerprint_length, 1, 1);
  lib.pkbyte(const_cast<char*>(entry.key_fingerprint.data()), fingerprint_length, 1);
}

std::optional<TaskDirectory::Entry> TaskDirectory::unpack(const LibPvm& lib) {
  int length = 0;
  int signature = 0;
  if (lib.upkint(&length, 1, 1) < 0 || length <= 0 || length > kMaxEndpointBytes) return std::nullopt;
  std::vector<char> endpoint(static_cast<std::size_t>(length));
  if (lib.upkbyte(endpoint.data(), length, 1) < 0 || lib.upkint(&signature, 1, 1) < 0) return std::nullopt;
  int fingerprint_length = 0;
  if (lib.upkint(&fingerprint_length, 1, 1) < 0 || fingerprint_length <= 0 || fingerprint_length > kMaxFingerprintBytes) {
    return std::nullopt;
  }
  std::vector<char> fingerprint(static_cast<std::size_t>(fingerprint_length));
  if (lib.upkbyte(fingerprint.data(), fingerprint_length, 1) < 0) return std::nullopt;
  return Entry{std::string(endpoint.begin(), endpoint.end()), signature,
               std::string(fingerprint.begin(), fingerprint.end())};
}

void TaskDirectory::publish(int tid, const Entry& entry) {
  std::string name = entry_name(tid);
  CurrentBuffersGuard guard(lib_);
  const int mid = lib_.mkbuf(PvmDataDefault);
  lib_.setsbuf(mid);
  pack(lib_, entry);
  const int cc = lib_.putinfo(name.data(), mid, PvmMboxDefault);
  lib_.freebuf(mid);
  if (cc < 0) {
    throw std::runtime_error("pvm_putinfo(" + name + ") failed with PVM error " + std::to_string(cc));
  }
}

std::optional<TaskDirectory::Entry> TaskDirectory::lookup(int tid) {
  std::string name = entry_name(tid);
  CurrentBuffersGuard guard(lib_);  // pvm_recvinfo frees the current receive buffer
  const int mid = lib_.recvinfo(name.data(), 0, PvmMboxDefault);
  if (mid <= 0) return std::nullopt;  // PvmNotFound: no LongPipe there
  std::optional<Entry> entry = unpack(lib_);
  lib_.freebuf(mid);
  return entry;
}

void TaskDirectory::withdraw(int tid) {
  std::string name = entry_name(tid);
  CurrentBuffersGuard guard(lib_);
  lib_.delinfo(name.data(), 0, PvmMboxDefault);
}

}  // namespace lp::pvm
