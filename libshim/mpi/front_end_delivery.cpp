// FrontEnd::deliver: a LongPipe message's data into a receive's buffer, and its status (front_end.h).
#include <algorithm>

#include "datatype_io.h"
#include "front_end.h"

namespace lp::mpi {

int FrontEnd::deliver(const std::byte* data, std::uint64_t size, const Envelope& envelope,
                      const CommunicatorInfo* info, void* buffer, int count, MPI_Datatype type, MPI_Comm comm,
                      MPI_Status* status) {
  const TypeShape shape = shape_of(type);
  const auto capacity = static_cast<std::uint64_t>(shape.size) * static_cast<std::uint64_t>(std::max(count, 0));
  const DeliveredSize delivered = delivered_size(size, capacity);
  const std::uint64_t bytes = delivered.bytes;
  int error = delivered.truncated ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
  if (data) {
    const int rc = unpack_data(data, static_cast<std::size_t>(bytes), buffer, type, shape, comm);
    if (rc != MPI_SUCCESS && error == MPI_SUCCESS) error = rc;
  }
  const int source = info ? info->peer_rank_of(envelope.source_world) : envelope.source_world;
  if (status != MPI_STATUS_IGNORE) {
    set_status(status, source, envelope.tag, error, static_cast<MPI_Count>(bytes), false);
  }
  return error;
}

}  // namespace lp::mpi
