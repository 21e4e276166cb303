// The neighbourhood collectives (MPI_Neighbor_allgather(v), MPI_Neighbor_alltoall(v/w) and their
// MPI_Ineighbor_* forms) on Cartesian, graph and distributed-graph communicators whose ranks span
// sites: one exchange of point-to-point messages, each process's blocks to its neighbours, on the
// communicator's private collective context. A neighbour at another site gets its blocks through
// LongPipe's engine (one transfer per neighbouring process, all its blocks in it); a neighbour at
// the same site through Open MPI (PMPI_Isend/PMPI_Irecv on the site sub-communicator). Every call
// is a LongPipe request (FrontEnd::start_collective); a blocking call waits for it at once.
// Everything else (a communicator without topology, one site, LONGPIPE_COLLECTIVES=native, a
// communicator LongPipe does not know) goes to PMPI_* unchanged. docs/mpi-collectives.md.
#pragma once

#include "collectives.h"
#include "front_end.h"
#include "mpi_api.h"

namespace lp::mpi {

class NeighborCollectives {
 public:
  NeighborCollectives(FrontEnd& front_end, SiteCollectives& collectives)
      : front_end_(front_end), collectives_(collectives) {}

  // `request` null: the blocking form (returns once complete); otherwise the nonblocking one.
  int allgather(const void* send, int send_count, MPI_Datatype send_type, void* receive, int receive_count,
                MPI_Datatype receive_type, MPI_Comm comm, MPI_Request* request);
  int allgatherv(const void* send, int send_count, MPI_Datatype send_type, void* receive, const int receive_counts[],
                 const int displacements[], MPI_Datatype receive_type, MPI_Comm comm, MPI_Request* request);
  int alltoall(const void* send, int send_count, MPI_Datatype send_type, void* receive, int receive_count,
               MPI_Datatype receive_type, MPI_Comm comm, MPI_Request* request);
  int alltoallv(const void* send, const int send_counts[], const int send_displacements[], MPI_Datatype send_type,
                void* receive, const int receive_counts[], const int receive_displacements[], MPI_Datatype receive_type,
                MPI_Comm comm, MPI_Request* request);
  // Displacements in bytes (MPI_Aint), a datatype per neighbour.
  int alltoallw(const void* send, const int send_counts[], const MPI_Aint send_displacements[],
                const MPI_Datatype send_types[], void* receive, const int receive_counts[],
                const MPI_Aint receive_displacements[], const MPI_Datatype receive_types[], MPI_Comm comm,
                MPI_Request* request);

 private:
  FrontEnd& front_end_;
  SiteCollectives& collectives_;
};

}  // namespace lp::mpi
