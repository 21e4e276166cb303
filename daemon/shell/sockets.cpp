#include "shell/sockets.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "system_call.h"

namespace lpd {
namespace {

sockaddr_un unix_address(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof address.sun_path) throw std::runtime_error("socket path too long: " + path);
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  return address;
}

}  // namespace

lp::FileDescriptor listen_unix(const std::string& path) {
  const sockaddr_un address = unix_address(path);
  struct stat status{};
  if (::lstat(path.c_str(), &status) == 0) {
    if (!S_ISSOCK(status.st_mode)) throw std::runtime_error(path + " exists and is not a socket");
    lp::FileDescriptor probe(lp::SystemCall("socket", ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)));
    if (::connect(probe.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0) {
      throw std::runtime_error(path + " is in use by a running gateway");
    }
    ::unlink(path.c_str());
  }
  lp::FileDescriptor fd(lp::SystemCall("socket", ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)));
  lp::SystemCall("bind " + path, ::bind(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address));
  lp::SystemCall("chmod " + path, ::chmod(path.c_str(), 0666));
  lp::SystemCall("listen " + path, ::listen(fd.get(), 128));
  return fd;
}

long peer_uid(int fd) {
  ucred credentials{};
  socklen_t size = sizeof credentials;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &size) != 0) return -1;
  return static_cast<long>(credentials.uid);
}

lp::FileDescriptor dial_tcp(const Resolved& address, const std::string& text) {
  lp::FileDescriptor fd(::socket(address.address.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) {
    const int error = errno;
    throw lp::SystemError("socket", error);
  }
  const int one = 1;
  ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  const int result = ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address.address), address.length);
  const int error = errno;
  if (result != 0 && error != EINPROGRESS) throw lp::SystemError("connect to " + text, error);
  return fd;
}

int socket_error(int fd) {
  int error = 0;
  socklen_t size = sizeof error;
  if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size) != 0) return errno;
  return error;
}

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

void close_abortively(lp::FileDescriptor& fd) {
  if (!fd) return;
  const linger abort{1, 0};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_LINGER, &abort, sizeof abort);
  fd.reset();
}

}  // namespace lpd
