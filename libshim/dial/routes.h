// The site route table of the dial library (LONGPIPE_SITE_ROUTES): which IPv4 networks belong to
// which site, which of them is this host's own site, and the address a site's gateway dials from.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lp::dial {

// One site: `SITE=A.B.C.D/N[@G.H.I.J]`. Addresses are in host byte order.
struct Route {
  std::string site;
  std::uint32_t network = 0;
  std::uint32_t mask = 0;
  std::optional<std::uint32_t> gateway;  // the site gateway's LAN address (its dials come from it)
  bool contains(std::uint32_t address) const { return (address & mask) == network; }
};

struct Routes {
  std::vector<Route> sites;
  int local = -1;                    // index of this host's own site, -1 when none matches
  std::uint32_t local_address = 0;   // this host's address in its own site's network
  // The site that `address` belongs to, or nullptr.
  const Route* find(std::uint32_t address) const;
};

// Parses `SITE=A.B.C.D/N[@G.H.I.J],...`. nullopt and a reason in `error` for a malformed list (an
// empty entry too), a site named twice or overlapping networks.
std::optional<std::vector<Route>> parse_routes(std::string_view text, std::string& error);

// Marks the site whose network holds one of `addresses` (this host's IPv4 addresses) as local.
void find_local_site(Routes& routes, const std::vector<std::uint32_t>& addresses);

// "10.2.0.11" from a host-order address.
std::string address_text(std::uint32_t address);

}  // namespace lp::dial
