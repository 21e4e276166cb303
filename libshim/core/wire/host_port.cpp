#include "wire/host_port.h"

#include <cstdlib>
#include <stdexcept>

namespace lp {

HostPort parse_host_port(const std::string& text, bool port_required) {
  HostPort out;
  const auto colon = text.rfind(':');
  std::string port_text;
  if (colon == std::string::npos) {
    out.host = text;
  } else {
    out.host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
  }
  if (out.host.size() >= 2 && out.host.front() == '[' && out.host.back() == ']') {
    out.host = out.host.substr(1, out.host.size() - 2);
  }
  if (port_text.empty()) {
    if (port_required) throw std::invalid_argument("'" + text + "' is not host:port");
    return out;
  }
  char* end = nullptr;
  const long port = std::strtol(port_text.c_str(), &end, 10);
  if (*end != '\0' || port < 0 || port > 65535 || (port_required && port == 0)) {
    throw std::invalid_argument("'" + text + "' has an invalid port (expected 1..65535)");
  }
  out.port = static_cast<std::uint16_t>(port);
  return out;
}

}  // namespace lp
