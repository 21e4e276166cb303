// The interposed nonblocking collectives (interpose.h): LongPipe requests across sites
// (collectives_nonblocking*.cpp) while LongPipe is on, PMPI_* otherwise.
#include "interpose.h"

using lp::mpi::FrontEnd;
using lp::mpi::front_end;
using lp::mpi::guarded;
using lp::mpi::guarded_on;
using lp::mpi::SendMode;

// Nonblocking: a LongPipe request whose progress happens in every MPI call that makes LongPipe's
// (collectives_nonblocking.cpp).
LP_EXPORT int MPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) return PMPI_Ibarrier(comm, request);
  return guarded("MPI_Ibarrier", [&](FrontEnd&) { return lp::mpi::collectives->ibarrier(comm, request); });
}

LP_EXPORT int MPI_Ibcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) return PMPI_Ibcast(buf, count, type, root, comm, request);
  return guarded("MPI_Ibcast",
                 [&](FrontEnd&) { return lp::mpi::collectives->ibcast(buf, count, type, root, comm, request); });
}

LP_EXPORT int MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                             MPI_Comm comm, MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) return PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, request);
  return guarded("MPI_Iallreduce", [&](FrontEnd&) {
    return lp::mpi::collectives->iallreduce(sendbuf, recvbuf, count, type, op, comm, request);
  });
}

// Nonblocking with data (collectives_nonblocking_data.cpp, collectives_nonblocking_rooted.cpp,
// collectives_nonblocking_alltoall.cpp, collectives_nonblocking_reduce_scatter.cpp).
LP_EXPORT int MPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                          MPI_Comm comm, MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) return PMPI_Ireduce(sendbuf, recvbuf, count, type, op, root, comm, request);
  return guarded("MPI_Ireduce", [&](FrontEnd&) {
    return lp::mpi::collectives->ireduce(sendbuf, recvbuf, count, type, op, root, comm, request);
  });
}

LP_EXPORT int MPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                          MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) {
    return PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
  }
  return guarded("MPI_Igather", [&](FrontEnd&) {
    return lp::mpi::collectives->igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                                         request);
  });
}

LP_EXPORT int MPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) {
    return PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
  }
  return guarded("MPI_Iscatter", [&](FrontEnd&) {
    return lp::mpi::collectives->iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                                          request);
  });
}

LP_EXPORT int MPI_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                            MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) {
    return PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
  }
  return guarded("MPI_Iscatterv", [&](FrontEnd&) {
    return lp::mpi::collectives->iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                                           comm, request);
  });
}

LP_EXPORT int MPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) {
    return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
  }
  return guarded("MPI_Iallgather", [&](FrontEnd&) {
    return lp::mpi::collectives->iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
  });
}

LP_EXPORT int MPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                              const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                              MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) {
    return PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request);
  }
  return guarded("MPI_Iallgatherv", [&](FrontEnd&) {
    return lp::mpi::collectives->iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                                             comm, request);
  });
}

LP_EXPORT int MPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) {
    return PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
  }
  return guarded("MPI_Ialltoall", [&](FrontEnd&) {
    return lp::mpi::collectives->ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
  });
}

LP_EXPORT int MPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype type,
                                  MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) return PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm, request);
  return guarded("MPI_Ireduce_scatter", [&](FrontEnd&) {
    return lp::mpi::collectives->ireduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm, request);
  });
}

LP_EXPORT int MPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type,
                                        MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) return PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm, request);
  return guarded("MPI_Ireduce_scatter_block", [&](FrontEnd&) {
    return lp::mpi::collectives->ireduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm, request);
  });
}
