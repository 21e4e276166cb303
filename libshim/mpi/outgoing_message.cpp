#include "outgoing_message.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace lp::mpi {

OutgoingMessage::OutgoingMessage(const void* buffer, MPI_Count count, MPI_Datatype type, MPI_Comm comm,
                                 const OutgoingEnvelope& envelope, std::size_t max_message)
    : buffer_(buffer), count_(count), type_(type), comm_(comm), envelope_(envelope), shape_(shape_of(type)) {
  if (count < 0 || shape_.size < 0) throw SendError(MPI_ERR_COUNT, "invalid count or datatype size");
  const auto data = static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(shape_.size);
  const auto layout = SegmentLayout::plan(data, envelope.synchronous, max_message);
  if (!layout) {
    throw SendError(MPI_ERR_OTHER, "LONGPIPE_MAX_MESSAGE (" + std::to_string(max_message) +
                                       ") is too small to carry a message of " + std::to_string(data) +
                                       " bytes in segments");
  }
  layout_ = *layout;
}

Message OutgoingMessage::next() {
  const bool first = index_ == 0;
  const std::size_t data = layout_.data_in(index_);
  const std::size_t header = first && layout_.segmented ? kTransferHeaderSize : 0;
  const std::size_t id = first && envelope_.synchronous ? kSyncIdSize : 0;
  Message message;
  message.source = static_cast<std::uint32_t>(envelope_.source_world);
  message.destination = static_cast<std::uint32_t>(envelope_.dest_world);
  message.tag = envelope_.tag;
  message.context = envelope_.context;
  if (first) {
    message.flags = kFlagData | (envelope_.synchronous ? kFlagSynchronous : 0u) |
                    (layout_.segmented ? kFlagSegmented : 0u);
  } else {
    message.flags = kFlagContinuation;
  }
  message.body.reserve(header + data + id + kEngineTrailerSpare);  // the engine adds its trailer in place
  if (header) {
    message.body.resize(header);
    write_segment_header(message.body.data(), layout_.data);
  }
  if (shape_.flat) {  // no zero-filling first: as fast as the single copy it always was
    const auto* from = static_cast<const std::byte*>(buffer_) + produced_;
    message.body.insert(message.body.end(), from, from + data);
    produced_ += data;
  } else {
    message.body.resize(header + data);
    pack_data(message.body.data() + header, data);
  }
  if (id) append_sync_id(message.body, envelope_.sync_id);
  ++index_;
  return message;
}

void OutgoingMessage::pack_data(std::byte* out, std::size_t size) {
  while (size > 0) {
    if (staged_at_ < staged_.size()) {  // the rest of an element packed earlier
      const std::size_t take = std::min(size, staged_.size() - staged_at_);
      std::memcpy(out, staged_.data() + staged_at_, take);
      staged_at_ += take;
      out += take;
      size -= take;
      continue;
    }
    const auto element_size = static_cast<std::size_t>(shape_.size);
    const auto whole = std::min<MPI_Count>(static_cast<MPI_Count>(size / element_size), count_ - element_);
    if (whole > 0) {
      pack_elements(buffer_, type_, shape_, element_, whole, out, comm_);
      element_ += whole;
      out += static_cast<std::size_t>(whole) * element_size;
      size -= static_cast<std::size_t>(whole) * element_size;
      continue;
    }
    if (element_ >= count_) throw SendError(MPI_ERR_INTERN, "message shorter than its layout");
    // An element that does not fit what is left of this segment: packed once, sent in pieces.
    staged_.resize(element_size);
    staged_at_ = 0;
    pack_elements(buffer_, type_, shape_, element_, 1, staged_.data(), comm_);
    ++element_;
  }
}

}  // namespace lp::mpi
