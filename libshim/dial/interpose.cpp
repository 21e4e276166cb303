// liblongpipe-dial.so's interposed socket functions (README.md). A connect() to an IPv4 address of
// another site in LONGPIPE_SITE_ROUTES becomes a CONNECT through the local site gateway; accept()
// restores the original source of connections that the gateway dialled; getpeername(),
// getsockname(), setsockopt() and getsockopt() answer for redirected descriptors as TCP would.
// Everything else goes to libc untouched. Nothing runs before the first call: no constructor.
#include <dlfcn.h>
#include <ifaddrs.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "dial.h"

#define LP_DIAL_EXPORT extern "C" __attribute__((visibility("default")))

namespace lp::dial {
namespace {

template <typename F>
F next(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

std::vector<std::uint32_t> host_addresses() {
  std::vector<std::uint32_t> addresses;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return addresses;
  for (const ifaddrs* entry = list; entry != nullptr; entry = entry->ifa_next) {
    if (entry->ifa_addr == nullptr || entry->ifa_addr->sa_family != AF_INET) continue;
    const std::uint32_t address = ntohl(reinterpret_cast<const sockaddr_in*>(entry->ifa_addr)->sin_addr.s_addr);
    if ((address >> 24) != 127) addresses.push_back(address);
  }
  freeifaddrs(list);
  return addresses;
}

Settings read_settings() {
  Settings result;
  const char* log = std::getenv("LONGPIPE_DIAL_LOG");
  result.log = log != nullptr && std::strcmp(log, "1") == 0;
  if (const char* gateway = std::getenv("LONGPIPE_GATEWAY")) result.gateway = gateway;
  const char* text = std::getenv("LONGPIPE_SITE_ROUTES");
  if (text == nullptr || *text == '\0') return result;
  std::string error;
  auto routes = parse_routes(text, error);
  if (!routes) {
    // Not fatal: an unusable table redirects nothing, as if unset; say why once.
    std::fprintf(stderr, "longpipe-dial: LONGPIPE_SITE_ROUTES ignored: %s\n", error.c_str());
    return result;
  }
  result.routes.sites = std::move(*routes);
  find_local_site(result.routes, host_addresses());
  return result;
}

// True when `fd` is a TCP socket.
bool is_tcp(int fd) {
  int protocol = 0;
  socklen_t length = sizeof protocol;
  return real().getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &protocol, &length) == 0 && protocol == IPPROTO_TCP;
}

int redirect_or_connect(int fd, const sockaddr* address, socklen_t length) {
  if (address == nullptr || length < sizeof(sockaddr_in) || address->sa_family != AF_INET) {
    return real().connect(fd, address, length);
  }
  const Settings& config = settings();
  const auto& destination = *reinterpret_cast<const sockaddr_in*>(address);
  const Route* route = config.routes.find(ntohl(destination.sin_addr.s_addr));
  const Route* local = config.routes.local >= 0 ? &config.routes.sites[config.routes.local] : nullptr;
  if (route == nullptr || route == local || local == nullptr || !is_tcp(fd)) {
    return real().connect(fd, address, length);
  }
  return dial_through_gateway(fd, *route, destination);
}

// accept4 for both entry points: a connection from the local gateway's address gets its
// dialler's address back when it brings a preamble.
int accept_connection(int listener, sockaddr* address, socklen_t* length, int flags) {
  sockaddr_storage peer{};
  socklen_t peer_length = sizeof peer;
  const int fd = real().accept4(listener, reinterpret_cast<sockaddr*>(&peer), &peer_length, flags);
  if (fd < 0) return fd;
  const Settings& config = settings();
  const int local = config.routes.local;
  if (peer.ss_family == AF_INET && local >= 0 && config.routes.sites[local].gateway) {
    auto& peer_in = reinterpret_cast<sockaddr_in&>(peer);
    if (ntohl(peer_in.sin_addr.s_addr) == *config.routes.sites[local].gateway) {
      // A caller that does not ask for the address (LongPipe's engine, the gateway) is not kept
      // waiting: only a preamble already there is taken.
      if (const auto source = read_preamble(fd, address != nullptr)) {
        Redirected entry;
        entry.peer = *source;
        remember(fd, entry);
        log_line("accept from " + address_text(ntohl(source->sin_addr.s_addr)) + " through the gateway");
        peer_in = *source;
      }
    }
  }
  if (address != nullptr && length != nullptr) {
    std::memcpy(address, &peer, std::min<socklen_t>(*length, peer_length));
    *length = peer_length;
  }
  return fd;
}

int answer_address(const sockaddr_in& value, sockaddr* address, socklen_t* length) {
  if (address == nullptr || length == nullptr) {
    errno = EFAULT;
    return -1;
  }
  std::memcpy(address, &value, std::min<socklen_t>(*length, sizeof value));
  *length = sizeof value;
  return 0;
}

}  // namespace

const Real& real() {
  static const Real functions{
      next<decltype(Real::connect)>("connect"),         next<decltype(Real::accept4)>("accept4"),
      next<decltype(Real::getpeername)>("getpeername"), next<decltype(Real::getsockname)>("getsockname"),
      next<decltype(Real::setsockopt)>("setsockopt"),   next<decltype(Real::getsockopt)>("getsockopt"),
  };
  return functions;
}

const Settings& settings() {
  static const Settings values = read_settings();
  return values;
}

void log_line(const std::string& text) {
  if (!settings().log) return;
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  std::fprintf(stderr, "longpipe-dial[%d] %lld.%03ld: %s\n", static_cast<int>(getpid()), static_cast<long long>(now.tv_sec),
               now.tv_nsec / 1'000'000, text.c_str());
}

}  // namespace lp::dial

