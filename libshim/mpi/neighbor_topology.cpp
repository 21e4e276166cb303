#include "neighbor_topology.h"

#include <algorithm>

namespace lp::mpi {
namespace {

bool cartesian(MPI_Comm comm, Neighbors* neighbors) {
  int dimensions = 0;
  if (PMPI_Cartdim_get(comm, &dimensions) != MPI_SUCCESS) return false;
  for (int d = 0; d < dimensions; ++d) {
    int minus = MPI_PROC_NULL, plus = MPI_PROC_NULL;
    if (PMPI_Cart_shift(comm, d, 1, &minus, &plus) != MPI_SUCCESS) return false;
    neighbors->sources.insert(neighbors->sources.end(), {minus, plus});
    neighbors->receive_order.insert(neighbors->receive_order.end(), {2 * d + 1, 2 * d});
  }
  neighbors->destinations = neighbors->sources;
  return true;
}

bool graph(MPI_Comm comm, Neighbors* neighbors) {
  int rank = 0, count = 0;
  if (PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS || PMPI_Graph_neighbors_count(comm, rank, &count) != MPI_SUCCESS) {
    return false;
  }
  neighbors->sources.resize(static_cast<std::size_t>(count));
  if (count > 0 && PMPI_Graph_neighbors(comm, rank, count, neighbors->sources.data()) != MPI_SUCCESS) return false;
  neighbors->destinations = neighbors->sources;
  return true;
}

bool distributed_graph(MPI_Comm comm, Neighbors* neighbors) {
  int in = 0, out = 0, weighted = 0;
  if (PMPI_Dist_graph_neighbors_count(comm, &in, &out, &weighted) != MPI_SUCCESS) return false;
  neighbors->sources.resize(static_cast<std::size_t>(in));
  neighbors->destinations.resize(static_cast<std::size_t>(out));
  // Weights are not needed, but Open MPI writes them for a weighted graph: room for them (at least
  // one element each, so that no array is null).
  std::vector<int> in_weights(static_cast<std::size_t>(std::max(in, 1)));
  std::vector<int> out_weights(static_cast<std::size_t>(std::max(out, 1)));
  std::vector<int> sources(static_cast<std::size_t>(std::max(in, 1)));
  std::vector<int> destinations(static_cast<std::size_t>(std::max(out, 1)));
  if (PMPI_Dist_graph_neighbors(comm, in, sources.data(), weighted ? in_weights.data() : MPI_UNWEIGHTED, out,
                                destinations.data(), weighted ? out_weights.data() : MPI_UNWEIGHTED) != MPI_SUCCESS) {
    return false;
  }
  std::copy_n(sources.begin(), in, neighbors->sources.begin());
  std::copy_n(destinations.begin(), out, neighbors->destinations.begin());
  return true;
}

}  // namespace

bool topology_neighbors(MPI_Comm comm, Neighbors* neighbors) {
  *neighbors = {};
  int kind = MPI_UNDEFINED;
  if (PMPI_Topo_test(comm, &kind) != MPI_SUCCESS) return false;
  bool found = false;
  if (kind == MPI_CART)
    found = cartesian(comm, neighbors);
  else if (kind == MPI_GRAPH)
    found = graph(comm, neighbors);
  else if (kind == MPI_DIST_GRAPH)
    found = distributed_graph(comm, neighbors);
  if (!found) return false;
  if (neighbors->receive_order.empty()) {
    for (std::size_t k = 0; k < neighbors->sources.size(); ++k) neighbors->receive_order.push_back(static_cast<int>(k));
  }
  return true;
}

}  // namespace lp::mpi
