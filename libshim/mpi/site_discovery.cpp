#include "site_discovery.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "config.h"
#include "engine.h"
#include "settings_registry.h"

namespace lp::mpi {
namespace {

constexpr int kRttTag = 7001;  // on the front end's private communicator only

// The setting's value in effect (the environment, else LONGPIPE_CONFIG's file); "" when unset.
std::string setting(const char* name) { return settings::setting_value(name).value_or(""); }

// This rank's gateway's site, "" without a gateway. A gateway that does not answer is not an
// error here: the engine's constructor reports it (only a multi-site job builds one), and this
// rank's "" sends the job to the measured grouping.
std::string own_gateway_site() {
  if (setting("LONGPIPE_GATEWAY").empty() && setting("LONGPIPE_CONFIG").empty()) return "";
  try {
    const std::string site = Engine::gateway_site(Config::from_environment());
    return site.size() < static_cast<std::size_t>(kGatewaySiteBytes) ? site : "";
  } catch (const std::exception&) {
    return "";
  }
}

// Every rank's gateway site ("" where none), gathered over `comm`.
std::vector<std::string> gather_gateway_sites(MPI_Comm comm, int size) {
  char mine[kGatewaySiteBytes] = {};
  const std::string site = own_gateway_site();
  std::memcpy(mine, site.data(), site.size());
  std::vector<char> all(static_cast<std::size_t>(kGatewaySiteBytes) * size);
  PMPI_Allgather(mine, kGatewaySiteBytes, MPI_CHAR, all.data(), kGatewaySiteBytes, MPI_CHAR, comm);
  std::vector<std::string> sites;
  for (int r = 0; r < size; ++r) {
    const char* entry = all.data() + static_cast<std::size_t>(r) * kGatewaySiteBytes;
    sites.emplace_back(entry, strnlen(entry, kGatewaySiteBytes));
  }
  return sites;
}

}  // namespace

std::optional<std::vector<int>> sites_of_gateways(const std::vector<std::string>& gateway_site_of_rank) {
  std::map<std::string, int> number;
  std::vector<int> sites;
  for (const std::string& name : gateway_site_of_rank) {
    if (name.empty()) return std::nullopt;
    sites.push_back(number.emplace(name, static_cast<int>(number.size())).first->second);
  }
  return sites;
}

SiteMap discover_sites(MPI_Comm comm, int rank, int size) {
  // Every rank parses the setting (same environment under mpirun -x), so a bad value stops all.
  if (auto forced = SiteMap::parse_setting(setting("LONGPIPE_MPI_SITES"), size)) return SiteMap(*forced);
  const double threshold_ms = SiteMap::parse_rtt_threshold(setting("LONGPIPE_MPI_SITE_RTT_MS"));
  // Behind gateways the sites are named: no round trip to measure. Every rank takes part in the
  // exchange, with or without a gateway, so that all decide alike.
  if (auto named = sites_of_gateways(gather_gateway_sites(comm, size))) return SiteMap(*named);

  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  PMPI_Get_processor_name(name, &length);
  std::vector<char> names(static_cast<std::size_t>(MPI_MAX_PROCESSOR_NAME) * size);
  PMPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, comm);
  std::vector<std::string> host_of_rank;
  for (int r = 0; r < size; ++r) {
    const char* entry = names.data() + static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME;
    host_of_rank.emplace_back(entry, strnlen(entry, MPI_MAX_PROCESSOR_NAME));
  }
  const std::vector<std::string> hosts = SiteMap::distinct_hosts(host_of_rank);
  const std::size_t n = hosts.size();
  if (n == 1) return SiteMap(std::vector<int>(static_cast<std::size_t>(size), 0));

  // The lowest rank of each host measures its round trip to every other host's, pair by pair in
  // one global order (so no two pairs wait on each other).
  std::vector<int> leader(n, -1);
  for (int r = size - 1; r >= 0; --r) {
    const auto host = std::find(hosts.begin(), hosts.end(), host_of_rank[static_cast<std::size_t>(r)]) - hosts.begin();
    leader[static_cast<std::size_t>(host)] = r;
  }
  std::vector<double> rtt_ms(n * n, -1.0), agreed(n * n, -1.0);
  for (std::size_t a = 0; a < n; ++a) {
    for (std::size_t b = a + 1; b < n; ++b) {
      const int first = leader[a], second = leader[b];
      if (rank != first && rank != second) continue;
      double best = -1.0;
      char byte = 0;
      for (int probe = 0; probe < kRttProbes; ++probe) {
        if (rank == first) {
          const double t0 = PMPI_Wtime();
          PMPI_Send(&byte, 1, MPI_CHAR, second, kRttTag, comm);
          PMPI_Recv(&byte, 1, MPI_CHAR, second, kRttTag, comm, MPI_STATUS_IGNORE);
          const double ms = (PMPI_Wtime() - t0) * 1000.0;
          best = best < 0 ? ms : std::min(best, ms);
        } else {
          PMPI_Recv(&byte, 1, MPI_CHAR, first, kRttTag, comm, MPI_STATUS_IGNORE);
          PMPI_Send(&byte, 1, MPI_CHAR, first, kRttTag, comm);
        }
      }
      if (rank == first) rtt_ms[a * n + b] = best;
    }
  }
  PMPI_Allreduce(rtt_ms.data(), agreed.data(), static_cast<int>(n * n), MPI_DOUBLE, MPI_MAX, comm);
  const std::vector<int> site_of_host = SiteMap::group_hosts(n, agreed, threshold_ms);
  return SiteMap(SiteMap::sites_of_ranks(host_of_rank, hosts, site_of_host));
}

}  // namespace lp::mpi
