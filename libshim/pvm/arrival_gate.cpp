#include "arrival_gate.h"

#include "route_flags.h"

namespace lp::pvm {

void ArrivalGate::admit(Message message) {
  const std::uint32_t source = message.source;
  const auto held = held_.find(source);
  if (held != held_.end()) {  // something earlier from this source waits: stay behind it
    held->second.push_back(std::move(message));
    return;
  }
  if ((message.flags & kFlagAfterPvmdRoute) && !markers_seen_.contains(source)) {
    held_[source].push_back(std::move(message));
    return;
  }
  ready_.push_back(std::move(message));
}

void ArrivalGate::marker_arrived(std::uint32_t source) {
  markers_seen_.insert(source);
  const auto held = held_.find(source);
  if (held == held_.end()) return;
  for (Message& message : held->second) ready_.push_back(std::move(message));
  held_.erase(held);
}

std::optional<Message> ArrivalGate::next_ready() {
  if (ready_.empty()) return std::nullopt;
  Message message = std::move(ready_.front());
  ready_.pop_front();
  return message;
}

std::size_t ArrivalGate::held_count() const {
  std::size_t count = 0;
  for (const auto& [source, queue] : held_) count += queue.size();
  return count;
}

}  // namespace lp::pvm
