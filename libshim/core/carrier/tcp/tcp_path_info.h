// TCP_INFO's path fields (min_rtt, delivery rate, its app-limited flag, window and flight) and the
// peer's address. Apart from tcp_socket.cpp: these fields need the kernel's <linux/tcp.h>, whose
// struct tcp_info clashes with glibc's older one in <netinet/tcp.h>.
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <string>

#include "carrier/carrier.h"

namespace lp {

// One getsockopt(TCP_INFO), kept as the kernel's bytes: its readers view them through different
// struct tcp_info definitions (glibc's in tcp_socket.cpp, the kernel's here), so one read can serve
// a whole lookup, and every answer in it describes the same instant.
struct TcpInfoBytes {
  unsigned char bytes[512] = {};  // more than either struct tcp_info (asserted where they are read)
  socklen_t length = 0;           // what the kernel filled
  bool valid = false;             // false: the getsockopt failed
  // Fills `size` bytes at `info` as a getsockopt of that size would have (the rest zero); returns
  // the length filled. Not a template over the struct: glibc's and the kernel's are both
  // `tcp_info`, so copy_to<tcp_info> would be two functions with one name, and the linker keeps
  // one of them (an unoptimised build read the kernel's fields through glibc's 104 bytes).
  socklen_t copy_to(void* info, std::size_t size) const;
};
TcpInfoBytes read_tcp_info_bytes(int fd);

LinkPathInfo read_link_path_info(int fd);
// The SYN-ACK acknowledged data sent in the SYN (dialler), or the SYN's data was taken (acceptor):
// TCP_INFO's TCPI_OPT_SYN_DATA.
bool read_syn_data_acked(int fd);
// The congestion window the next write will find (idle_restart.h: `restarts_after_idle` when the
// host and the socket's congestion control restart idle windows; on a `paced` one what its pacing
// sends soon; `bbr_set_up_now`: the write will switch the socket to bbr, which paces from its
// initial rate), what is in flight and what waits unsent, from one TCP_INFO read.
StreamWindow stream_window_from(const TcpInfoBytes& tcp_info_bytes, bool restarts_after_idle, bool paced,
                                bool bbr_set_up_now);
// The host's tcp_slow_start_after_idle (this process's network namespace), read once.
bool host_restarts_idle_connections();
// getpeername() as a numeric address without the port ("" on failure).
std::string read_peer_address(int fd);
// The numeric text of an address (as read_peer_address gives it); "" if it has none.
std::string address_text(const sockaddr_storage& address);

}  // namespace lp
