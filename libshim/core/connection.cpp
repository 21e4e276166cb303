#include "connection.h"

namespace lp {
namespace {
// Compact the output buffer once this much of its front has been written.
constexpr std::size_t kCompactThreshold = 1u << 20;
}  // namespace

Connection::Connection(Handshake handshake, Clock::time_point now)
    : last_sent(now), last_received(now), handshake_(std::move(handshake)), reader_(kMaxHandshakePayload) {}

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
