// Blocks of the site-aware gathers and scatters (collectives_gather.cpp and their nonblocking forms,
// collectives_nonblocking_data.cpp): addresses of ranks' blocks, packed blocks read in turn, the
// counts and displacements of a fixed-count call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "mpi_api.h"

namespace lp::mpi::blocks {

// `base` + `bytes`, in integer arithmetic: `base` may be MPI_BOTTOM (null) with absolute displacements.
inline void* at(const void* base, MPI_Aint bytes) {
  return reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(base) + static_cast<std::uintptr_t>(bytes));
}

inline MPI_Aint extent_of(MPI_Datatype type) {
  MPI_Aint lower = 0, extent = 0;
  PMPI_Type_get_extent(type, &lower, &extent);
  return extent;
}

// Packed blocks read one after the other.
class PackedReader {
 public:
  PackedReader(const std::byte* data, std::size_t size) : data_(data), size_(static_cast<int>(size)) {}
  int next(void* buffer, int count, MPI_Datatype type, MPI_Comm comm) {
    int type_size = 0;
    PMPI_Type_size(type, &type_size);
    if (count == 0 || type_size == 0) return MPI_SUCCESS;  // an empty block (the message may have no buffer)
    return PMPI_Unpack(data_, size_, &position_, buffer, count, type, comm);
  }

 private:
  const std::byte* data_;
  int size_;
  int position_ = 0;
};

// The counts and displacements of the v-calls for a fixed count per rank.
struct UniformBlocks {
  UniformBlocks(int ranks, int count) {
    for (int rank = 0; rank < ranks; ++rank) {
      counts.push_back(count);
      displacements.push_back(rank * count);
    }
  }
  std::vector<int> counts;
  std::vector<int> displacements;
};

}  // namespace lp::mpi::blocks
