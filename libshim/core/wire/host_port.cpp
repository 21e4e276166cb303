#include "wire/host_port.h"

#include <cstdlib>
#include <stdexcept>

namespace lp {

bool valid_site_name(const std::string& name) {
  if (name.empty() || name.size() > kMaxSiteName) return false;
  for (const char c : name) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string site_of_endpoint(const std::string& endpoint) {
  const auto slash = endpoint.find('/');
  return slash == std::string::npos ? std::string() : endpoint.substr(0, slash);
}

HostPort parse_host_port(const std::string& text, bool port_required) {
  HostPort out;
  std::string rest = text;
  if (const auto slash = text.find('/'); slash != std::string::npos) {
    out.site = text.substr(0, slash);
    if (!valid_site_name(out.site)) {
      throw std::invalid_argument("'" + text + "' has an invalid site name (expected 1 to 32 of A-Z a-z 0-9 _ - before '/')");
    }
    rest = text.substr(slash + 1);
  }
  const auto colon = rest.rfind(':');
  std::string port_text;
  if (colon == std::string::npos) {
    out.host = rest;
  } else {
    out.host = rest.substr(0, colon);
    port_text = rest.substr(colon + 1);
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
