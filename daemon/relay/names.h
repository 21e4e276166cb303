// Names the gateway reads from processes, peers and its config file: site names, "host:port" and
// "<site>/<host>:<port>" targets. Pure parsing; every length and character is checked.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace lpd {

// 1-32 characters of [A-Za-z0-9_-].
bool valid_site_name(std::string_view name);

struct HostPort {
  std::string host;  // a name, an IPv4 address, or an IPv6 address without its brackets
  std::uint16_t port = 0;
  std::string text() const;  // "host:port" ("[v6]:port")
};

// "host:port" or "[v6]:port"; port 1-65535, host 1-253 characters of [A-Za-z0-9.-_] (or an IPv6
// literal in brackets). nullopt if anything else.
std::optional<HostPort> parse_host_port(std::string_view text);

struct Target {
  std::string site;
  HostPort address;
};

// "<site>/<host>:<port>".
std::optional<Target> parse_target(std::string_view text);

}  // namespace lpd
