#include "carrier/datagram/datagram_pen.h"

namespace lp {

bool DatagramPen::hold(const DatagramAddress& from, std::span<const std::byte> bytes, std::int64_t arrival_ns,
                       Clock::time_point now) {
  expire(now);
  if (held_.size() >= kMaxDatagrams || bytes_ + bytes.size() > kMaxBytes) {
    ++counters_.overflowed;  // the newest goes: what is held is an in-order prefix of a flight
    return false;
  }
  held_.push_back({from, now, arrival_ns, std::vector<std::byte>(bytes.begin(), bytes.end())});
  bytes_ += bytes.size();
  ++counters_.held;
  return true;
}

std::vector<DatagramPen::Released> DatagramPen::release(const DatagramAddress& from, Clock::time_point now) {
  expire(now);
  std::vector<Released> released;
  std::deque<Held> kept;
  for (Held& held : held_) {
    if (held.from == from) {
      bytes_ -= held.bytes.size();
      released.push_back({std::move(held.bytes), held.arrival_ns});
    } else {
      kept.push_back(std::move(held));
    }
  }
  held_ = std::move(kept);
  counters_.released += released.size();
  return released;
}

void DatagramPen::expire(Clock::time_point now) {
  while (!held_.empty() && now - held_.front().arrived >= kHoldTime) {
    bytes_ -= held_.front().bytes.size();
    held_.pop_front();
    ++counters_.expired;
  }
}

}  // namespace lp
