// Internals of liblongpipe-dial.so (README.md): the real socket functions, the process's route
// table, the table of redirected descriptors, and the two halves of a redirected connection.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <optional>
#include <string>

#include "routes.h"

namespace lp::dial {

// The functions this library replaces, as the next object (libc) defines them: looked up once.
struct Real {
  int (*connect)(int, const sockaddr*, socklen_t);
  int (*accept4)(int, sockaddr*, socklen_t*, int);
  int (*getpeername)(int, sockaddr*, socklen_t*);
  int (*getsockname)(int, sockaddr*, socklen_t*);
  int (*setsockopt)(int, int, int, const void*, socklen_t);
  int (*getsockopt)(int, int, int, void*, socklen_t*);
};
const Real& real();

// This process's settings, read once at first use: the routes (empty: nothing is redirected), the
// gateway's socket path, whether to log each redirection.
struct Settings {
  Routes routes;
  std::string gateway;
  bool log = false;
};
const Settings& settings();
void log_line(const std::string& text);

// A descriptor this library has changed: a dial through the gateway (a Unix socket that stands for
// a TCP connection from `local` to `peer`) or an accepted connection whose peer is `peer`, not the
// gateway. Entries are keyed by descriptor and socket inode: a descriptor closed and reused for
// another socket no longer matches.
struct Redirected {
  bool dialled = false;
  sockaddr_in local{};
  sockaddr_in peer{};
};
void remember(int fd, const Redirected& entry);
std::optional<Redirected> lookup(int fd);

// Connects `fd` to `destination` (in `route`'s site) through the local gateway; 0 or -1 with errno.
int dial_through_gateway(int fd, const Route& route, const sockaddr_in& destination);

// For a connection just accepted from the local gateway's address: reads the dialler's preamble
// (waiting a bounded time for it when `wait`) and returns the original source, or nullopt (the
// connection is left as it was).
std::optional<sockaddr_in> read_preamble(int fd, bool wait);

// The preamble a dialler sends right after its CONNECT request: "LONGPIPE-DIAL/1 FROM A.B.C.D:PORT\n".
inline constexpr char kPreamblePrefix[] = "LONGPIPE-DIAL/1 FROM ";

}  // namespace lp::dial
