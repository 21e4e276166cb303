// discover_sites: the site of every rank, decided collectively at MPI_Init (over `comm`, a
// duplicate of MPI_COMM_WORLD). LONGPIPE_MPI_SITES wins; then, when every rank is behind a site
// gateway (LONGPIPE_GATEWAY), ranks whose gateways name the same site share a site (their
// endpoints carry that name: "<site>/host:port"); otherwise ranks on one host share a site and
// hosts closer than LONGPIPE_MPI_SITE_RTT_MS (ping-pong over Open MPI between the lowest rank of
// each host) are merged. Throws lp::ConfigError for a bad setting.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "mpi_api.h"
#include "site_map.h"

namespace lp::mpi {

// Round trips measured per pair of hosts; the smallest counts.
inline constexpr int kRttProbes = 3;

// A gateway's site name: at most this many bytes (with its terminating NUL in the exchange).
inline constexpr int kGatewaySiteBytes = 33;

SiteMap discover_sites(MPI_Comm comm, int rank, int size);

// The site of each rank from its gateway's site name ("" = no gateway), numbered by first
// appearance; nullopt unless every rank has one.
std::optional<std::vector<int>> sites_of_gateways(const std::vector<std::string>& gateway_site_of_rank);

}  // namespace lp::mpi
