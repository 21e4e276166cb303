// Parsing of LONGPIPE_SITE_ROUTES (routes.h).
#include "routes.h"

#include <arpa/inet.h>

#include <charconv>

namespace lp::dial {
namespace {

std::optional<std::uint32_t> parse_address(std::string_view text) {
  if (text.empty() || text.size() > 15) return std::nullopt;
  char buffer[16] = {};
  text.copy(buffer, text.size());
  in_addr address{};
  if (inet_pton(AF_INET, buffer, &address) != 1) return std::nullopt;
  return ntohl(address.s_addr);
}

// One `SITE=A.B.C.D/N[@G.H.I.J]`.
std::optional<Route> parse_route(std::string_view entry, std::string& error) {
  const auto equals = entry.find('=');
  const auto slash = entry.find('/');
  if (equals == std::string_view::npos || equals == 0 || slash == std::string_view::npos || slash < equals) {
    error = "'" + std::string(entry) + "' is not SITE=A.B.C.D/N[@GATEWAY]";
    return std::nullopt;
  }
  Route route;
  route.site = std::string(entry.substr(0, equals));
  const auto network = parse_address(entry.substr(equals + 1, slash - equals - 1));
  std::string_view rest = entry.substr(slash + 1);
  const auto at = rest.find('@');
  const std::string_view bits_text = rest.substr(0, at);
  unsigned bits = 0;
  const auto [end, failure] = std::from_chars(bits_text.data(), bits_text.data() + bits_text.size(), bits);
  if (!network || failure != std::errc() || end != bits_text.data() + bits_text.size() || bits_text.empty() ||
      bits > 32) {
    error = "'" + std::string(entry) + "': not an IPv4 network A.B.C.D/N";
    return std::nullopt;
  }
  route.mask = bits == 0 ? 0 : ~std::uint32_t{0} << (32 - bits);
  route.network = *network & route.mask;
  if (at != std::string_view::npos) {
    route.gateway = parse_address(rest.substr(at + 1));
    if (!route.gateway || !route.contains(*route.gateway)) {
      error = "'" + std::string(entry) + "': the gateway is not an IPv4 address in the site's network";
      return std::nullopt;
    }
  }
  return route;
}

}  // namespace

const Route* Routes::find(std::uint32_t address) const {
  for (const auto& route : sites) {
    if (route.contains(address)) return &route;
  }
  return nullptr;
}

std::optional<std::vector<Route>> parse_routes(std::string_view text, std::string& error) {
  std::vector<Route> routes;
  while (!text.empty()) {
    const auto separator = text.find(',');
    const std::string_view entry = text.substr(0, separator);
    text = separator == std::string_view::npos ? std::string_view{} : text.substr(separator + 1);
    if (entry.empty() || (separator != std::string_view::npos && text.empty())) {
      error = "an empty entry";
      return std::nullopt;
    }
    auto route = parse_route(entry, error);
    if (!route) return std::nullopt;
    for (const auto& other : routes) {
      if (other.site == route->site) {
        error = "site " + route->site + " is named twice";
        return std::nullopt;
      }
      const std::uint32_t common = other.mask & route->mask;
      if ((other.network & common) == (route->network & common)) {
        error = "the networks of sites " + other.site + " and " + route->site + " overlap";
        return std::nullopt;
      }
    }
    routes.push_back(std::move(*route));
  }
  return routes;
}

void find_local_site(Routes& routes, const std::vector<std::uint32_t>& addresses) {
  for (std::size_t i = 0; i < routes.sites.size(); ++i) {
    for (const auto address : addresses) {
      if (routes.sites[i].contains(address)) {
        routes.local = static_cast<int>(i);
        routes.local_address = address;
        return;
      }
    }
  }
}

std::string address_text(std::uint32_t address) {
  in_addr network_order{htonl(address)};
  char buffer[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &network_order, buffer, sizeof buffer);
  return buffer;
}

}  // namespace lp::dial