using lp::dial::lookup;
using lp::dial::real;

// No exception leaves these functions: the only ones possible (allocation) become ENOMEM.
LP_DIAL_EXPORT int connect(int fd, const sockaddr* address, socklen_t length) {
  try {
    return lp::dial::redirect_or_connect(fd, address, length);
  } catch (...) {
    errno = ENOMEM;
    return -1;
  }
}

LP_DIAL_EXPORT int accept(int listener, sockaddr* address, socklen_t* length) {
  try {
    return lp::dial::accept_connection(listener, address, length, 0);
  } catch (...) {
    errno = ENOMEM;
    return -1;
  }
}

LP_DIAL_EXPORT int accept4(int listener, sockaddr* address, socklen_t* length, int flags) {
  try {
    return lp::dial::accept_connection(listener, address, length, flags);
  } catch (...) {
    errno = ENOMEM;
    return -1;
  }
}

LP_DIAL_EXPORT int getpeername(int fd, sockaddr* address, socklen_t* length) {
  try {
    if (const auto entry = lookup(fd)) return lp::dial::answer_address(entry->peer, address, length);
  } catch (...) {
  }
  return real().getpeername(fd, address, length);
}

LP_DIAL_EXPORT int getsockname(int fd, sockaddr* address, socklen_t* length) {
  try {
    if (const auto entry = lookup(fd); entry && entry->dialled) {
      return lp::dial::answer_address(entry->local, address, length);
    }
  } catch (...) {
  }
  return real().getsockname(fd, address, length);
}

// A dialled descriptor is a Unix socket: TCP options (TCP_NODELAY, ...) have nothing to set and
// succeed; others go to the socket, and an option a Unix socket lacks succeeds without effect.
LP_DIAL_EXPORT int setsockopt(int fd, int level, int name, const void* value, socklen_t length) {
  const int result = real().setsockopt(fd, level, name, value, length);
  if (result == 0 || (errno != EOPNOTSUPP && errno != ENOPROTOOPT && errno != EINVAL)) return result;
  const int error = errno;
  try {
    if (const auto entry = lookup(fd); entry && entry->dialled) return 0;
  } catch (...) {
  }
  errno = error;
  return result;
}

LP_DIAL_EXPORT int getsockopt(int fd, int level, int name, void* value, socklen_t* length) {
  const int result = real().getsockopt(fd, level, name, value, length);
  if (result == 0 || (errno != EOPNOTSUPP && errno != ENOPROTOOPT)) return result;
  const int error = errno;
  try {
    if (const auto entry = lookup(fd); entry && entry->dialled && value != nullptr && length != nullptr) {
      std::memset(value, 0, *length);  // e.g. TCP_NODELAY off, no TCP_MAXSEG
      return 0;
    }
  } catch (...) {
  }
  errno = error;
  return result;
}
