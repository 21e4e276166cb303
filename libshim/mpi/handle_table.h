// HandleTable: LongPipe's own request and message objects, named by handles that Open MPI's can
// never be. Open MPI's handles are pointers to aligned objects (low bit 0); ours are
// (slot << 1) | 1, so telling them apart is one bit test and a LongPipe handle can be stored in an
// MPI_Request / MPI_Message the application owns. Slots are reused; objects never move.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

namespace lp::mpi {

template <typename Object>
class HandleTable {
 public:
  static bool is_ours(std::uintptr_t handle) { return (handle & 1u) != 0; }

  // Stores a new object; returns its handle.
  std::uintptr_t add(std::unique_ptr<Object> object) {
    std::size_t slot;
    if (!free_slots_.empty()) {
      slot = free_slots_.back();
      free_slots_.pop_back();
      slots_[slot] = std::move(object);
    } else {
      slot = slots_.size();
      slots_.push_back(std::move(object));
    }
    ++live_;
    return (static_cast<std::uintptr_t>(slot) << 1) | 1u;
  }

  // The object of a handle of ours; nullptr for a handle that is not (or no longer) in the table.
  Object* get(std::uintptr_t handle) const {
    if (!is_ours(handle)) return nullptr;
    const std::size_t slot = handle >> 1;
    return slot < slots_.size() ? slots_[slot].get() : nullptr;
  }

  void remove(std::uintptr_t handle) {
    const std::size_t slot = handle >> 1;
    if (!is_ours(handle) || slot >= slots_.size() || !slots_[slot]) throw std::invalid_argument("not a live LongPipe handle");
    slots_[slot].reset();
    free_slots_.push_back(slot);
    --live_;
  }

  std::size_t live() const { return live_; }

  template <typename Visit>
  void for_each(Visit visit) const {
    for (std::size_t slot = 0; slot < slots_.size(); ++slot) {
      if (slots_[slot]) visit((static_cast<std::uintptr_t>(slot) << 1) | 1u, *slots_[slot]);
    }
  }

 private:
  std::vector<std::unique_ptr<Object>> slots_;
  std::vector<std::size_t> free_slots_;
  std::size_t live_ = 0;
};

}  // namespace lp::mpi
