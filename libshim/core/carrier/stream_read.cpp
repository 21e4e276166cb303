#include "carrier/stream_read.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "wire/wire_frame.h"

namespace lp {
namespace {

// Smallest read: enough for many small frames per system call.
constexpr std::size_t kReadChunk = 256u << 10;
// One recv() of bytes dropped unread: small enough for the stack.
constexpr std::size_t kDiscardChunk = 16u << 10;

}  // namespace

IoStatus read_stream(int fd, FrameReader& reader, std::size_t budget, std::size_t& bytes_read, std::string& error) {
  for (std::size_t taken = 0; taken < budget;) {
    const std::size_t want = std::min(kReadChunk, budget - taken);
    auto area = reader.write_area(want);
    const ssize_t n = ::recv(fd, area.data(), std::min(area.size(), want), 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return IoStatus::kOk;
      error = std::string("recv: ") + std::strerror(errno);
      return IoStatus::kError;
    }
    if (n == 0) return IoStatus::kEndOfStream;
    reader.commit(static_cast<std::size_t>(n));
    taken += static_cast<std::size_t>(n);
    bytes_read += static_cast<std::size_t>(n);
    if (static_cast<std::size_t>(n) < want) return IoStatus::kOk;  // drained
  }
  return IoStatus::kOk;
}

IoStatus discard_stream(int fd, std::size_t budget) {
  std::byte dropped[kDiscardChunk];
  for (std::size_t total = 0; total < budget;) {
    const ssize_t n = ::recv(fd, dropped, sizeof dropped, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno == EAGAIN || errno == EWOULDBLOCK ? IoStatus::kOk : IoStatus::kError;
    }
    if (n == 0) return IoStatus::kEndOfStream;
    total += static_cast<std::size_t>(n);
  }
  return IoStatus::kOk;
}

}  // namespace lp
