// The gateway's sockets: its Unix listener, peer credentials, non-blocking TCP dials.
#pragma once

#include <sys/types.h>

#include <string>

#include "file_descriptor.h"
#include "relay/names.h"
#include "shell/resolver.h"

namespace lpd {

// Binds and listens on `path` (mode 0666: SO_PEERCRED and allow-uid decide who may use it). A
// stale socket file (no one accepts on it) is replaced; a live one or another file is an error.
// Throws lp::SystemError or std::runtime_error.
lp::FileDescriptor listen_unix(const std::string& path);
// The uid of a Unix socket's peer, or -1.
long peer_uid(int fd);
// A non-blocking TCP socket connecting to `address` (resolved: resolver.h), named `text` in errors
// (TCP_NODELAY). Throws lp::SystemError; the connect's own result comes later (SO_ERROR).
lp::FileDescriptor dial_tcp(const Resolved& address, const std::string& text);
// The pending error of a socket (SO_ERROR), 0 if none.
int socket_error(int fd);
void set_nonblocking(int fd);
// Closes with a reset (SO_LINGER 0): the other end sees ECONNRESET, not an orderly end.
void close_abortively(lp::FileDescriptor& fd);

}  // namespace lpd
