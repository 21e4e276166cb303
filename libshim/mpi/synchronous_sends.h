// SynchronousSends: the MPI_Ssend / MPI_Issend (and persistent Ssend_init starts) that wait for the
// receiver's acknowledgement, by the 8-byte id their message carries (wire_format.h). The receiver
// returns the id when a receive (or Mrecv) takes the message, never at a probe; the send completes
// only then (request_lifecycle.h: send_complete). MPI-free: FrontEnd keeps one under its mutex_
// (either thread may see the acknowledgement); tests/mpi/request_lifecycle_test.cpp drives it.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace lp::mpi {

template <typename Owner>
class SynchronousSends {
 public:
  // A fresh id for the next synchronous send (never 0, never reused).
  std::uint64_t next_id() { return next_id_++; }
  // The send with `id` waits for its acknowledgement; listed before its message can go, since the
  // acknowledgement may come at once.
  void await(std::uint64_t id, Owner* owner) { awaiting_[id] = owner; }
  // An acknowledgement came: its send, no longer waiting, or nullptr for an id nobody waits for
  // (the send failed, or its acknowledgement came already).
  Owner* acknowledge(std::uint64_t id) {
    auto it = awaiting_.find(id);
    if (it == awaiting_.end()) return nullptr;
    Owner* owner = it->second;
    awaiting_.erase(it);
    return owner;
  }
  // The send failed or never went: no acknowledgement will come.
  void forget(std::uint64_t id) { awaiting_.erase(id); }
  // The sends for which `fails(owner)` holds (their receiver is unreachable) stop waiting; returned
  // for the caller to fail.
  template <typename Pred>
  std::vector<Owner*> remove_if(Pred fails) {
    std::vector<Owner*> removed;
    for (auto it = awaiting_.begin(); it != awaiting_.end();) {
      if (!fails(it->second)) {
        ++it;
        continue;
      }
      removed.push_back(it->second);
      it = awaiting_.erase(it);
    }
    return removed;
  }
  bool waiting(std::uint64_t id) const { return awaiting_.count(id) != 0; }
  std::size_t size() const { return awaiting_.size(); }

 private:
  std::uint64_t next_id_ = 1;
  std::unordered_map<std::uint64_t, Owner*> awaiting_;
};

}  // namespace lp::mpi
