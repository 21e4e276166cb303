// SiteMap: which site each rank of MPI_COMM_WORLD belongs to. Pure: the MPI-side measurements
// (host names, round trips) are gathered by site_discovery.cpp and handed in.
//
// Sites come from LONGPIPE_MPI_SITES when it is set to a list (one site number per world rank,
// e.g. "0,0,1,1"), otherwise from the hosts: ranks on one host share a site, and hosts whose
// measured round trip is below LONGPIPE_MPI_SITE_RTT_MS are merged into one site.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace lp::mpi {

// Default of LONGPIPE_MPI_SITE_RTT_MS: hosts closer than this are one site. A LAN round trip
// through Open MPI's TCP path is well under 1 ms, the shortest wide-area hop worth carrying over
// LongPipe is several ms.
inline constexpr double kDefaultSiteRttMs = 5.0;
inline constexpr double kMinSiteRttMs = 0.01;
inline constexpr double kMaxSiteRttMs = 100000.0;

class SiteMap {
 public:
  // Parses LONGPIPE_MPI_SITES for a world of `world_size` ranks: nullopt for "" or "auto", else the
  // site of each rank, renumbered 0.. in order of first appearance. Throws lp::ConfigError naming
  // the variable and the accepted form.
  static std::optional<std::vector<int>> parse_setting(const std::string& value, int world_size);
  // Parses LONGPIPE_MPI_SITE_RTT_MS ("" = default); throws lp::ConfigError.
  static double parse_rtt_threshold(const std::string& value);

  // The distinct hosts of `host_of_rank`, in order of first appearance.
  static std::vector<std::string> distinct_hosts(const std::vector<std::string>& host_of_rank);
  // Site of each host: hosts i and j share a site when rtt_ms[i * n + j] (or [j * n + i]) is at
  // least 0 and below `threshold_ms`, transitively. Sites are numbered by first appearance.
  static std::vector<int> group_hosts(std::size_t host_count, const std::vector<double>& rtt_ms, double threshold_ms);
  // Site of each rank from its host's site.
  static std::vector<int> sites_of_ranks(const std::vector<std::string>& host_of_rank,
                                         const std::vector<std::string>& hosts, const std::vector<int>& site_of_host);

  explicit SiteMap(std::vector<int> site_of_rank);
  int site_of(int world_rank) const { return site_of_rank_[static_cast<std::size_t>(world_rank)]; }
  int site_count() const { return site_count_; }
  const std::vector<int>& sites() const { return site_of_rank_; }
  // "site 0: ranks 0-1; site 1: ranks 2-3" for messages.
  std::string describe() const;

 private:
  std::vector<int> site_of_rank_;
  int site_count_ = 0;
};

}  // namespace lp::mpi
