// TCP_INFO's path fields (min_rtt, delivery rate, its app-limited flag, window and flight) and the
// peer's address. Apart from tcp_socket.cpp: these fields need the kernel's <linux/tcp.h>, whose
// struct tcp_info clashes with glibc's older one in <netinet/tcp.h>.
#pragma once

#include <sys/socket.h>

#include <string>

#include "carrier.h"

namespace lp {

LinkPathInfo read_link_path_info(int fd);
// The congestion window the next write will find (idle_restart.h: `restarts_after_idle` when the
// host and the socket's congestion control restart idle windows; on a `paced` one what its pacing
// sends soon; `bbr_set_up_now`: the write will switch the socket to bbr, which paces from its
// initial rate), what is in flight and what waits unsent (one getsockopt).
StreamWindow read_stream_window(int fd, bool restarts_after_idle, bool paced, bool bbr_set_up_now);
// The host's tcp_slow_start_after_idle (this process's network namespace), read once.
bool host_restarts_idle_connections();
// getpeername() as a numeric address without the port ("" on failure).
std::string read_peer_address(int fd);
// The numeric text of an address (as read_peer_address gives it); "" if it has none.
std::string address_text(const sockaddr_storage& address);

}  // namespace lp
