// A process's neighbours in its communicator's virtual topology, in the order MPI's neighbourhood
// collectives use them, and how the messages between neighbours pair up with the receive blocks.
#pragma once

#include <vector>

#include "mpi_api.h"

namespace lp::mpi {

struct Neighbors {
  // Receive block k comes from sources[k]; send block s goes to destinations[s] (MPI_PROC_NULL:
  // none, the block is left alone). Cartesian: per dimension the -1 then the +1 neighbour of
  // MPI_Cart_shift (both lists); graph: MPI_Graph_neighbors (both); distributed graph: the sources
  // and destinations as given, repeated ones included.
  std::vector<int> sources;
  std::vector<int> destinations;
  // The receive blocks in the order the messages of one source fill them. Every process sends its
  // blocks in block order, so the n-th message from a source fills the n-th of its blocks in this
  // order. Graphs: block order (repeated edges pair up in order). Cartesian: per dimension the +1
  // block first, since a neighbour's send to its -1 side (its first) arrives on the receiver's +1
  // side; this matters when both sides of a dimension are one process (a periodic dimension of
  // size 1 or 2).
  std::vector<int> receive_order;
};

// The neighbours of the calling process in `comm`; false if it has no topology (or a query
// failed): Open MPI's path then reports the error.
bool topology_neighbors(MPI_Comm comm, Neighbors* neighbors);

}  // namespace lp::mpi
