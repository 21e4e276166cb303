// The interposed neighbourhood collectives (collectives_neighbor.h): MPI_Neighbor_allgather(v),
// MPI_Neighbor_alltoall(v/w) and their MPI_Ineighbor_* forms. While LongPipe is off, one branch and
// the PMPI_* call. A failure goes through guarded_on (interpose.h): reported on stderr, through the
// communicator's error handler, MPI_ERR_INTERN, no request left behind.
#include "collectives_neighbor.h"
#include "interpose.h"

namespace lp::mpi {
namespace {

// guarded_on (interpose.h) with the neighbourhood collectives of this call.
template <typename Call>
int neighbor_call(MPI_Comm comm, const char* function, MPI_Request* request, Call call) {
  return guarded_on(
      comm, function,
      [&](FrontEnd& front_end) {
        NeighborCollectives neighbors(front_end, *collectives);
        return call(neighbors);
      },
      request);
}

bool on() { return collectives != nullptr; }

}  // namespace
}  // namespace lp::mpi

using lp::mpi::neighbor_call;
using lp::mpi::NeighborCollectives;

LP_EXPORT int MPI_Neighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                     int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::on()) return PMPI_Neighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  return neighbor_call(comm, "MPI_Neighbor_allgather", nullptr, [&](NeighborCollectives& n) {
    return n.allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nullptr);
  });
}

LP_EXPORT int MPI_Neighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                      const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                                      MPI_Comm comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::on()) {
    return PMPI_Neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
  }
  return neighbor_call(comm, "MPI_Neighbor_allgatherv", nullptr, [&](NeighborCollectives& n) {
    return n.allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, nullptr);
  });
}

LP_EXPORT int MPI_Neighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::on()) return PMPI_Neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  return neighbor_call(comm, "MPI_Neighbor_alltoall", nullptr, [&](NeighborCollectives& n) {
    return n.alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nullptr);
  });
}

LP_EXPORT int MPI_Neighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                     MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                     const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::on()) {
    return PMPI_Neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                                   comm);
  }
  return neighbor_call(comm, "MPI_Neighbor_alltoallv", nullptr, [&](NeighborCollectives& n) {
    return n.alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, nullptr);
  });
}

LP_EXPORT int MPI_Neighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                     const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                                     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::on()) {
    return PMPI_Neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                                   comm);
  }
  return neighbor_call(comm, "MPI_Neighbor_alltoallw", nullptr, [&](NeighborCollectives& n) {
    return n.alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm,
                       nullptr);
  });
}

LP_EXPORT int MPI_Ineighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                      int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::on()) {
    return PMPI_Ineighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
  }
  return neighbor_call(comm, "MPI_Ineighbor_allgather", request, [&](NeighborCollectives& n) {
    return n.allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
  });
}

LP_EXPORT int MPI_Ineighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                       const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                                       MPI_Comm comm, MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::on()) {
    return PMPI_Ineighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                                     request);
  }
  return neighbor_call(comm, "MPI_Ineighbor_allgatherv", request, [&](NeighborCollectives& n) {
    return n.allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request);
  });
}

LP_EXPORT int MPI_Ineighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                     int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::on()) {
    return PMPI_Ineighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
  }
  return neighbor_call(comm, "MPI_Ineighbor_alltoall", request, [&](NeighborCollectives& n) {
    return n.alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
  });
}

LP_EXPORT int MPI_Ineighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                      MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                      const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                      MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::on()) {
    return PMPI_Ineighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                                    comm, request);
  }
  return neighbor_call(comm, "MPI_Ineighbor_alltoallv", request, [&](NeighborCollectives& n) {
    return n.alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, request);
  });
}

LP_EXPORT int MPI_Ineighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                      const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                                      const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                      MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::on()) {
    return PMPI_Ineighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                                    comm, request);
  }
  return neighbor_call(comm, "MPI_Ineighbor_alltoallw", request, [&](NeighborCollectives& n) {
    return n.alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm,
                       request);
  });
}
