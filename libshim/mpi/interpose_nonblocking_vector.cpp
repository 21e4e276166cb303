// The interposed MPI_Igatherv, MPI_Ialltoallv, MPI_Ialltoallw, MPI_Iscan and MPI_Iexscan
// (collectives.h; collectives_nonblocking_gatherv.cpp, _alltoallw.cpp, _scan.cpp). While LongPipe is
// off, one branch and the PMPI_* call. No exception crosses into C: a failure is reported on
// stderr, goes through the communicator's error handler and returns MPI_ERR_INTERN (no request is
// left behind).
#include <cstdio>
#include <exception>
#include <string>

#include "api_lock.h"
#include "collectives.h"
#include "collectives_neighbor.h"

namespace lp::mpi {
namespace {

template <typename Call>
int nonblocking_call(MPI_Comm comm, const char* function, MPI_Request* request, Call call) {
  const char* what = "unknown error";
  std::string message;
  try {
    return call(*active_collectives());
  } catch (const std::exception& e) {
    message = e.what();
    what = message.c_str();
  } catch (...) {
  }
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "liblongpipe: MPI rank %d: %s: %s\n", rank, function, what);
  std::fflush(stderr);
  if (request) *request = MPI_REQUEST_NULL;
  PMPI_Comm_call_errhandler(comm, MPI_ERR_INTERN);
  return MPI_ERR_INTERN;
}

}  // namespace
}  // namespace lp::mpi

using lp::mpi::active_collectives;
using lp::mpi::nonblocking_call;
using lp::mpi::SiteCollectives;

#define LP_EXPORT extern "C" __attribute__((visibility("default")))

LP_EXPORT int MPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm,
                           MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!active_collectives()) {
    return PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, request);
  }
  return nonblocking_call(comm, "MPI_Igatherv", request, [&](SiteCollectives& c) {
    return c.igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, request);
  });
}

LP_EXPORT int MPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                             void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                             MPI_Comm comm, MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!active_collectives()) {
    return PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                           request);
  }
  return nonblocking_call(comm, "MPI_Ialltoallv", request, [&](SiteCollectives& c) {
    return c.ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, request);
  });
}

LP_EXPORT int MPI_Ialltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                             const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[], const int rdispls[],
                             const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!active_collectives()) {
    return PMPI_Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm,
                           request);
  }
  return nonblocking_call(comm, "MPI_Ialltoallw", request, [&](SiteCollectives& c) {
    return c.ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm,
                        request);
  });
}

LP_EXPORT int MPI_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                        MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!active_collectives()) return PMPI_Iscan(sendbuf, recvbuf, count, type, op, comm, request);
  return nonblocking_call(comm, "MPI_Iscan", request, [&](SiteCollectives& c) {
    return c.iscan(sendbuf, recvbuf, count, type, op, comm, request);
  });
}

LP_EXPORT int MPI_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                          MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!active_collectives()) return PMPI_Iexscan(sendbuf, recvbuf, count, type, op, comm, request);
  return nonblocking_call(comm, "MPI_Iexscan", request, [&](SiteCollectives& c) {
    return c.iexscan(sendbuf, recvbuf, count, type, op, comm, request);
  });
}
