#include "carrier/gateway/gateway_socket.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cstring>

#include "config.h"
#include "system_call.h"
#include "wire/host_port.h"

namespace lp {
namespace {

constexpr const char* kVersion = "LONGPIPE-GATEWAY/1";

std::string where(const std::string& path) { return "LONGPIPE_GATEWAY=" + path; }

}  // namespace

std::string gateway_site_request() { return std::string(kVersion) + " SITE\n"; }

std::string gateway_connect_request(const std::string& endpoint) {
  return std::string(kVersion) + " CONNECT " + endpoint + "\n";
}

std::optional<GatewayAnswer> parse_gateway_answer(const std::string& line) {
  if (line == "OK") return GatewayAnswer{true, ""};
  if (line.rfind("OK ", 0) == 0) return GatewayAnswer{true, line.substr(3)};
  if (line == "ERR") return GatewayAnswer{false, "(no reason given)"};
  if (line.rfind("ERR ", 0) == 0) return GatewayAnswer{false, line.substr(4)};
  return std::nullopt;
}

FileDescriptor connect_to_gateway(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof address.sun_path) {
    throw SystemError(where(path) + ": not a usable socket path", ENAMETOOLONG);
  }
  std::memcpy(address.sun_path, path.data(), path.size());
  FileDescriptor fd(SystemCall(where(path) + ": socket", ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)));
  // A Unix connect completes at once or fails (EAGAIN: the gateway's backlog is full; the caller
  // redials as after any failed dial).
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    throw SystemError(where(path) + ": connect (is the site's longpiped running?)", errno);
  }
  return fd;
}

std::string ask_gateway_site(const std::string& path, std::chrono::milliseconds timeout) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + timeout;
  FileDescriptor fd = connect_to_gateway(path);
  // Waits for the socket to be ready; false once the deadline passed.
  const auto wait_for = [&](short events) {
    while (true) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return false;
      pollfd entry{fd.get(), events, 0};
      const int ready = ::poll(&entry, 1, static_cast<int>(left));
      if (ready > 0) return true;
      if (ready < 0 && errno != EINTR) throw SystemError(where(path) + ": poll", errno);
    }
  };
  const std::string request = gateway_site_request();
  for (std::size_t sent = 0; sent < request.size();) {
    const ssize_t n = ::send(fd.get(), request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n >= 0) {
      sent += static_cast<std::size_t>(n);
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!wait_for(POLLOUT)) break;
    } else if (errno != EINTR) {
      throw SystemError(where(path) + ": send SITE", errno);
    }
  }
  std::string line;
  const auto no_answer = [&](const std::string& why) {
    return ConfigError(where(path) + ": the gateway did not name its site (" + why + ")");
  };
  while (line.find('\n') == std::string::npos) {
    if (line.size() >= kMaxGatewayLine) throw no_answer("answer longer than " + std::to_string(kMaxGatewayLine) + " bytes");
    char chunk[kMaxGatewayLine];
    const ssize_t n = ::recv(fd.get(), chunk, kMaxGatewayLine - line.size(), 0);
    if (n > 0) {
      line.append(chunk, static_cast<std::size_t>(n));
    } else if (n == 0) {
      throw no_answer("it closed the connection without an answer");
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!wait_for(POLLIN)) throw no_answer("no answer within " + std::to_string(timeout.count()) + " ms");
    } else if (errno != EINTR) {
      throw SystemError(where(path) + ": recv", errno);
    }
  }
  line.resize(line.find('\n'));
  if (!line.empty() && line.back() == '\r') line.pop_back();
  const auto answer = parse_gateway_answer(line);
  if (!answer) throw no_answer("it answered '" + line + "'");
  if (!answer->ok) throw no_answer("it refused: " + answer->text);
  if (!valid_site_name(answer->text)) throw no_answer("'" + answer->text + "' is not a site name");
  return answer->text;
}

}  // namespace lp
