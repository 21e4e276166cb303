#include "outgoing_message.h"

#include <stdexcept>

#include "wire_format.h"

namespace lp::mpi {

bool contiguous_type(MPI_Datatype type, int* type_size) {
  PMPI_Type_size(type, type_size);
  int integers, addresses, datatypes, combiner;
  PMPI_Type_get_envelope(type, &integers, &addresses, &datatypes, &combiner);
  if (combiner != MPI_COMBINER_NAMED) return false;
  MPI_Aint lower, extent;
  PMPI_Type_get_extent(type, &lower, &extent);
  return lower == 0 && extent == *type_size;  // MPI_DOUBLE_INT and friends have holes
}

OutgoingMessage::OutgoingMessage(const void* buffer, int count, MPI_Datatype type, MPI_Comm comm, Message header,
                                 std::uint64_t sync_id)
    : buffer_(buffer), count_(count), type_(type), comm_(comm), header_(std::move(header)), sync_id_(sync_id) {
  contiguous_ = contiguous_type(type, &type_size_);
}

Message OutgoingMessage::next() {
  Message message = header_;
  if (contiguous_) {  // no MPI call: any thread may build it
    const std::size_t bytes = static_cast<std::size_t>(type_size_) * static_cast<std::size_t>(count_);
    message.body.reserve(bytes + kSyncIdSize + kEngineTrailerSpare);
    const auto* data = static_cast<const std::byte*>(buffer_);
    message.body.assign(data, data + bytes);
  } else {
    int packed_size = 0;
    PMPI_Pack_size(count_, type_, comm_, &packed_size);
    message.body.reserve(static_cast<std::size_t>(packed_size) + kSyncIdSize + kEngineTrailerSpare);
    message.body.resize(static_cast<std::size_t>(packed_size));
    int position = 0;
    if (PMPI_Pack(buffer_, count_, type_, message.body.data(), packed_size, &position, comm_) != MPI_SUCCESS) {
      throw std::runtime_error("cannot pack the message");
    }
    message.body.resize(static_cast<std::size_t>(position));
  }
  if (message.flags & kFlagSynchronous) append_sync_id(message.body, sync_id_);
  done_ = true;
  return message;
}

}  // namespace lp::mpi
