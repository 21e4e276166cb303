// Copying MPI data between a user's buffer and LongPipe's byte strings, for any count up to MPI's
// int limit and any datatype: memcpy where the type's bytes lie in memory in packing order,
// PMPI_Pack / PMPI_Unpack otherwise, in pieces of whole elements so that no single call passes
// 2 GiB (their sizes are int). Sizes are 64-bit throughout.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "mpi_api.h"

namespace lp::mpi {

struct TypeShape {
  MPI_Count size = 0;    // bytes of data per element (PMPI_Type_size_x)
  MPI_Aint extent = 0;   // distance from one element to the next in memory
  bool flat = false;     // the element's data bytes are contiguous from the element's address, in order
};

// Flat: a predefined type without holes (not MPI_DOUBLE_INT and friends), or a contiguous or dup
// type of a flat one, not resized.
TypeShape shape_of(MPI_Datatype type);

// The address of element `index` of a buffer (also MPI_BOTTOM with absolute displacements).
inline const void* element_address(const void* buffer, MPI_Count index, MPI_Aint extent) {
  return reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(buffer) +
                                       static_cast<std::uintptr_t>(index * extent));
}

// A send that cannot go: its MPI error class and why.
class SendError : public std::runtime_error {
 public:
  SendError(int error_class, const std::string& what) : std::runtime_error(what), error_class_(error_class) {}
  int error_class() const { return error_class_; }

 private:
  int error_class_;
};

// Packs elements [first, first + elements) of (buffer, type) into `out`, exactly
// elements * shape.size bytes; throws SendError.
void pack_elements(const void* buffer, MPI_Datatype type, const TypeShape& shape, MPI_Count first,
                   MPI_Count elements, std::byte* out, MPI_Comm comm);

// A packed copy of (buffer, count, type), described as `count` elements of a contiguous type of the
// element's size: sent without the 2 GiB limit of MPI_PACKED's int byte count (Sendrecv_replace).
// Throws SendError.
class PackedCopy {
 public:
  PackedCopy(const void* buffer, int count, MPI_Datatype type, MPI_Comm comm);
  ~PackedCopy();
  PackedCopy(const PackedCopy&) = delete;
  PackedCopy& operator=(const PackedCopy&) = delete;
  const void* data() const { return bytes_.data(); }
  MPI_Datatype type() const { return type_; }

 private:
  std::vector<std::byte> bytes_;
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

// Puts `bytes` received data bytes into (buffer, count, type) (the caller checked they fit). A
// last element only partly received gets those bytes and keeps the rest as it was, as Open MPI
// does. Returns an MPI error code.
int unpack_data(const std::byte* data, std::size_t bytes, void* buffer, MPI_Datatype type, const TypeShape& shape,
                MPI_Comm comm);

}  // namespace lp::mpi
