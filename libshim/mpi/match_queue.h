// MatchQueue: items waiting to be matched, in arrival (or posting) order. The first item that
// matches wins, which is MPI's non-overtaking rule for one queue. Used for messages that arrived
// over LongPipe before a receive wanted them (unexpected messages). Pure and single-threaded.
#pragma once

#include <cstddef>
#include <deque>
#include <optional>
#include <utility>

#include "envelope.h"

namespace lp::mpi {

template <typename Item>
class MatchQueue {
 public:
  void push(const Envelope& envelope, Item item) { entries_.push_back({envelope, std::move(item)}); }

  // The oldest entry matching `pattern`, left in the queue; nullptr if none.
  const Item* find(const ReceivePattern& pattern, Envelope* envelope = nullptr) const {
    for (const auto& entry : entries_) {
      if (pattern.matches(entry.envelope)) {
        if (envelope) *envelope = entry.envelope;
        return &entry.item;
      }
    }
    return nullptr;
  }

  // Removes and returns the oldest entry matching `pattern`.
  std::optional<std::pair<Envelope, Item>> take(const ReceivePattern& pattern) {
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (pattern.matches(it->envelope)) {
        std::pair<Envelope, Item> taken{it->envelope, std::move(it->item)};
        entries_.erase(it);
        return taken;
      }
    }
    return std::nullopt;
  }

  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }

 private:
  struct Entry {
    Envelope envelope;
    Item item;
  };
  std::deque<Entry> entries_;
};

}  // namespace lp::mpi
