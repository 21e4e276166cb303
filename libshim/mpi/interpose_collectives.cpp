// The interposed blocking collectives (interpose.h): two levels across sites (collectives.h) while
// LongPipe is on, PMPI_* otherwise.
#include "interpose.h"

using lp::mpi::FrontEnd;
using lp::mpi::front_end;
using lp::mpi::guarded;
using lp::mpi::guarded_on;
using lp::mpi::SendMode;

// ---- collectives: two levels across sites (collectives.h); PMPI_* for everything else ----

LP_EXPORT int MPI_Barrier(MPI_Comm comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) return PMPI_Barrier(comm);
  return guarded("MPI_Barrier", [&](FrontEnd&) { return lp::mpi::collectives->barrier(comm); });
}

LP_EXPORT int MPI_Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) return PMPI_Bcast(buf, count, type, root, comm);
  return guarded("MPI_Bcast", [&](FrontEnd&) { return lp::mpi::collectives->bcast(buf, count, type, root, comm); });
}

LP_EXPORT int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                         MPI_Comm comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
  return guarded("MPI_Reduce", [&](FrontEnd&) {
    return lp::mpi::collectives->reduce(sendbuf, recvbuf, count, type, op, root, comm);
  });
}

LP_EXPORT int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                            MPI_Comm comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
  return guarded("MPI_Allreduce", [&](FrontEnd&) {
    return lp::mpi::collectives->allreduce(sendbuf, recvbuf, count, type, op, comm);
  });
}

LP_EXPORT int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                         MPI_Datatype recvtype, int root, MPI_Comm comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  return guarded("MPI_Gather", [&](FrontEnd&) {
    return lp::mpi::collectives->gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  });
}

LP_EXPORT int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                          const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) {
    return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
  }
  return guarded("MPI_Gatherv", [&](FrontEnd&) {
    return lp::mpi::collectives->gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                                         comm);
  });
}

LP_EXPORT int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                          MPI_Datatype recvtype, int root, MPI_Comm comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) {
    return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  }
  return guarded("MPI_Scatter", [&](FrontEnd&) {
    return lp::mpi::collectives->scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  });
}

LP_EXPORT int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                           void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) {
    return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
  }
  return guarded("MPI_Scatterv", [&](FrontEnd&) {
    return lp::mpi::collectives->scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                                          comm);
  });
}

LP_EXPORT int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  return guarded("MPI_Allgather", [&](FrontEnd&) {
    return lp::mpi::collectives->allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  });
}

LP_EXPORT int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                             const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) {
    return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
  }
  return guarded("MPI_Allgatherv", [&](FrontEnd&) {
    return lp::mpi::collectives->allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
  });
}

LP_EXPORT int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, MPI_Comm comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  return guarded("MPI_Alltoall", [&](FrontEnd&) {
    return lp::mpi::collectives->alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  });
}

LP_EXPORT int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                            void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                            MPI_Comm comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) {
    return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
  }
  return guarded("MPI_Alltoallv", [&](FrontEnd&) {
    return lp::mpi::collectives->alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                                           recvtype, comm);
  });
}

LP_EXPORT int MPI_Alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                            const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[], const int rdispls[],
                            const MPI_Datatype recvtypes[], MPI_Comm comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) {
    return PMPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm);
  }
  return guarded("MPI_Alltoallw", [&](FrontEnd&) {
    return lp::mpi::collectives->alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                                           recvtypes, comm);
  });
}

LP_EXPORT int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype type,
                                 MPI_Op op, MPI_Comm comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm);
  return guarded("MPI_Reduce_scatter", [&](FrontEnd&) {
    return lp::mpi::collectives->reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm);
  });
}

LP_EXPORT int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type,
                                       MPI_Op op, MPI_Comm comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm);
  return guarded("MPI_Reduce_scatter_block", [&](FrontEnd&) {
    return lp::mpi::collectives->reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm);
  });
}

LP_EXPORT int MPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) return PMPI_Scan(sendbuf, recvbuf, count, type, op, comm);
  return guarded("MPI_Scan",
                 [&](FrontEnd&) { return lp::mpi::collectives->scan(sendbuf, recvbuf, count, type, op, comm); });
}

LP_EXPORT int MPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) return PMPI_Exscan(sendbuf, recvbuf, count, type, op, comm);
  return guarded("MPI_Exscan",
                 [&](FrontEnd&) { return lp::mpi::collectives->exscan(sendbuf, recvbuf, count, type, op, comm); });
}
