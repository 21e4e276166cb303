#include "connection.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace lp {
namespace {
// Largest single read: enough for many small frames per system call. Reads are never larger than
// the caller's budget, so a connection that has not authenticated buffers at most its budget.
constexpr std::size_t kReadChunk = 256u << 10;
// Compact the output buffer once this much of its front has been written.
constexpr std::size_t kCompactThreshold = 1u << 20;
}  // namespace

Connection::Connection(FileDescriptor fd, bool outgoing, Clock::time_point now)
    : last_sent(now), fd_(std::move(fd)), outgoing_(outgoing), reader_(kMaxHandshakePayload) {}

void Connection::set_traffic_keys(const TrafficKeys& keys, Protection protection) {
  keys_ = keys;
  protection_ = protection;
}

void Connection::start_sealing() {
  sealer_ = std::make_unique<FrameCipher>(outgoing_ ? keys_->dialler_to_acceptor : keys_->acceptor_to_dialler,
                                          protection_, FrameCipher::Use::kSeal);
  if (opener_) keys_.reset();
}

void Connection::start_opening() {
  opener_ = std::make_unique<FrameCipher>(outgoing_ ? keys_->acceptor_to_dialler : keys_->dialler_to_acceptor,
                                          protection_, FrameCipher::Use::kOpen);
  reader_.set_tag_size(kTagSize);
  if (sealer_) keys_.reset();
}

IoStatus Connection::write_pending(std::string& error) {
  if (state == ConnectionState::kEstablished && pending_output() > 0) fall_back_if_unsuited(fd_.get(), tuning);
  while (written_ < output_.size()) {
    const ssize_t n = ::send(fd_.get(), output_.data() + written_, output_.size() - written_, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      error = std::string("send: ") + std::strerror(errno);
      return IoStatus::kError;
    }
    written_ += static_cast<std::size_t>(n);
  }
  if (written_ == output_.size()) {
    output_.clear();
    written_ = 0;
  } else if (written_ >= kCompactThreshold) {
    output_.erase(output_.begin(), output_.begin() + static_cast<std::ptrdiff_t>(written_));
    written_ = 0;
  }
  return IoStatus::kOk;
}

IoStatus Connection::read_available(std::size_t budget, std::string& error, std::size_t& bytes_read) {
  bytes_read = 0;
  while (bytes_read < budget) {
    auto area = reader_.write_area(std::min(kReadChunk, budget - bytes_read));
    const ssize_t n = ::recv(fd_.get(), area.data(), area.size(), 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return IoStatus::kOk;
      error = std::string("recv: ") + std::strerror(errno);
      return IoStatus::kError;
    }
    if (n == 0) return IoStatus::kEndOfStream;
    reader_.commit(static_cast<std::size_t>(n));
    bytes_read += static_cast<std::size_t>(n);
    if (static_cast<std::size_t>(n) < area.size()) return IoStatus::kOk;  // drained
  }
  return IoStatus::kOk;
}

}  // namespace lp
