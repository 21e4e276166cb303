// The Fortran entry points of the neighbourhood collectives (../collectives_neighbor.h), in every
// name Open MPI's bindings export, as fortran_entry_points.cpp does for the other calls. The
// Alltoallw forms take displacements of KIND=MPI_ADDRESS_KIND (MPI_Aint, passed through) and one
// datatype per neighbour, converted here: as many as the topology has neighbours on each side.
#include <vector>

#include "fortran_entry_macros.h"

// Open MPI's own (not interposed): the topology queries that size the datatype arrays.
#define MPI_Comm_rank LP_LIBMPI_FUNCTION(MPI_Comm_rank)
#define MPI_Topo_test LP_LIBMPI_FUNCTION(MPI_Topo_test)
#define MPI_Cartdim_get LP_LIBMPI_FUNCTION(MPI_Cartdim_get)
#define MPI_Graph_neighbors_count LP_LIBMPI_FUNCTION(MPI_Graph_neighbors_count)
#define MPI_Dist_graph_neighbors_count LP_LIBMPI_FUNCTION(MPI_Dist_graph_neighbors_count)

namespace lp::mpi_fortran {

// INTEGER(KIND=MPI_ADDRESS_KIND) array in: the same storage as MPI_Aint.
static_assert(sizeof(MPI_Aint) == 8, "MPI_ADDRESS_KIND arrays are passed through as MPI_Aint");
template <>
class Argument<const MPI_Aint*> {
 public:
  explicit Argument(void* fortran) : fortran_(static_cast<const MPI_Aint*>(fortran)) {}
  const MPI_Aint* c() const { return fortran_; }
  void write_back() {}

 private:
  const MPI_Aint* fortran_;
};

namespace {

// How many neighbours send to this process (`in`) and receive from it (`out`); none without a
// topology (Open MPI's call then reports the error).
int degrees(MPI_Comm comm, int* in, int* out) {
  *in = *out = 0;
  int kind = MPI_UNDEFINED;
  int code = MPI_Topo_test(comm, &kind);
  if (code != MPI_SUCCESS) return code;
  if (kind == MPI_CART) {
    int dimensions = 0;
    code = MPI_Cartdim_get(comm, &dimensions);
    *in = *out = 2 * dimensions;
  } else if (kind == MPI_GRAPH) {
    int rank = 0;
    code = MPI_Comm_rank(comm, &rank);
    if (code == MPI_SUCCESS) code = MPI_Graph_neighbors_count(comm, rank, in);
    *out = *in;
  } else if (kind == MPI_DIST_GRAPH) {
    int weighted = 0;
    code = MPI_Dist_graph_neighbors_count(comm, in, out, &weighted);
  }
  return code;
}

std::vector<MPI_Datatype> c_types(FortranTypes types, int count) {
  std::vector<MPI_Datatype> c(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) c[static_cast<std::size_t>(i)] = MPI_Type_f2c(types.handles[i]);
  return c;
}

// The converted type arrays are read when the call starts (LongPipe's exchange keeps its own copy
// of each block's description; Open MPI 4.1's schedules too), so they need not outlive it.
int neighbor_alltoallw(const void* send, const int* send_counts, const MPI_Aint* send_displacements,
                       FortranTypes send_types, void* receive, const int* receive_counts,
                       const MPI_Aint* receive_displacements, FortranTypes receive_types, MPI_Comm comm) {
  int in = 0, out = 0;
  if (const int code = degrees(comm, &in, &out); code != MPI_SUCCESS) return code;
  const std::vector<MPI_Datatype> send_c = c_types(send_types, out), receive_c = c_types(receive_types, in);
  return MPI_Neighbor_alltoallw(send, send_counts, send_displacements, send_c.data(), receive, receive_counts,
                                receive_displacements, receive_c.data(), comm);
}

int ineighbor_alltoallw(const void* send, const int* send_counts, const MPI_Aint* send_displacements,
                        FortranTypes send_types, void* receive, const int* receive_counts,
                        const MPI_Aint* receive_displacements, FortranTypes receive_types, MPI_Comm comm,
                        MPI_Request* request) {
  int in = 0, out = 0;
  if (const int code = degrees(comm, &in, &out); code != MPI_SUCCESS) return code;
  const std::vector<MPI_Datatype> send_c = c_types(send_types, out), receive_c = c_types(receive_types, in);
  return MPI_Ineighbor_alltoallw(send, send_counts, send_displacements, send_c.data(), receive, receive_counts,
                                 receive_displacements, receive_c.data(), comm, request);
}

}  // namespace
}  // namespace lp::mpi_fortran

using namespace lp::mpi_fortran;

LP_FORTRAN_MPI(neighbor_allgather, NEIGHBOR_ALLGATHER, MPI_Neighbor_allgather, 7)
LP_FORTRAN_MPI(neighbor_allgatherv, NEIGHBOR_ALLGATHERV, MPI_Neighbor_allgatherv, 8)
LP_FORTRAN_MPI(neighbor_alltoall, NEIGHBOR_ALLTOALL, MPI_Neighbor_alltoall, 7)
LP_FORTRAN_MPI(neighbor_alltoallv, NEIGHBOR_ALLTOALLV, MPI_Neighbor_alltoallv, 9)
LP_FORTRAN_CALL(neighbor_alltoallw, NEIGHBOR_ALLTOALLW, neighbor_alltoallw, 9)
LP_FORTRAN_MPI(ineighbor_allgather, INEIGHBOR_ALLGATHER, MPI_Ineighbor_allgather, 8)
LP_FORTRAN_MPI(ineighbor_allgatherv, INEIGHBOR_ALLGATHERV, MPI_Ineighbor_allgatherv, 9)
LP_FORTRAN_MPI(ineighbor_alltoall, INEIGHBOR_ALLTOALL, MPI_Ineighbor_alltoall, 8)
LP_FORTRAN_MPI(ineighbor_alltoallv, INEIGHBOR_ALLTOALLV, MPI_Ineighbor_alltoallv, 10)
LP_FORTRAN_CALL(ineighbor_alltoallw, INEIGHBOR_ALLTOALLW, ineighbor_alltoallw, 10)
