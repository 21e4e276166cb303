// Sites named by the ranks' gateways (site_discovery.h, sites_of_gateways): ranks behind the same
// gateway site share a site, numbered by first appearance; a rank without a gateway leaves the
// job to the measured grouping.
#include <catch2/catch.hpp>

#include "site_discovery.h"

TEST_CASE("ranks are grouped by their gateways' site names") {
  const auto sites = lp::mpi::sites_of_gateways({"east", "east", "west", "east", "west", "north"});
  REQUIRE(sites);
  CHECK(*sites == std::vector<int>{0, 0, 1, 0, 1, 2});
  const lp::mpi::SiteMap map(*sites);
  CHECK(map.site_count() == 3);
  CHECK(map.site_of(3) == 0);
  CHECK(map.site_of(4) == 1);
}

TEST_CASE("one gateway site for all ranks is one site") {
  const auto sites = lp::mpi::sites_of_gateways({"A", "A", "A"});
  REQUIRE(sites);
  CHECK(lp::mpi::SiteMap(*sites).site_count() == 1);
}

TEST_CASE("a rank without a gateway: no grouping by name") {
  CHECK_FALSE(lp::mpi::sites_of_gateways({"A", "", "B"}));
  CHECK_FALSE(lp::mpi::sites_of_gateways({"", ""}));
}
