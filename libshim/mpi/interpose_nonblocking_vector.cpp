// The interposed MPI_Igatherv, MPI_Ialltoallv, MPI_Ialltoallw, MPI_Iscan and MPI_Iexscan
// (collectives.h; collectives_nonblocking_gatherv.cpp, _alltoallw.cpp, _scan.cpp). While LongPipe is
// off, one branch and the PMPI_* call. A failure goes through guarded_on (interpose.h): reported
// on stderr, through the communicator's error handler, MPI_ERR_INTERN, no request left behind.
#include "interpose.h"

using lp::mpi::FrontEnd;
using lp::mpi::guarded_on;

LP_EXPORT int MPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm,
                           MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) {
    return PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, request);
  }
  return guarded_on(comm, "MPI_Igatherv", [&](FrontEnd&) {
    return lp::mpi::collectives->igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                                          comm, request);
  }, request);
}

LP_EXPORT int MPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                             void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                             MPI_Comm comm, MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) {
    return PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                           request);
  }
  return guarded_on(comm, "MPI_Ialltoallv", [&](FrontEnd&) {
    return lp::mpi::collectives->ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                                            recvtype, comm, request);
  }, request);
}

LP_EXPORT int MPI_Ialltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                             const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[], const int rdispls[],
                             const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) {
    return PMPI_Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm,
                           request);
  }
  return guarded_on(comm, "MPI_Ialltoallw", [&](FrontEnd&) {
    return lp::mpi::collectives->ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                                            recvtypes, comm, request);
  }, request);
}

LP_EXPORT int MPI_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                        MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) return PMPI_Iscan(sendbuf, recvbuf, count, type, op, comm, request);
  return guarded_on(comm, "MPI_Iscan", [&](FrontEnd&) {
    return lp::mpi::collectives->iscan(sendbuf, recvbuf, count, type, op, comm, request);
  }, request);
}

LP_EXPORT int MPI_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                          MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) return PMPI_Iexscan(sendbuf, recvbuf, count, type, op, comm, request);
  return guarded_on(comm, "MPI_Iexscan", [&](FrontEnd&) {
    return lp::mpi::collectives->iexscan(sendbuf, recvbuf, count, type, op, comm, request);
  }, request);
}
