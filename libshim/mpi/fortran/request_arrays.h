// The array arguments of Waitall/Testall/Waitany/Testany/Waitsome/Testsome/Startall: Fortran
// request handles and statuses converted to C arrays for the call and back afterwards.
#pragma once

#include "mpi_for_fortran.h"

#include <cstddef>
#include <vector>

namespace lp::mpi_fortran {

// Open MPI's Fortran MPI_STATUS_SIZE: its C MPI_Status counted in INTEGERs (6).
inline constexpr std::size_t kFortranStatusSize = sizeof(MPI_Status) / sizeof(MPI_Fint);

// `count` Fortran request handles as C requests; write_back() stores them back (completed ones
// have become MPI_REQUEST_NULL, persistent ones keep their handle).
class RequestArray {
 public:
  RequestArray(MPI_Fint* fortran, int count);
  MPI_Request* data() { return requests_.data(); }
  void write_back() const;

 private:
  MPI_Fint* fortran_;
  std::vector<MPI_Request> requests_;
};

// A Fortran status array (or MPI_STATUSES_IGNORE) of `count` statuses as a C one.
class StatusArray {
 public:
  StatusArray(MPI_Fint* fortran, int count);
  MPI_Status* data() { return fortran_ ? statuses_.data() : MPI_STATUSES_IGNORE; }
  // Converts the first `filled` statuses into the Fortran array.
  void write_back(int filled) const;

 private:
  MPI_Fint* fortran_;
  std::vector<MPI_Status> statuses_;
};

}  // namespace lp::mpi_fortran
