// TaskDirectory: task id -> LongPipe endpoint, kept in PVM's own message-box database.
//
// Each LongPipe task publishes one entry named "longpipe:<tid in hex>" with pvm_putinfo() in
// PvmMboxDefault mode: a single instance that only its owner may change and that the pvmds delete
// when the owner exits, so a crashed task leaves no stale entry. A task without an entry does not
// run LongPipe (or has not started yet), and a task whose key fingerprint differs from ours belongs
// to another job key (it was not spawned from our job's tasks); both are reached through the pvmd.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "lib_pvm.h"

namespace lp::pvm {

class TaskDirectory {
 public:
  struct Entry {
    std::string endpoint;
    std::int32_t data_signature = 0;  // the owner's pvmmydsig: raw data is only exchanged alike
    std::string key_fingerprint;      // of the owner's job key: only tasks that share it use LongPipe
  };

  explicit TaskDirectory(const LibPvm& lib) : lib_(lib) {}

  // Throws std::runtime_error if the pvmd refuses the entry.
  void publish(int tid, const Entry& entry);
  // One round trip to the pvmd holding the database. nullopt if there is no entry.
  std::optional<Entry> lookup(int tid);
  void withdraw(int tid);

  static std::string entry_name(int tid);

  // An entry's contents, also what a hello carries: packed into the current send buffer, unpacked
  // from the current receive buffer (nullopt if malformed).
  static void pack(const LibPvm& lib, const Entry& entry);
  static std::optional<Entry> unpack(const LibPvm& lib);

 private:
  const LibPvm& lib_;
};

}  // namespace lp::pvm
