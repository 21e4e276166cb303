// The pure parts of the site-aware collectives: SiteLayout (site order, leaders, local ranks,
// blocked placement), LONGPIPE_COLLECTIVES and the statistics' JSON.
#include <catch2/catch.hpp>

#include <string>

#include "collective_statistics.h"
#include "config.h"
#include "site_layout.h"

using lp::mpi::Collective;
using lp::mpi::CollectivePath;
using lp::mpi::CollectiveStatistics;
using lp::mpi::SiteLayout;

TEST_CASE("SiteLayout: sites ordered by their lowest rank, leaders, local ranks") {
  const std::vector<int> sites{1, 0, 1, 0, 0};  // rank 0 is at site 1: site 1 comes first
  const SiteLayout layout(sites, 3);
  CHECK(layout.site_count() == 2);
  CHECK(layout.site_index_of(0) == 0);
  CHECK(layout.site_index_of(1) == 1);
  CHECK(layout.site_index_of(2) == 0);
  CHECK(layout.my_site_index() == 1);
  CHECK(layout.leader(0) == 0);
  CHECK(layout.leader(1) == 1);
  CHECK_FALSE(layout.is_leader());
  CHECK(layout.local_rank_of(0) == 0);
  CHECK(layout.local_rank_of(2) == 1);
  CHECK(layout.local_rank_of(1) == 0);
  CHECK(layout.local_rank_of(3) == 1);
  CHECK(layout.local_rank_of(4) == 2);
  CHECK_FALSE(layout.blocked());
  CHECK(SiteLayout(sites, 1).is_leader());
}

TEST_CASE("SiteLayout: blocked placement allows non-commutative reductions per site") {
  CHECK(SiteLayout({0, 0, 1, 1, 1}, 0).blocked());
  CHECK(SiteLayout({1, 1, 0}, 0).blocked());
  CHECK(SiteLayout({0}, 0).blocked());
  CHECK(SiteLayout({0, 1, 2}, 2).blocked());
  CHECK_FALSE(SiteLayout({0, 1, 0}, 0).blocked());
  CHECK_FALSE(SiteLayout({0, 0, 1, 1, 0}, 0).blocked());
  CHECK_THROWS_AS(SiteLayout({0, 1}, 2), std::invalid_argument);
}

TEST_CASE("LONGPIPE_COLLECTIVES: site (default) or native, else an error naming both") {
  CHECK(lp::mpi::parse_collectives_setting("") == CollectivePath::kSite);
  CHECK(lp::mpi::parse_collectives_setting("site") == CollectivePath::kSite);
  CHECK(lp::mpi::parse_collectives_setting("native") == CollectivePath::kNative);
  for (const char* bad : {"Site", "tree", "site ", "0"}) {
    INFO(bad);
    try {
      lp::mpi::parse_collectives_setting(bad);
      FAIL("accepted");
    } catch (const lp::ConfigError& e) {
      CHECK(std::string(e.what()) == "LONGPIPE_COLLECTIVES='" + std::string(bad) + "' is invalid: expected site or native");
    }
  }
}

TEST_CASE("CollectiveStatistics: counts per collective and path, as JSON") {
  CollectiveStatistics statistics;
  statistics.count(Collective::kAllreduce, CollectivePath::kSite);
  statistics.count(Collective::kAllreduce, CollectivePath::kSite);
  statistics.count(Collective::kBcast, CollectivePath::kNative);
  statistics.count(Collective::kGatherv, CollectivePath::kSite);
  CHECK(statistics.taken(Collective::kAllreduce, CollectivePath::kSite) == 2);
  CHECK(statistics.taken(Collective::kAllreduce, CollectivePath::kNative) == 0);
  const std::string json = statistics.json(CollectivePath::kSite);
  CHECK(json.starts_with(
      "{\"setting\": \"site\", \"collectives\": {\"MPI_Barrier\": {\"site\": 0, \"native\": 0}, "
      "\"MPI_Bcast\": {\"site\": 0, \"native\": 1}, \"MPI_Reduce\": {\"site\": 0, \"native\": 0}, "
      "\"MPI_Allreduce\": {\"site\": 2, \"native\": 0}, \"MPI_Gather\": {\"site\": 0, \"native\": 0}, "
      "\"MPI_Gatherv\": {\"site\": 1, \"native\": 0}, "));
  CHECK(json.ends_with("\"MPI_Ireduce_scatter_block\": {\"site\": 0, \"native\": 0}}}"));
  // Every collective is listed, once.
  for (std::size_t i = 0; i < lp::mpi::kCollectiveCount; ++i) {
    const std::string key = std::string("\"") + CollectiveStatistics::name(static_cast<Collective>(i)) + "\": {";
    CHECK(json.find(key) != std::string::npos);
    CHECK(json.find(key) == json.rfind(key));
  }
}
