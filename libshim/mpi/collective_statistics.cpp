#include "collective_statistics.h"

#include "config.h"

namespace lp::mpi {

CollectivePath parse_collectives_setting(const std::string& value) {
  if (value.empty() || value == "site") return CollectivePath::kSite;
  if (value == "native") return CollectivePath::kNative;
  throw ConfigError("LONGPIPE_COLLECTIVES='" + value + "' is invalid: expected site or native");
}

void CollectiveStatistics::count(Collective collective, CollectivePath path) {
  ++counts_[static_cast<std::size_t>(collective)][static_cast<std::size_t>(path)];
}

std::uint64_t CollectiveStatistics::taken(Collective collective, CollectivePath path) const {
  return counts_[static_cast<std::size_t>(collective)][static_cast<std::size_t>(path)];
}

const char* CollectiveStatistics::name(Collective collective) {
  switch (collective) {
    case Collective::kBarrier: return "MPI_Barrier";
    case Collective::kBcast: return "MPI_Bcast";
    case Collective::kReduce: return "MPI_Reduce";
    case Collective::kAllreduce: return "MPI_Allreduce";
    case Collective::kGather: return "MPI_Gather";
    case Collective::kGatherv: return "MPI_Gatherv";
    case Collective::kScatter: return "MPI_Scatter";
    case Collective::kScatterv: return "MPI_Scatterv";
    case Collective::kAllgather: return "MPI_Allgather";
    case Collective::kAllgatherv: return "MPI_Allgatherv";
    case Collective::kAlltoall: return "MPI_Alltoall";
    case Collective::kAlltoallv: return "MPI_Alltoallv";
    case Collective::kAlltoallw: return "MPI_Alltoallw";
    case Collective::kReduceScatter: return "MPI_Reduce_scatter";
    case Collective::kReduceScatterBlock: return "MPI_Reduce_scatter_block";
    case Collective::kScan: return "MPI_Scan";
    case Collective::kExscan: return "MPI_Exscan";
    case Collective::kIbarrier: return "MPI_Ibarrier";
    case Collective::kIbcast: return "MPI_Ibcast";
    case Collective::kIallreduce: return "MPI_Iallreduce";
    case Collective::kIreduce: return "MPI_Ireduce";
    case Collective::kIgather: return "MPI_Igather";
    case Collective::kIscatter: return "MPI_Iscatter";
    case Collective::kIscatterv: return "MPI_Iscatterv";
    case Collective::kIallgather: return "MPI_Iallgather";
    case Collective::kIallgatherv: return "MPI_Iallgatherv";
    case Collective::kIalltoall: return "MPI_Ialltoall";
    case Collective::kIreduceScatter: return "MPI_Ireduce_scatter";
    case Collective::kIreduceScatterBlock: return "MPI_Ireduce_scatter_block";
    case Collective::kIgatherv: return "MPI_Igatherv";
    case Collective::kIalltoallv: return "MPI_Ialltoallv";
    case Collective::kIalltoallw: return "MPI_Ialltoallw";
    case Collective::kIscan: return "MPI_Iscan";
    case Collective::kIexscan: return "MPI_Iexscan";
    case Collective::kNeighborAllgather: return "MPI_Neighbor_allgather";
    case Collective::kNeighborAllgatherv: return "MPI_Neighbor_allgatherv";
    case Collective::kNeighborAlltoall: return "MPI_Neighbor_alltoall";
    case Collective::kNeighborAlltoallv: return "MPI_Neighbor_alltoallv";
    case Collective::kNeighborAlltoallw: return "MPI_Neighbor_alltoallw";
    case Collective::kIneighborAllgather: return "MPI_Ineighbor_allgather";
    case Collective::kIneighborAllgatherv: return "MPI_Ineighbor_allgatherv";
    case Collective::kIneighborAlltoall: return "MPI_Ineighbor_alltoall";
    case Collective::kIneighborAlltoallv: return "MPI_Ineighbor_alltoallv";
    case Collective::kIneighborAlltoallw: return "MPI_Ineighbor_alltoallw";
  }
  return "?";
}

std::string CollectiveStatistics::json(CollectivePath setting) const {
  std::string text = std::string("{\"setting\": \"") + (setting == CollectivePath::kSite ? "site" : "native") +
                     "\", \"collectives\": {";
  for (std::size_t i = 0; i < kCollectiveCount; ++i) {
    const auto collective = static_cast<Collective>(i);
    if (i > 0) text += ", ";
    text += std::string("\"") + name(collective) + "\": {\"site\": " +
            std::to_string(taken(collective, CollectivePath::kSite)) +
            ", \"native\": " + std::to_string(taken(collective, CollectivePath::kNative)) + "}";
  }
  return text + "}}";
}

}  // namespace lp::mpi
