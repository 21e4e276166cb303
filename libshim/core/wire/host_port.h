// Endpoint names: "host:port" (one peer = one such string), split and checked.
#pragma once

#include <cstdint>
#include <string>

namespace lp {

struct HostPort {
  std::string host;  // may be empty (listen on all addresses)
  std::uint16_t port = 0;
};

// Throws std::invalid_argument with the text if malformed (a port of 0 only when not required).
HostPort parse_host_port(const std::string& text, bool port_required);

}  // namespace lp
