// LONGPIPE_SITE_ROUTES (libshim/dial/routes.h): parsing, the site of an address, the local site.
#include "routes.h"

#include <catch2/catch.hpp>

using lp::dial::parse_routes;
using lp::dial::Routes;

namespace {
constexpr std::uint32_t ip(unsigned a, unsigned b, unsigned c, unsigned d) { return a << 24 | b << 16 | c << 8 | d; }
}  // namespace

TEST_CASE("site routes: entries with and without a gateway") {
  std::string error;
  const auto routes = parse_routes("S1=10.1.0.0/24@10.1.0.1,S2=10.2.0.7/24,far=192.168.0.0/16", error);
  REQUIRE(routes);
  REQUIRE(routes->size() == 3);
  CHECK((*routes)[0].site == "S1");
  CHECK((*routes)[0].gateway == ip(10, 1, 0, 1));
  CHECK((*routes)[1].network == ip(10, 2, 0, 0));  // host bits dropped
  CHECK_FALSE((*routes)[1].gateway);
  CHECK((*routes)[2].contains(ip(192, 168, 200, 3)));
  CHECK_FALSE((*routes)[2].contains(ip(192, 169, 0, 1)));
}

TEST_CASE("site routes: the site of an address and this host's own site") {
  std::string error;
  Routes routes;
  routes.sites = *parse_routes("S1=10.1.0.0/24@10.1.0.1,S2=10.2.0.0/24@10.2.0.1", error);
  CHECK(routes.find(ip(10, 2, 0, 11))->site == "S2");
  CHECK(routes.find(ip(10, 3, 0, 11)) == nullptr);
  lp::dial::find_local_site(routes, {ip(172, 17, 0, 2), ip(10, 2, 0, 12)});
  CHECK(routes.local == 1);
  CHECK(routes.local_address == ip(10, 2, 0, 12));
  Routes elsewhere{routes.sites, -1, 0};
  lp::dial::find_local_site(elsewhere, {ip(192, 168, 1, 5)});
  CHECK(elsewhere.local == -1);
}

TEST_CASE("site routes: malformed lists are refused with a reason") {
  for (const char* bad : {"S1", "S1=10.1.0.0", "=10.1.0.0/24", "S1=10.1.0/24", "S1=10.1.0.0/33", "S1=10.1.0.0/x",
                          "S1=10.1.0.0/24@10.2.0.1", "S1=10.1.0.0/24,,S2=10.2.0.0/24", "S1=10.1.0.0/24,",
                          "S1=10.1.0.0/24,S1=10.2.0.0/24", "S1=10.1.0.0/16,S2=10.1.2.0/24"}) {
    std::string error;
    INFO(bad);
    CHECK_FALSE(parse_routes(bad, error));
    CHECK_FALSE(error.empty());
  }
}

TEST_CASE("site routes: an empty list routes nothing") {
  std::string error;
  const auto routes = parse_routes("", error);
  REQUIRE(routes);
  CHECK(routes->empty());
}
