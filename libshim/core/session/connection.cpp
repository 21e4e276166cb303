#include "session/connection.h"

#include <atomic>

namespace lp {
namespace {
std::atomic<std::uint64_t> next_connection_id{1};
// Compact the output buffer once this much of its front has been written.
constexpr std::size_t kCompactThreshold = 1u << 20;
}  // namespace

Connection::Connection(Handshake handshake, Clock::time_point now)
    : last_sent(now),
      last_received(now),
      id_(next_connection_id.fetch_add(1, std::memory_order_relaxed)),
      handshake_(std::move(handshake)), reader_(kMaxHandshakePayload) {}

void Connection::consume(std::size_t count) {
  written_ += count;
  if (written_ == output_.size()) {
    output_.clear();
    written_ = 0;
  } else if (written_ >= kCompactThreshold) {
    output_.erase(output_.begin(), output_.begin() + static_cast<std::ptrdiff_t>(written_));
    written_ = 0;
  }
}

}  // namespace lp
