// discover_sites: the site of every rank, decided collectively at MPI_Init (over `comm`, a
// duplicate of MPI_COMM_WORLD). LONGPIPE_MPI_SITES wins; otherwise ranks on one host share a site
// and hosts closer than LONGPIPE_MPI_SITE_RTT_MS (ping-pong over Open MPI between the lowest rank
// of each host) are merged. Throws lp::ConfigError for a bad setting.
#pragma once

#include "mpi_api.h"
#include "site_map.h"

namespace lp::mpi {

// Round trips measured per pair of hosts; the smallest counts.
inline constexpr int kRttProbes = 3;

SiteMap discover_sites(MPI_Comm comm, int rank, int size);

}  // namespace lp::mpi
