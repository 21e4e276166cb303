#include "request_arrays.h"

#include "fortran_arguments.h"

namespace lp::mpi_fortran {

RequestArray::RequestArray(MPI_Fint* fortran, int count) : fortran_(fortran), requests_(count > 0 ? count : 0) {
  for (std::size_t i = 0; i < requests_.size(); ++i) requests_[i] = MPI_Request_f2c(fortran_[i]);
}

void RequestArray::write_back() const {
  for (std::size_t i = 0; i < requests_.size(); ++i) fortran_[i] = MPI_Request_c2f(requests_[i]);
}

StatusArray::StatusArray(MPI_Fint* fortran, int count)
    : fortran_(is_sentinel(fortran, &mpi_fortran_statuses_ignore_) ? nullptr : fortran),
      statuses_(fortran_ && count > 0 ? count : 0) {}

void StatusArray::write_back(int filled) const {
  if (!fortran_) return;
  for (int i = 0; i < filled && static_cast<std::size_t>(i) < statuses_.size(); ++i)
    MPI_Status_c2f(&statuses_[i], fortran_ + i * kFortranStatusSize);
}

}  // namespace lp::mpi_fortran
