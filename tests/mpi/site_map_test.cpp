// SiteMap: LONGPIPE_MPI_SITES parsing and the automatic grouping of hosts by round trip.
#include "site_map.h"

#include <catch2/catch.hpp>

#include "config.h"
#include "settings_registry.h"

using lp::mpi::SiteMap;

TEST_CASE("LONGPIPE_MPI_SITES: auto, lists renumbered by first appearance") {
  CHECK_FALSE(SiteMap::parse_setting("", 4).has_value());
  CHECK_FALSE(SiteMap::parse_setting("auto", 4).has_value());
  CHECK(*SiteMap::parse_setting("0,0,1,1", 4) == std::vector<int>{0, 0, 1, 1});
  CHECK(*SiteMap::parse_setting("3,1,3,1", 4) == std::vector<int>{0, 1, 0, 1});
  CHECK(*SiteMap::parse_setting("0", 1) == std::vector<int>{0});
}

TEST_CASE("LONGPIPE_MPI_SITES: bad values name the variable and the accepted form") {
  for (const char* bad : {"0,0,1", "0,0,1,1,1", "0,0,1,4", "0,-1,1,1", "0,,1,1", "0,0,1,1,", "a,b,c,d", "1.5,0,0,0"}) {
    INFO(bad);
    try {
      SiteMap::parse_setting(bad, 4);
      FAIL("accepted");
    } catch (const lp::ConfigError& e) {
      const std::string message = e.what();
      CHECK(message.find("LONGPIPE_MPI_SITES='" + std::string(bad) + "' is invalid") != std::string::npos);
      CHECK(message.find("4 site numbers (0 to 3)") != std::string::npos);
    }
  }
}

TEST_CASE("LONGPIPE_MPI_SITE_RTT_MS: default and range") {
  CHECK(SiteMap::parse_rtt_threshold("") == lp::mpi::kDefaultSiteRttMs);
  CHECK(SiteMap::parse_rtt_threshold("12.5") == 12.5);
  CHECK_THROWS_WITH(SiteMap::parse_rtt_threshold("0"), Catch::Contains("LONGPIPE_MPI_SITE_RTT_MS='0' is invalid"));
  CHECK_THROWS_WITH(SiteMap::parse_rtt_threshold("fast"), Catch::Contains("milliseconds from"));
}

TEST_CASE("hosts: ranks of one host share a site; near hosts merge, far ones do not") {
  const std::vector<std::string> host_of_rank{"a1", "a1", "a2", "b1", "b1", "a2"};
  const auto hosts = SiteMap::distinct_hosts(host_of_rank);
  REQUIRE(hosts == std::vector<std::string>{"a1", "a2", "b1"});
  // a1-a2 0.2 ms (one site), a1-b1 and a2-b1 540 ms; entries measured once (upper triangle).
  const std::vector<double> rtt{-1, 0.2, 540, -1, -1, 541, -1, -1, -1};
  const auto site_of_host = SiteMap::group_hosts(3, rtt, 5.0);
  CHECK(site_of_host == std::vector<int>{0, 0, 1});
  const SiteMap map(SiteMap::sites_of_ranks(host_of_rank, hosts, site_of_host));
  CHECK(map.sites() == std::vector<int>{0, 0, 0, 1, 1, 0});
  CHECK(map.site_count() == 2);
  CHECK(map.describe() == "site 0: ranks 0,1,2,5; site 1: ranks 3,4");
}

TEST_CASE("hosts: grouping is transitive and unmeasured pairs never merge") {
  // a-b 1 ms, b-c 1 ms, a-c 9 ms (over the threshold): still one site through b.
  CHECK(SiteMap::group_hosts(3, {-1, 1, 9, -1, -1, 1, -1, -1, -1}, 5.0) == std::vector<int>{0, 0, 0});
  CHECK(SiteMap::group_hosts(2, {-1, -1, -1, -1}, 5.0) == std::vector<int>{0, 1});
  CHECK(SiteMap::group_hosts(1, {-1}, 5.0) == std::vector<int>{0});
}

TEST_CASE("the settings registry declares the MPI front end's settings as site_map reads them") {
  const auto* rtt = lp::settings::find("LONGPIPE_MPI_SITE_RTT_MS");
  REQUIRE(rtt != nullptr);
  CHECK(std::stod(rtt->default_value) == lp::mpi::kDefaultSiteRttMs);
  CHECK_NOTHROW(rtt->validate(std::to_string(lp::mpi::kMinSiteRttMs)));
  CHECK_NOTHROW(rtt->validate(std::to_string(lp::mpi::kMaxSiteRttMs)));
  CHECK_THROWS_AS(rtt->validate(std::to_string(lp::mpi::kMinSiteRttMs / 2)), lp::ConfigError);
  CHECK_THROWS_AS(rtt->validate(std::to_string(lp::mpi::kMaxSiteRttMs * 2)), lp::ConfigError);
  // What the registry accepts, site_map accepts for some job size, and the reverse.
  const auto* sites = lp::settings::find("LONGPIPE_MPI_SITES");
  REQUIRE(sites != nullptr);
  for (const char* good : {"auto", "0,0,1,1", "3,1,3,1"}) {
    CHECK_NOTHROW(sites->validate(good));
    CHECK_NOTHROW(SiteMap::parse_setting(good, 4));
  }
  for (const char* bad : {"0,,1,1", "0,0,1,1,", "a,b,c,d", "1.5,0,0,0", "0,-1,1,1"}) {
    CHECK_THROWS_AS(sites->validate(bad), lp::ConfigError);
  }
}
