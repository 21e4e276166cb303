// What the MPI front end puts in an lp::Message. The engine's trailer carries the envelope:
// source = sender's rank in MPI_COMM_WORLD, destination = receiver's, tag = MPI tag, context = the
// communicator's LongPipe context id, flags = kind. The body is the packed data; a synchronous
// send (MPI_Ssend/Issend) appends an 8-byte id that the receiver returns in an acknowledgement
// once a receive has matched the message.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

namespace lp::mpi {

inline constexpr std::uint32_t kFlagData = 1;         // a point-to-point message
inline constexpr std::uint32_t kFlagSynchronous = 2;  // data whose sender waits for kFlagMatched
inline constexpr std::uint32_t kFlagMatched = 4;      // acknowledgement: body = the send's id
// A message larger than one engine message (segments.h): its first segment (with kFlagData; body =
// total size, data, sync id) and the continuations that follow it from the same source.
inline constexpr std::uint32_t kFlagSegmented = 8;
inline constexpr std::uint32_t kFlagContinuation = 16;
inline constexpr std::size_t kSyncIdSize = sizeof(std::uint64_t);
// Spare capacity a body gets so that the engine adds its 20-byte trailer without copying
// (docs/engine/engine-api.md).
inline constexpr std::size_t kEngineTrailerSpare = 20;

inline void append_sync_id(std::vector<std::byte>& body, std::uint64_t id) {
  const std::size_t at = body.size();
  body.resize(at + kSyncIdSize);
  std::memcpy(body.data() + at, &id, kSyncIdSize);  // both ends are this machine's byte order (same job)
}

// Removes and returns the id a synchronous message carries; false if the body is too short.
inline bool strip_sync_id(std::vector<std::byte>& body, std::uint64_t* id) {
  if (body.size() < kSyncIdSize) return false;
  std::memcpy(id, body.data() + body.size() - kSyncIdSize, kSyncIdSize);
  body.resize(body.size() - kSyncIdSize);
  return true;
}

// ---- the collectives' leader transfers (FrontEnd::send_bytes / receive_bytes) ----
//
// A transfer travels as segments: separate engine messages on one (context, tag), the first body
// starting with the transfer's total size (8 bytes). Why: the engine sends messages above
// LONGPIPE_SMALL_MESSAGE on its bbr stream, which paces a burst after a pause over ~0.29 s whatever
// its size (libshim/core/include/config.h); a collective is exactly such a burst. Segments that fit
// the small-message limit leave at once on the cubic stream (measured on geo, 2 ranks per site,
// Allreduce of 64 KiB: 497 ms per call in one message, 343 ms below the limit), and the receiving
// leader can start on a large transfer before its last byte is in.

// Room left in a segment for the front end's and the engine's own bytes, below the limit.
inline constexpr std::size_t kSegmentHeadroom = 1024;
// Segment size when the engine has no small-message stream (LONGPIPE_STREAMS=1 or
// LONGPIPE_SMALL_MESSAGE=0): large enough that per-message costs vanish.
inline constexpr std::size_t kDefaultSegmentBytes = 256 * 1024;
inline constexpr std::size_t kTransferHeaderSize = sizeof(std::uint64_t);

// The segment size for the engine's LONGPIPE_STREAMS and LONGPIPE_SMALL_MESSAGE.
inline std::size_t transfer_segment_bytes(std::size_t streams, std::size_t small_message) {
  if (streams < 2 || small_message <= 2 * kSegmentHeadroom) return kDefaultSegmentBytes;
  return small_message - kSegmentHeadroom;
}

// `body` cut into segment bodies of at most `segment_bytes` each (the first with the header); an
// empty transfer is one segment holding only the header.
inline std::vector<std::vector<std::byte>> split_transfer(const std::vector<std::byte>& body,
                                                          std::size_t segment_bytes) {
  std::vector<std::vector<std::byte>> segments;
  const std::uint64_t total = body.size();
  std::size_t at = 0;
  do {
    const std::size_t room = segments.empty() ? segment_bytes - kTransferHeaderSize : segment_bytes;
    const std::size_t take = std::min(room, body.size() - at);
    std::vector<std::byte> segment;
    segment.reserve((segments.empty() ? kTransferHeaderSize : 0) + take + kEngineTrailerSpare);
    if (segments.empty()) {
      segment.resize(kTransferHeaderSize);
      std::memcpy(segment.data(), &total, kTransferHeaderSize);  // same job, same byte order
    }
    segment.insert(segment.end(), body.begin() + static_cast<std::ptrdiff_t>(at),
                   body.begin() + static_cast<std::ptrdiff_t>(at + take));
    segments.push_back(std::move(segment));
    at += take;
  } while (at < body.size());
  return segments;
}

// Makes room in `body` for `needed` bytes of a message whose header announced `total`: geometric
// growth, never beyond `total` nor by the header alone. A peer's header is not an allocation size:
// reserving the announced total at once let one bad header (up to 2^64 - 1) abort the process.
inline void grow_for(std::vector<std::byte>& body, std::uint64_t needed, std::uint64_t total) {
  if (body.capacity() >= needed) return;
  const std::uint64_t doubled = std::max<std::uint64_t>(needed, 2 * static_cast<std::uint64_t>(body.capacity()));
  body.reserve(static_cast<std::size_t>(std::min(total, doubled)));
}

// Puts a transfer back together from its segments, in order.
class TransferAssembler {
 public:
  // Takes the next segment; false if it is malformed (a first segment shorter than the header, or
  // more bytes than the header announced).
  bool add(const std::vector<std::byte>& segment) {
    std::size_t at = 0;
    if (!total_) {
      if (segment.size() < kTransferHeaderSize) return false;
      std::uint64_t total = 0;
      std::memcpy(&total, segment.data(), kTransferHeaderSize);
      total_ = total;
      at = kTransferHeaderSize;
    }
    if (body_.size() + (segment.size() - at) > *total_) return false;
    grow_for(body_, body_.size() + (segment.size() - at), *total_);
    body_.insert(body_.end(), segment.begin() + static_cast<std::ptrdiff_t>(at), segment.end());
    return true;
  }
  bool complete() const { return total_ && body_.size() == *total_; }
  std::vector<std::byte> take() { return std::move(body_); }

 private:
  std::optional<std::uint64_t> total_;
  std::vector<std::byte> body_;
};

}  // namespace lp::mpi
