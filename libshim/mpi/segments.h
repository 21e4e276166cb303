// Point-to-point messages larger than one engine message (LONGPIPE_MAX_MESSAGE): how a message is
// cut into segments (SegmentLayout) and put back together (MessageAssembly). Pure: no MPI, no engine.
//
// A message whose data (plus a synchronous send's 8-byte id) fits one engine message travels as one,
// as before. A larger one travels as consecutive engine messages to its destination: the first
// (flags kFlagData | kFlagSegmented, and kFlagSynchronous for Ssend) carries an 8-byte header with the
// message's total data size, the first data bytes and the synchronous id at its end; it alone is
// what matching sees. Continuations (kFlagContinuation) carry data only and belong to the message in
// progress from the same source: the engine keeps per-peer order, and a sender emits one message's
// segments back to back per destination.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

#include "wire_format.h"

namespace lp::mpi {

// Largest engine message a segmented message uses (LONGPIPE_MAX_MESSAGE caps it further): several
// segments then fit the engine's window (LONGPIPE_WINDOW_BYTES, 64 MiB by default), so one is on
// the wire while the next is packed.
inline constexpr std::size_t kMessageSegmentBytes = 16u << 20;

struct SegmentLayout {
  std::uint64_t data = 0;       // the message's data bytes
  bool segmented = false;       // false: one engine message with all the data, as before
  std::size_t first_data = 0;   // data bytes in the first engine message
  std::size_t segment_data = 0; // data bytes in each continuation (the last may hold fewer)

  // How `data` bytes (a synchronous send adds its id) travel through an engine whose largest body
  // is `max_message`; nullopt if that is too small to carry a segment's header and id with data.
  static std::optional<SegmentLayout> plan(std::uint64_t data, bool synchronous, std::size_t max_message) {
    const std::size_t id = synchronous ? kSyncIdSize : 0;
    SegmentLayout layout;
    layout.data = data;
    if (data + id <= max_message) {
      layout.first_data = static_cast<std::size_t>(data);
      return layout;
    }
    const std::size_t segment = std::min(max_message, kMessageSegmentBytes);
    if (segment <= kTransferHeaderSize + id) return std::nullopt;
    layout.segmented = true;
    layout.first_data = segment - kTransferHeaderSize - id;
    layout.segment_data = segment;
    return layout;
  }

  // Engine messages in all.
  std::uint64_t segments() const {
    if (!segmented) return 1;
    return 1 + (data - first_data + segment_data - 1) / segment_data;
  }
  // Data bytes in engine message `index` (0 = the first).
  std::size_t data_in(std::uint64_t index) const {
    if (index == 0) return first_data;
    const std::uint64_t begin = first_data + (index - 1) * segment_data;
    return static_cast<std::size_t>(std::min<std::uint64_t>(segment_data, data - begin));
  }
};

inline void write_segment_header(std::byte* at, std::uint64_t total) {
  std::memcpy(at, &total, kTransferHeaderSize);  // same job, same byte order
}

// One segmented message being received: the data of its segments, in order, kept until a receive
// takes it, or written straight into that receive's buffer once redirect() named it.
class MessageAssembly {
 public:
  // From the first segment's body (its synchronous id already stripped); nullopt if it is shorter
  // than the header or holds more data than the header announces.
  static std::optional<MessageAssembly> start(std::vector<std::byte> first) {
    if (first.size() < kTransferHeaderSize) return std::nullopt;
    MessageAssembly assembly;
    std::memcpy(&assembly.total_, first.data(), kTransferHeaderSize);
    first.erase(first.begin(), first.begin() + kTransferHeaderSize);
    if (first.size() > assembly.total_) return std::nullopt;
    assembly.received_ = first.size();
    assembly.kept_ = std::move(first);
    return assembly;
  }

  // The next data bytes (a continuation's body). False if they go past the announced total (the
  // excess is dropped).
  bool add(std::span<const std::byte> data) {
    const std::uint64_t room = total_ - received_;
    const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(room, data.size()));
    if (redirected_) {
      write(received_, data.data(), take);
    } else {
      grow_for(kept_, received_ + take, total_);
      kept_.insert(kept_.end(), data.begin(), data.begin() + static_cast<std::ptrdiff_t>(take));
    }
    received_ += take;
    return take == data.size();
  }

  // From now on data goes to [sink, sink + capacity): what is kept so far is copied there and
  // released; bytes past `capacity` are dropped (a truncated receive).
  void redirect(std::byte* sink, std::size_t capacity) {
    sink_ = sink;
    capacity_ = capacity;
    redirected_ = true;
    write(0, kept_.data(), kept_.size());
    std::vector<std::byte>().swap(kept_);
  }

  bool complete() const { return received_ == total_; }
  bool redirected() const { return redirected_; }
  std::uint64_t total() const { return total_; }
  std::uint64_t received() const { return received_; }
  // The kept data (not redirected): the whole message once complete.
  std::vector<std::byte> take() { return std::move(kept_); }

 private:
  MessageAssembly() = default;
  void write(std::uint64_t at, const std::byte* data, std::size_t size) {
    if (at >= capacity_ || size == 0) return;
    std::memcpy(sink_ + at, data, static_cast<std::size_t>(std::min<std::uint64_t>(size, capacity_ - at)));
  }

  std::uint64_t total_ = 0;
  std::uint64_t received_ = 0;
  std::vector<std::byte> kept_;
  bool redirected_ = false;
  std::byte* sink_ = nullptr;
  std::size_t capacity_ = 0;
};

}  // namespace lp::mpi
