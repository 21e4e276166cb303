// The two halves of a redirected connection (dial.h): the dialler's CONNECT through its site's
// gateway, and the acceptor's reading of the dialler's preamble.
#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <algorithm>
#include <cstring>

#include "dial.h"

namespace lp::dial {
namespace {

// How long the gateway may take to answer a CONNECT (it decides locally, at once).
constexpr int kAnswerSeconds = 10;
// How long an accepted connection from the gateway's address may take to bring its preamble.
constexpr auto kPreambleWait = std::chrono::milliseconds(2000);
constexpr std::size_t kLineMax = 512;

void set_timeout(int fd, int seconds) {
  const timeval limit{seconds, 0};
  real().setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  real().setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
}

bool write_all(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// The gateway's answer line, read a byte at a time: what follows it is the stream's.
bool read_line(int fd, std::string& line) {
  char c = 0;
  while (line.size() < kLineMax) {
    const ssize_t n = recv(fd, &c, 1, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    if (c == '\n') return true;
    line += c;
  }
  return false;
}

std::string endpoint_text(const sockaddr_in& address) {
  return address_text(ntohl(address.sin_addr.s_addr)) + ":" + std::to_string(ntohs(address.sin_port));
}

// The source this connection would have had: the address the caller bound, else this host's
// address in its own site.
sockaddr_in source_of(int fd) {
  sockaddr_in source{};
  socklen_t length = sizeof source;
  if (real().getsockname(fd, reinterpret_cast<sockaddr*>(&source), &length) != 0 || source.sin_family != AF_INET) {
    source = sockaddr_in{};
    source.sin_family = AF_INET;
  }
  if (source.sin_addr.s_addr == htonl(INADDR_ANY)) source.sin_addr.s_addr = htonl(settings().routes.local_address);
  return source;
}

int fail(int error, const std::string& why) {
  log_line(why);
  errno = error;
  return -1;
}

}  // namespace

int dial_through_gateway(int fd, const Route& route, const sockaddr_in& destination) {
  const Settings& config = settings();
  const std::string target = route.site + "/" + endpoint_text(destination);
  sockaddr_un gateway{};
  gateway.sun_family = AF_UNIX;
  if (config.gateway.empty() || config.gateway.size() >= sizeof gateway.sun_path) {
    return fail(ENETUNREACH, "no usable LONGPIPE_GATEWAY for " + target);
  }
  config.gateway.copy(gateway.sun_path, config.gateway.size());
  const int unix_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (unix_fd < 0) return -1;
  set_timeout(unix_fd, kAnswerSeconds);
  const sockaddr_in source = source_of(fd);
  std::string line;
  const bool asked =
      real().connect(unix_fd, reinterpret_cast<const sockaddr*>(&gateway), sizeof gateway) == 0 &&
      write_all(unix_fd, "LONGPIPE-GATEWAY/1 CONNECT " + target + "\n" + kPreamblePrefix + endpoint_text(source) + "\n");
  const int error = errno;
  if (!asked || !read_line(unix_fd, line) || line != "OK") {
    close(unix_fd);
    return fail(asked ? ECONNREFUSED : error,
                "CONNECT " + target + " through " + config.gateway + ": " + (line.empty() ? strerror(error) : line));
  }
  set_timeout(unix_fd, 0);
  // The gateway's connection takes the caller's descriptor, with its flags.
  const int descriptor_flags = fcntl(fd, F_GETFD);
  const int status_flags = fcntl(fd, F_GETFL);
  const int cloexec = descriptor_flags >= 0 && (descriptor_flags & FD_CLOEXEC) ? O_CLOEXEC : 0;
  if (dup3(unix_fd, fd, cloexec) < 0) {
    const int dup_error = errno;
    close(unix_fd);
    errno = dup_error;
    return -1;
  }
  close(unix_fd);
  if (status_flags >= 0 && (status_flags & O_NONBLOCK)) fcntl(fd, F_SETFL, O_NONBLOCK);
  Redirected entry;
  entry.dialled = true;
  entry.local = source;
  entry.peer = destination;
  remember(fd, entry);
  log_line("connect " + endpoint_text(source) + " -> " + target + " through the gateway");
  return 0;
}

std::optional<sockaddr_in> read_preamble(int fd, bool wait) {
  const auto deadline = std::chrono::steady_clock::now() + (wait ? kPreambleWait : std::chrono::milliseconds(0));
  const std::size_t prefix_length = sizeof kPreamblePrefix - 1;
  char buffer[64];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd readable{fd, POLLIN, 0};
    const int ready = poll(&readable, 1, static_cast<int>(std::max<long long>(left.count(), 0)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return std::nullopt;
    const ssize_t n = recv(fd, buffer, sizeof buffer - 1, MSG_PEEK | MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return std::nullopt;  // closed before a preamble: leave it to the caller
    const std::size_t have = static_cast<std::size_t>(n);
    if (std::memcmp(buffer, kPreamblePrefix, have < prefix_length ? have : prefix_length) != 0) return std::nullopt;
    const auto* end = static_cast<const char*>(std::memchr(buffer, '\n', have));
    if (end == nullptr) {
      if (have == sizeof buffer - 1 || std::chrono::steady_clock::now() >= deadline) return std::nullopt;
      const timespec pause{0, 1'000'000};  // the rest of the line is on its way
      nanosleep(&pause, nullptr);
      continue;
    }
    const std::size_t line_length = static_cast<std::size_t>(end - buffer) + 1;
    const std::string endpoint(buffer + prefix_length, static_cast<std::size_t>(end - buffer) - prefix_length);
    const auto colon = endpoint.rfind(':');
    sockaddr_in source{};
    source.sin_family = AF_INET;
    if (colon == std::string::npos || inet_pton(AF_INET, endpoint.substr(0, colon).c_str(), &source.sin_addr) != 1) {
      return std::nullopt;
    }
    source.sin_port = htons(static_cast<std::uint16_t>(std::strtoul(endpoint.c_str() + colon + 1, nullptr, 10)));
    std::size_t consumed = 0;
    while (consumed < line_length) {  // the peeked bytes are there: this does not wait
      const ssize_t got = recv(fd, buffer, line_length - consumed, MSG_DONTWAIT);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return std::nullopt;
      consumed += static_cast<std::size_t>(got);
    }
    return source;
  }
}

}  // namespace lp::dial
