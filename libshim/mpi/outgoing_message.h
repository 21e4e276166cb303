// OutgoingMessage: one MPI message to another site, as the engine messages that carry it, each
// built from the caller's buffer only when asked for (next()). A message that fits one engine
// message (LONGPIPE_MAX_MESSAGE) is one, exactly as before; a larger one is segments (segments.h),
// to be sent back to back to its destination. Nothing is copied up front: each next() copies
// (memcpy, for a flat type) or packs (a range of whole elements) only its own segment, so the
// caller's buffer must stay as it is until done().
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "datatype_io.h"
#include "message.h"
#include "mpi_api.h"
#include "segments.h"

namespace lp::mpi {

struct OutgoingEnvelope {
  int source_world = 0;  // sender's rank in MPI_COMM_WORLD
  int dest_world = 0;    // receiver's
  int tag = 0;
  int context = 0;       // the communicator's LongPipe context id
  bool synchronous = false;
  std::uint64_t sync_id = 0;  // synchronous: returned in the receiver's acknowledgement of the match
};

class OutgoingMessage {
 public:
  // Throws SendError if the engine's `max_message` cannot carry a segment.
  OutgoingMessage(const void* buffer, MPI_Count count, MPI_Datatype type, MPI_Comm comm,
                  const OutgoingEnvelope& envelope, std::size_t max_message);

  bool done() const { return index_ == layout_.segments(); }  // every engine message has been produced
  // The next engine message (segment), built from the caller's buffer now; throws SendError. For a
  // flat type it is a copy with no MPI call (any thread may build it); otherwise it calls PMPI_Pack
  // (the application's thread only). The constructor calls MPI (application thread).
  Message next();
  bool flat() const { return shape_.flat; }

  std::uint64_t data_bytes() const { return layout_.data; }
  std::uint64_t segments() const { return layout_.segments(); }

 private:
  // Packs the message's next `size` data bytes to `out` (types that are not flat).
  void pack_data(std::byte* out, std::size_t size);

  const void* buffer_;
  MPI_Count count_;
  MPI_Datatype type_;
  MPI_Comm comm_;
  OutgoingEnvelope envelope_;
  TypeShape shape_;
  SegmentLayout layout_;
  std::uint64_t index_ = 0;     // engine messages produced
  std::uint64_t produced_ = 0;  // data bytes produced (flat types)
  MPI_Count element_ = 0;       // next element to pack (other types)
  std::vector<std::byte> staged_;  // one packed element larger than what was left of a segment
  std::size_t staged_at_ = 0;      // ... and how much of it is sent
};

}  // namespace lp::mpi
