// Buffers of the site-aware collectives (collectives*.cpp): user data packed into bytes for the
// leaders' LongPipe messages, and scratch memory for elements of any datatype.
#pragma once

#include <cstddef>
#include <vector>

#include "mpi_api.h"

namespace lp::mpi {

// `count` elements of `type` at `buffer`, packed (PMPI_Pack on `comm`: derived types, holes skipped).
inline std::vector<std::byte> pack(const void* buffer, int count, MPI_Datatype type, MPI_Comm comm, int* rc) {
  int size = 0;
  *rc = PMPI_Pack_size(count, type, comm, &size);
  std::vector<std::byte> packed(static_cast<std::size_t>(size));
  if (*rc != MPI_SUCCESS || size == 0) return packed;  // Open MPI refuses a null output buffer
  int position = 0;
  *rc = PMPI_Pack(buffer, count, type, packed.data(), size, &position, comm);
  packed.resize(static_cast<std::size_t>(position));
  return packed;
}

// Appends `count` elements of `type` at `buffer`, packed, to `packed`.
inline int pack_append(const void* buffer, int count, MPI_Datatype type, MPI_Comm comm, std::vector<std::byte>* packed) {
  int size = 0;
  int rc = PMPI_Pack_size(count, type, comm, &size);
  if (rc != MPI_SUCCESS || size == 0) return rc;  // nothing to pack (Open MPI refuses a null buffer)
  const std::size_t start = packed->size();
  packed->resize(start + static_cast<std::size_t>(size));
  int position = 0;
  rc = PMPI_Pack(buffer, count, type, packed->data() + start, size, &position, comm);
  packed->resize(start + static_cast<std::size_t>(position));
  return rc;
}

inline int unpack(const std::byte* packed, std::size_t bytes, void* buffer, int count, MPI_Datatype type,
                  MPI_Comm comm) {
  if (bytes == 0) return MPI_SUCCESS;  // nothing sent (Open MPI refuses a null input buffer)
  int position = 0;
  return PMPI_Unpack(packed, static_cast<int>(bytes), &position, buffer, count, type, comm);
}

inline int unpack(const std::vector<std::byte>& packed, void* buffer, int count, MPI_Datatype type, MPI_Comm comm) {
  return unpack(packed.data(), packed.size(), buffer, count, type, comm);
}

// Memory for `count` elements of `type` (derived types included: true extent, lower bound).
class TypedScratch {
 public:
  TypedScratch(int count, MPI_Datatype type) {
    MPI_Aint lower = 0, extent = 0, true_lower = 0, true_extent = 0;
    PMPI_Type_get_extent(type, &lower, &extent);
    PMPI_Type_get_true_extent(type, &true_lower, &true_extent);
    const MPI_Aint bytes = count > 0 ? true_extent + static_cast<MPI_Aint>(count - 1) * extent : 0;
    storage_.resize(static_cast<std::size_t>(bytes > 0 ? bytes : 1));
    base_ = storage_.data() - true_lower;
  }
  TypedScratch(const TypedScratch&) = delete;
  TypedScratch& operator=(const TypedScratch&) = delete;
  void* base() { return base_; }

 private:
  std::vector<std::byte> storage_;
  std::byte* base_;
};

}  // namespace lp::mpi
