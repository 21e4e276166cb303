// OutgoingMessage: one MPI message to another site as the engine messages that carry it, produced
// on demand from the caller's buffer (which MPI forbids changing until the send completes). This
// version carries every message whole, as one engine message.
#pragma once

#include <cstdint>

#include "message.h"
#include "mpi_api.h"

namespace lp::mpi {

class OutgoingMessage {
 public:
  // `header`: source, destination, tag, context and flags of the message; `sync_id` is appended to
  // a synchronous one's body (kFlagSynchronous).
  OutgoingMessage(const void* buffer, int count, MPI_Datatype type, MPI_Comm comm, Message header,
                  std::uint64_t sync_id);

  bool done() const { return done_; }
  // The next engine message. Calls PMPI_Pack for a type that is not contiguous (then only the
  // application's thread may call it; for a contiguous type it is a copy, with no MPI call);
  // throws std::runtime_error if packing fails. The constructor calls MPI (application thread).
  Message next();

 private:
  const void* buffer_;
  int count_;
  MPI_Datatype type_;
  MPI_Comm comm_;
  Message header_;
  std::uint64_t sync_id_;
  bool contiguous_ = false;
  int type_size_ = 0;
  bool done_ = false;
};

// Whether `type`'s bytes are contiguous in memory (a predefined type without holes): copied with
// memcpy, no MPI call needed. *type_size is its size.
bool contiguous_type(MPI_Datatype type, int* type_size);

}  // namespace lp::mpi
