// Endpoint names: "host:port" (one peer = one such string), split and checked. A process behind a
// site gateway (LONGPIPE_GATEWAY) names itself "<site>/host:port": its gateway's site, then its
// own TCP listener, which that site's gateway reaches on the site's LAN.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace lp {

// Site names: 1 to 32 of A-Z a-z 0-9 _ -.
inline constexpr std::size_t kMaxSiteName = 32;

struct HostPort {
  std::string site;  // "" for a direct endpoint
  std::string host;  // may be empty (listen on all addresses)
  std::uint16_t port = 0;
};

// Whether `name` is a valid site name.
bool valid_site_name(const std::string& name);

// Throws std::invalid_argument with the text if malformed (a port of 0 only when not required; a
// site prefix must be a valid site name).
HostPort parse_host_port(const std::string& text, bool port_required);

// The site of "<site>/host:port", "" for a direct endpoint (no check beyond the '/').
std::string site_of_endpoint(const std::string& endpoint);

}  // namespace lp
