#include "carrier/tcp/tcp_path_info.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <fstream>

#include "carrier/tcp/idle_restart.h"

namespace lp {

static_assert(sizeof(tcp_info) <= sizeof(TcpInfoBytes::bytes));

socklen_t TcpInfoBytes::copy_to(void* info, std::size_t size) const {
  std::memset(info, 0, size);
  const socklen_t filled = std::min<socklen_t>(length, static_cast<socklen_t>(size));
  std::memcpy(info, bytes, filled);
  return filled;
}

TcpInfoBytes read_tcp_info_bytes(int fd) {
  TcpInfoBytes out;
  out.length = sizeof out.bytes;
  out.valid = ::getsockopt(fd, IPPROTO_TCP, TCP_INFO, out.bytes, &out.length) == 0;
  if (!out.valid) out.length = 0;
  return out;
}

LinkPathInfo read_link_path_info(int fd) {
  tcp_info info{};
  socklen_t length = sizeof info;
  LinkPathInfo out;
  if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &length) != 0) return out;
  out.valid = true;
  int size = 0;
  socklen_t size_length = sizeof size;
  if (::getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, &size_length) == 0) out.send_buffer = static_cast<std::size_t>(size);
  size_length = sizeof size;
  if (::getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, &size_length) == 0) out.receive_buffer = static_cast<std::size_t>(size);
  out.rtt_us = info.tcpi_rtt;
  out.snd_cwnd = info.tcpi_snd_cwnd;
  out.snd_mss = info.tcpi_snd_mss;
  out.unacked = info.tcpi_unacked;
  out.total_retransmits = info.tcpi_total_retrans;
  out.received_per_rtt = info.tcpi_rcv_space;
  if (length > offsetof(tcp_info, tcpi_data_segs_out)) out.data_segments_out = info.tcpi_data_segs_out;
  // Older kernels return a shorter struct: fields past `length` stay 0 (= not measured).
  if (length > offsetof(tcp_info, tcpi_min_rtt)) out.min_rtt_us = info.tcpi_min_rtt;
  if (length > offsetof(tcp_info, tcpi_delivery_rate)) {
    out.delivery_rate = static_cast<double>(info.tcpi_delivery_rate);
    out.app_limited = info.tcpi_delivery_rate_app_limited != 0;
  }
  return out;
}

bool read_syn_data_acked(int fd) {
  tcp_info info{};
  socklen_t length = sizeof info;
  return ::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &length) == 0 && (info.tcpi_options & TCPI_OPT_SYN_DATA) != 0;
}

StreamWindow stream_window_from(const TcpInfoBytes& tcp_info_bytes, bool restarts_after_idle, bool paced,
                                bool bbr_set_up_now) {
  tcp_info info{};
  const socklen_t length = tcp_info_bytes.copy_to(&info, sizeof info);
  // tcpi_notsent_bytes came with Linux 4.6; without it the window is not judged (nothing spills).
  if (!tcp_info_bytes.valid || length < offsetof(tcp_info, tcpi_notsent_bytes) + sizeof info.tcpi_notsent_bytes) {
    return {};
  }
  TcpWindowSample sample;
  sample.cwnd_segments = info.tcpi_snd_cwnd;
  sample.mss = info.tcpi_snd_mss;
  sample.unacked_segments = info.tcpi_unacked;
  sample.not_sent_bytes = info.tcpi_notsent_bytes;
  sample.last_data_sent_ms = info.tcpi_last_data_sent;
  sample.rto_us = info.tcpi_rto;
  sample.paced = paced;
  sample.srtt_us = info.tcpi_rtt;
  sample.pacing_rate = bbr_set_up_now ? bbr_initial_pacing_rate(info.tcpi_snd_cwnd, info.tcpi_snd_mss, info.tcpi_rtt)
                                      : info.tcpi_pacing_rate;
  return window_for_next_write(sample, restarts_after_idle);
}

bool host_restarts_idle_connections() {
  // Per network namespace (PLATFORM.md); a process's sockets live in its own, so one read will do.
  static const bool restarts = [] {
    std::ifstream setting("/proc/sys/net/ipv4/tcp_slow_start_after_idle");
    int value = 1;  // Linux's default, if the file cannot be read
    setting >> value;
    return value != 0;
  }();
  return restarts;
}

std::string read_peer_address(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return "";
  return address_text(address);
}

std::string address_text(const sockaddr_storage& address) {
  char text[INET6_ADDRSTRLEN] = {};
  const void* raw = address.ss_family == AF_INET6
                        ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in6*>(&address)->sin6_addr)
                        : static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(&address)->sin_addr);
  if (::inet_ntop(address.ss_family, raw, text, sizeof text) == nullptr) return "";
  return text;
}

}  // namespace lp
