// ArrivalGate: the receiving side of PeerRoutes' route switch.
//
// Messages from the engine are admitted in arrival order. A message flagged kFlagAfterPvmdRoute is
// held, with everything after it from the same source, until that source's route marker has come
// through the pvmd: at that moment every message the source sent through the pvmd before switching
// is already in libpvm3's receive queue, so releasing the held ones keeps the pair's order.
// Pure state, no I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "message.h"

namespace lp::pvm {

class ArrivalGate {
 public:
  void admit(Message message);
  void marker_arrived(std::uint32_t source);

  // The next message that may be delivered, in admission order (per source), or nullopt.
  std::optional<Message> next_ready();

  std::size_t held_count() const;
  // Everything admitted and not yet taken: held plus ready. The front end stops taking messages
  // from the engine while this is at its bound, so the engine's own bounded queue fills instead.
  std::size_t size() const { return held_count() + ready_.size(); }
  bool has_ready() const { return !ready_.empty(); }

 private:
  std::unordered_set<std::uint32_t> markers_seen_;
  std::unordered_map<std::uint32_t, std::deque<Message>> held_;
  std::deque<Message> ready_;
};

}  // namespace lp::pvm
