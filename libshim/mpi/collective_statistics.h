// CollectiveStatistics: which path each interposed collective took (LONGPIPE_COLLECTIVES, the
// statistics file). Pure.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace lp::mpi {

// Every collective SiteCollectives interposes (collectives.h), in the order of the statistics.
enum class Collective {
  kBarrier,
  kBcast,
  kReduce,
  kAllreduce,
  kGather,
  kGatherv,
  kScatter,
  kScatterv,
  kAllgather,
  kAllgatherv,
  kAlltoall,
  kAlltoallv,
  kAlltoallw,
  kReduceScatter,
  kReduceScatterBlock,
  kScan,
  kExscan,
  kIbarrier,
  kIbcast,
  kIallreduce,
  kIreduce,
  kIgather,
  kIscatter,
  kIscatterv,
  kIallgather,
  kIallgatherv,
  kIalltoall,
  kIreduceScatter,
  kIreduceScatterBlock,
  kIgatherv,
  kIalltoallv,
  kIalltoallw,
  kIscan,
  kIexscan,
  kNeighborAllgather,
  kNeighborAllgatherv,
  kNeighborAlltoall,
  kNeighborAlltoallv,
  kNeighborAlltoallw,
  kIneighborAllgather,
  kIneighborAllgatherv,
  kIneighborAlltoall,
  kIneighborAlltoallv,
  kIneighborAlltoallw,
};
inline constexpr std::size_t kCollectiveCount = 44;

// The nonblocking ones (LongPipe requests: collectives_nonblocking*.cpp, collectives_neighbor.cpp).
constexpr bool is_nonblocking(Collective collective) {
  return (collective >= Collective::kIbarrier && collective <= Collective::kIexscan) ||
         collective >= Collective::kIneighborAllgather;
}

// kSite: two-level over LongPipe; kNative: Open MPI's own (PMPI_*) unchanged.
enum class CollectivePath { kSite, kNative };

// LONGPIPE_COLLECTIVES: "" or "site" (default) -> kSite, "native" -> kNative. Throws lp::ConfigError
// naming the variable and the accepted values.
CollectivePath parse_collectives_setting(const std::string& value);

class CollectiveStatistics {
 public:
  void count(Collective collective, CollectivePath path);
  std::uint64_t taken(Collective collective, CollectivePath path) const;
  // {"setting": "site", "collectives": {"MPI_Barrier": {"site": 1, "native": 0}, ...}}
  std::string json(CollectivePath setting) const;

  static const char* name(Collective collective);

 private:
  std::array<std::array<std::uint64_t, 2>, kCollectiveCount> counts_{};
};

}  // namespace lp::mpi
