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
