// ExchangeBlocks: one side (send or receive) of an all-to-all, as the three MPI calls describe it,
// so that one site-path body serves them all: Alltoall(v) give one datatype and displacements in
// its extents; Alltoallw gives a datatype per rank and displacements in bytes.
#pragma once

#include "mpi_api.h"

namespace lp::mpi {

struct ExchangeBlocks {
  const void* base = nullptr;
  const int* counts = nullptr;
  const int* displacements = nullptr;
  MPI_Datatype type = MPI_DATATYPE_NULL;  // Alltoall(v): every block's type
  MPI_Aint extent = 0;                    // ... and its extent
  const MPI_Datatype* types = nullptr;    // Alltoallw: rank r's block's type (displacements in bytes)

  static ExchangeBlocks of_one_type(const void* base, const int* counts, const int* displacements,
                                    MPI_Datatype type) {
    MPI_Aint lower = 0, extent = 0;
    PMPI_Type_get_extent(type, &lower, &extent);
    return {base, counts, displacements, type, extent, nullptr};
  }
  static ExchangeBlocks of_types(const void* base, const int* counts, const int* displacements,
                                 const MPI_Datatype* types) {
    return {base, counts, displacements, MPI_DATATYPE_NULL, 0, types};
  }

  bool per_rank_types() const { return types != nullptr; }
  int count(int rank) const { return counts[rank]; }
  MPI_Datatype type_of(int rank) const { return types ? types[rank] : type; }
  void* at(int rank) const {
    const MPI_Aint offset = types ? static_cast<MPI_Aint>(displacements[rank])
                                  : static_cast<MPI_Aint>(displacements[rank]) * extent;
    return static_cast<char*>(const_cast<void*>(base)) + offset;
  }
};

}  // namespace lp::mpi
