#include "relay/names.h"

#include <algorithm>
#include <cctype>

namespace lpd {
namespace {

bool site_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; }
bool host_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_'; }
bool v6_char(char c) { return std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.'; }

}  // namespace

bool valid_site_name(std::string_view name) {
  return !name.empty() && name.size() <= 32 && std::all_of(name.begin(), name.end(), site_char);
}

std::string HostPort::text() const {
  const std::string shown = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return shown + ":" + std::to_string(port);
}

std::optional<HostPort> parse_host_port(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  std::string_view host = text.substr(0, colon);
  const std::string_view port = text.substr(colon + 1);
  if (port.empty() || port.size() > 5 || !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  const unsigned long number = std::stoul(std::string(port));
  if (number == 0 || number > 65535) return std::nullopt;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
    if (host.empty() || host.size() > 45 || !std::all_of(host.begin(), host.end(), v6_char)) return std::nullopt;
  } else if (host.empty() || host.size() > 253 || !std::all_of(host.begin(), host.end(), host_char)) {
    return std::nullopt;
  }
  return HostPort{std::string(host), static_cast<std::uint16_t>(number)};
}

std::optional<Target> parse_target(std::string_view text) {
  const auto slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const std::string_view site = text.substr(0, slash);
  if (!valid_site_name(site)) return std::nullopt;
  auto address = parse_host_port(text.substr(slash + 1));
  if (!address) return std::nullopt;
  return Target{std::string(site), std::move(*address)};
}

}  // namespace lpd
