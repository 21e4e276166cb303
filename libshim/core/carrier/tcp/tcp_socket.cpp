#include "carrier/tcp/tcp_socket.h"

#include <netdb.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "carrier/tcp/idle_restart.h"  // kLinuxInitialWindow, window_after_idle
#include "system_call.h"
#include "wire/wire_frame.h"  // kFirstSpillStream

namespace lp {
namespace {

// fall_back_if_unsuited() treats a pause as an idle restart once it is within this margin of the
// RTO, so that the few microseconds between its check and the kernel's cannot slip past it.
// Back-to-back bursts pause about one RTT, well below Linux's RTO (>= RTT + 200 ms).
constexpr std::uint32_t kIdleRestartMarginMs = 100;
// fall_back_if_unsuited() takes a slow start that ended without a loss below this share of the
// path's BDP for a false exit, and restarts it: cubic's HyStart ends slow start when ACKs come late
// or spread out, as they do behind the peer's own data, and cubic's growth from a small window at
// a long RTT takes many seconds to reach the BDP. Below half the BDP a slow start cannot overfill
// the path; a real exit near the BDP stands. A restart beats a switch to bbr (which paces a burst
// after a pause).
constexpr double kFalseSlowStartExitBdpShare = 0.5;
// The same for a stream the kernel paces (tcp_socket.h, pace_large_frames): its slow start sends at
// 2 x window per RTT, not in bursts, and its send buffer bounds its flight, so an exit below the
// whole BDP is a false one too (HyStart can end it just above half the BDP).
constexpr double kPacedFalseSlowStartExitBdpShare = 1.0;

// Linux doubles SO_SNDBUF/SO_RCVBUF values for bookkeeping overhead and reports the doubled value.
constexpr std::size_t kKernelBufferFactor = 2;
constexpr int kListenBacklog = 128;
// TCP Fast Open on the listener (TCP_FASTOPEN's value): how many connections opened by a SYN's
// data may wait for the end of their 3-way handshake at once. Beyond it a SYN's data waits for the
// handshake, as without Fast Open (nothing is lost). A new session dials up to 10 connections at
// once (2 streams and 8 spill streams): the listen backlog's size leaves room for a dozen peers.
constexpr int kFastOpenQueue = kListenBacklog;
// net.ipv4.tcp_fastopen's bit for the server side (Documentation/networking/ip-sysctl.rst): without
// it a listener's TCP_FASTOPEN is accepted and does nothing.
constexpr int kFastOpenServerBit = 2;
constexpr const char* kFastOpenSysctl = "/proc/sys/net/ipv4/tcp_fastopen";
// SO_MAX_PACING_RATE that caps nothing yet switches the kernel's TCP pacing on: ~0 means "no
// maximum" and leaves a socket unpaced; any other value marks it SK_PACING_NEEDED.
constexpr std::uint64_t kUncappedPacingRate = ~std::uint64_t{0} - 1;

int get_int_option(int fd, int level, int name) {
  int value = 0;
  socklen_t length = sizeof value;
  SystemCall("getsockopt", ::getsockopt(fd, level, name, &value, &length));
  return value;
}

void set_int_option(int fd, int level, int name, int value, const char* what) {
  SystemCall(what, ::setsockopt(fd, level, name, &value, sizeof value));
}

// Sets one buffer: SO_*BUFFORCE where permitted (root), else SO_*BUF (capped by net.core.*mem_max).
// Returns whether the forced variant worked.
bool set_buffer(int fd, int forced_option, int option, std::size_t wanted, const char* what) {
  const int value = static_cast<int>(std::min<std::size_t>(wanted, INT32_MAX / 2));
  if (::setsockopt(fd, SOL_SOCKET, forced_option, &value, sizeof value) == 0) return true;
  set_int_option(fd, SOL_SOCKET, option, value, what);
  return false;
}

void size_buffers(int fd, const Config& config, SocketTuning& tuning) {
  // A measured buffer starts with the kernel's autotuning (0 requested): an unlocked receive
  // buffer also makes the SYN announce the largest window scale the host allows, so that the
  // buffer can be raised on the live socket once the path is measured (resize_buffers).
  tuning.requested_receive = config.measured_receive_buffer() ? 0 : config.effective_receive_buffer();
  tuning.requested_send = config.measured_send_buffer() ? 0 : config.effective_send_buffer();
  bool forced = true;
  if (tuning.requested_receive != 0) {
    forced &= set_buffer(fd, SO_RCVBUFFORCE, SO_RCVBUF, tuning.requested_receive, "setsockopt SO_RCVBUF");
  }
  if (tuning.requested_send != 0) {
    forced &= set_buffer(fd, SO_SNDBUFFORCE, SO_SNDBUF, tuning.requested_send, "setsockopt SO_SNDBUF");
  }
  tuning.forced = forced && (tuning.requested_receive != 0 || tuning.requested_send != 0);
  tuning.send_buffer = static_cast<std::size_t>(get_int_option(fd, SOL_SOCKET, SO_SNDBUF));
  tuning.receive_buffer = static_cast<std::size_t>(get_int_option(fd, SOL_SOCKET, SO_RCVBUF));
  if (tuning.receive_buffer < tuning.requested_receive * kKernelBufferFactor ||
      tuning.send_buffer < tuning.requested_send * kKernelBufferFactor) {
    tuning.note += "socket buffers capped by net.core.[rw]mem_max at " + std::to_string(tuning.send_buffer / 2) +
                   "/" + std::to_string(tuning.receive_buffer / 2) + " bytes (wanted " +
                   std::to_string(tuning.requested_send) + "/" + std::to_string(tuning.requested_receive) +
                   "; SO_*BUFFORCE needs root); ";
  }
}

}  // namespace

std::string congestion_wanted(const Config& config, std::size_t stream) {
  return resolve_congestion(config.congestion_for_stream(stream), host_restarts_idle_connections(),
                            !config.measured_send_buffer());
}

void pace_large_frames(int fd, SocketTuning& tuning) {
  if (tuning.kernel_paced || !large_frames_need_pacing(tuning.congestion, tuning.small_frames)) return;
  // The kernel then paces at 1.2 x window / smoothed RTT (2 x in slow start).
  if (::setsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, &kUncappedPacingRate, sizeof kUncappedPacingRate) != 0) {
    tuning.note += std::string("kernel pacing unavailable (") + std::strerror(errno) + "); ";
    return;
  }
  tuning.kernel_paced = true;
}

void choose_congestion(int fd, const std::string& wanted, SocketTuning& tuning) {
  if (wanted != "system") {
    if (::setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, wanted.data(), static_cast<socklen_t>(wanted.size())) != 0) {
      tuning.note += "congestion control '" + wanted + "' unavailable (" + std::strerror(errno) +
                     "), using the system default; ";
    }
  }
  char name[32] = {};
  socklen_t length = sizeof name - 1;
  if (::getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, &length) == 0) tuning.congestion = name;
}

namespace {

// Linux's idle restart (tcp_cwnd_restart) halves the window once for every RTO of idleness after
// the first, down to the initial window, and keeps ssthresh at 3/4 of the old window or more. A
// window that is still half a BDP or more after that sends any burst of up to that size at once,
// and regrows to the old one in a round trip of slow start: cheaper than bbr, which paces a burst
// after a pause at its bandwidth estimate. A small window (a 1 KiB workload's) does not survive:
// there the switch is the better deal (config.h).
bool window_survives_idle_restart(const tcp_info& info, const SocketTuning& tuning) {
  if (tuning.path_bdp_bytes == 0 || info.tcpi_rto == 0) return false;  // nothing to judge by: switch
  const std::uint32_t window = window_after_idle(
      info.tcpi_snd_cwnd, std::uint64_t{info.tcpi_last_data_sent} + kIdleRestartMarginMs, info.tcpi_rto / 1000);
  return static_cast<double>(window) * info.tcpi_snd_mss >=
         kFalseSlowStartExitBdpShare * static_cast<double>(tuning.path_bdp_bytes);
}

}  // namespace

CongestionVerdict judge_congestion(const tcp_info& info, const SocketTuning& tuning) {
  if (info.tcpi_total_retrans > 0) {
    return {CongestionRemedy::kFallBack, std::to_string(info.tcpi_total_retrans) + " retransmission(s)"};
  }
  // A spill stream only ever carries what fits its window at once: an idle restart's initial window
  // is what it is for, and bbr would pace those bursts over a round trip. An idle restart only
  // shrinks a window above the initial one: a connection that has not grown past it (e.g. idle
  // right after its handshake) loses nothing and keeps its congestion control.
  // On a host that keeps windows across idle (tcp_slow_start_after_idle = 0) no restart is coming.
  if (tuning.host_restarts_idle && !tuning.spill_stream && info.tcpi_unacked == 0 &&
      info.tcpi_snd_cwnd > kLinuxInitialWindow &&
      info.tcpi_last_data_sent + kIdleRestartMarginMs >= info.tcpi_rto / 1000 &&
      !window_survives_idle_restart(info, tuning)) {
    return {CongestionRemedy::kFallBack, "an idle restart (" + std::to_string(info.tcpi_last_data_sent) +
                                             " ms idle, RTO " + std::to_string(info.tcpi_rto / 1000) + " ms)"};
  }
  const double false_exit_share = tuning.kernel_paced ? kPacedFalseSlowStartExitBdpShare : kFalseSlowStartExitBdpShare;
  if (info.tcpi_snd_ssthresh != 0 &&  // 0: still in the initial slow start
      static_cast<double>(info.tcpi_snd_ssthresh) * info.tcpi_snd_mss <
          false_exit_share * static_cast<double>(tuning.path_bdp_bytes)) {
    return {CongestionRemedy::kRestartSlowStart,
            "slow start ended without a loss at " + std::to_string(info.tcpi_snd_ssthresh) + " segments, below " +
                (tuning.kernel_paced ? "the" : "half the") + " path's bandwidth-delay product (" +
                std::to_string(tuning.path_bdp_bytes) + " bytes)"};
  }
  return {};
}

static_assert(sizeof(tcp_info) <= sizeof(TcpInfoBytes::bytes));

std::string congestion_for_next_write(const TcpInfoBytes& tcp_info_bytes, const SocketTuning& tuning) {
  if (tuning.congestion_fallback.empty() || tuning.congestion == tuning.congestion_fallback) return tuning.congestion;
  if (!tcp_info_bytes.valid) return tuning.congestion;
  tcp_info info{};
  tcp_info_bytes.copy_to(&info, sizeof info);
  return judge_congestion(info, tuning).remedy == CongestionRemedy::kFallBack ? tuning.congestion_fallback
                                                                               : tuning.congestion;
}

bool fall_back_if_unsuited(int fd, SocketTuning& tuning) {
  if (tuning.congestion_fallback.empty() || tuning.congestion == tuning.congestion_fallback) return false;
  tcp_info info{};
  socklen_t length = sizeof info;
  if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &length) != 0) return false;
  const CongestionVerdict verdict = judge_congestion(info, tuning);
  if (verdict.remedy == CongestionRemedy::kNone) return false;
  const std::string before = tuning.congestion;
  if (verdict.remedy == CongestionRemedy::kRestartSlowStart) {
    // bbr's init sets ssthresh to "infinite" and keeps the window; switching straight back leaves
    // the connection on its own congestion control, in slow start from the window it has.
    choose_congestion(fd, tuning.congestion_fallback, tuning);
    choose_congestion(fd, before, tuning);
    if (++tuning.slow_start_restarts == 1) tuning.note += "slow start restarted after " + verdict.why + "; ";
    return false;
  }
  choose_congestion(fd, tuning.congestion_fallback, tuning);
  tuning.note += "switched from " + before + " to " + tuning.congestion + " after " + verdict.why + "; ";
  tuning.congestion_fallback.clear();  // once: never back (bbr leaves the socket paced)
  return true;
}

void request_fast_open_connect(int fd, SocketTuning& tuning) {
  const int one = 1;
  // Best effort (Linux >= 4.11): without it the dial is an ordinary one.
  if (::setsockopt(fd, IPPROTO_TCP, TCP_FASTOPEN_CONNECT, &one, sizeof one) != 0) {
    tuning.note += std::string("no TCP Fast Open on dials (TCP_FASTOPEN_CONNECT: ") + std::strerror(errno) + "); ";
  }
}

FileDescriptor make_tuned_tcp_socket(int family, const Config& config, std::size_t stream, SocketTuning& tuning) {
  FileDescriptor fd(SystemCall("socket", ::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)));
  size_buffers(fd.get(), config, tuning);
  set_int_option(fd.get(), IPPROTO_TCP, TCP_NODELAY, 1, "setsockopt TCP_NODELAY");
  choose_congestion(fd.get(), congestion_wanted(config, stream), tuning);
  tuning.congestion_fallback = config.congestion_fallback;
  tuning.spill_stream = stream >= kFirstSpillStream;
  tuning.small_frames = stream == 0 || tuning.spill_stream;
  tuning.path_bdp_bytes = static_cast<std::size_t>(config.bdp_bytes());
  tuning.host_restarts_idle = host_restarts_idle_connections();
  pace_large_frames(fd.get(), tuning);
  return fd;
}

void resize_socket_buffers(int fd, std::size_t send, std::size_t receive, SocketTuning& tuning) {
  // Best effort: a refused size leaves the socket as it was, and the granted size is what counts.
  if (receive != 0) {
    const int value = static_cast<int>(std::min<std::size_t>(receive, INT32_MAX / 2));
    if (::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &value, sizeof value) != 0) {
      ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &value, sizeof value);
    }
    // A larger buffer alone does not widen the advertised window: Linux fixes the window clamp
    // from the buffer at set-up (tcp_init_buffer_space) and only its autotuning moves it. So the
    // clamp is raised to the requested size too (the window the kernel's doubled buffer backs);
    // never lowered here, and the window scale announced in the SYN still bounds it.
    int clamp = 0;
    socklen_t clamp_length = sizeof clamp;
    if (::getsockopt(fd, IPPROTO_TCP, TCP_WINDOW_CLAMP, &clamp, &clamp_length) == 0 && clamp < value) {
      ::setsockopt(fd, IPPROTO_TCP, TCP_WINDOW_CLAMP, &value, sizeof value);
    }
    tuning.requested_receive = receive;
  }
  if (send != 0) {
    const int value = static_cast<int>(std::min<std::size_t>(send, INT32_MAX / 2));
    if (::setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &value, sizeof value) != 0) {
      ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &value, sizeof value);
    }
    tuning.requested_send = send;
  }
  int value = 0;
  socklen_t length = sizeof value;
  if (::getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &value, &length) == 0) tuning.send_buffer = static_cast<std::size_t>(value);
  length = sizeof value;
  if (::getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &value, &length) == 0) tuning.receive_buffer = static_cast<std::size_t>(value);
}

void tune_accepted_socket(int fd, const Config& config, SocketTuning& tuning) {
  tuning.requested_receive = config.measured_receive_buffer() ? 0 : config.effective_receive_buffer();
  tuning.requested_send = config.measured_send_buffer() ? 0 : config.effective_send_buffer();
  tuning.send_buffer = static_cast<std::size_t>(get_int_option(fd, SOL_SOCKET, SO_SNDBUF));
  tuning.receive_buffer = static_cast<std::size_t>(get_int_option(fd, SOL_SOCKET, SO_RCVBUF));
  set_int_option(fd, IPPROTO_TCP, TCP_NODELAY, 1, "setsockopt TCP_NODELAY");
  choose_congestion(fd, congestion_wanted(config, 0), tuning);  // until HELLO names the stream
  tuning.small_frames = true;
  tuning.congestion_fallback = config.congestion_fallback;
  tuning.path_bdp_bytes = static_cast<std::size_t>(config.bdp_bytes());
  tuning.host_restarts_idle = host_restarts_idle_connections();
}

void enable_fast_open_listener(int fd, SocketTuning& tuning) {
  // Best effort: a listener without it accepts as before.
  if (::setsockopt(fd, IPPROTO_TCP, TCP_FASTOPEN, &kFastOpenQueue, sizeof kFastOpenQueue) != 0) {
    tuning.note += std::string("no TCP Fast Open on the listener (TCP_FASTOPEN: ") + std::strerror(errno) + "); ";
    return;
  }
  std::ifstream sysctl(kFastOpenSysctl);
  int mode = 0;
  if (sysctl >> mode && (mode & kFastOpenServerBit) == 0) {
    tuning.note += "net.ipv4.tcp_fastopen=" + std::to_string(mode) +
                   " lacks 2 (server): a dialler's SYN carries no data here; ";
  }
}

FileDescriptor listen_tuned(const Config& config, SocketTuning& tuning, std::uint16_t& bound_port) {
  HostPort where;
  try {
    where = parse_host_port(config.listen, false);
  } catch (const std::invalid_argument& e) {
    throw ConfigError(std::string("LONGPIPE_LISTEN: ") + e.what());
  }
  sockaddr_storage address{};
  socklen_t length = 0;
  if (where.host.empty()) {
    auto* in = reinterpret_cast<sockaddr_in*>(&address);
    in->sin_family = AF_INET;
    in->sin_addr.s_addr = htonl(INADDR_ANY);
    in->sin_port = htons(where.port);
    length = sizeof(sockaddr_in);
  } else {
    address = resolve(where, length);
  }
  FileDescriptor fd = make_tuned_tcp_socket(address.ss_family, config, 0, tuning);
  set_int_option(fd.get(), SOL_SOCKET, SO_REUSEADDR, 1, "setsockopt SO_REUSEADDR");
  SystemCall("bind to LONGPIPE_LISTEN='" + config.listen + "'",
             ::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), length));
  SystemCall("listen", ::listen(fd.get(), kListenBacklog));
  if (config.fast_open) enable_fast_open_listener(fd.get(), tuning);
  sockaddr_storage bound{};
  socklen_t bound_length = sizeof bound;
  SystemCall("getsockname", ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &bound_length));
  bound_port = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                                 : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  return fd;
}

sockaddr_storage resolve(const HostPort& where, socklen_t& length) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(where.port);
  const int status = ::getaddrinfo(where.host.c_str(), port.c_str(), &hints, &found);
  if (status != 0 || found == nullptr) {
    throw std::runtime_error("cannot resolve '" + where.host + "': " + ::gai_strerror(status));
  }
  sockaddr_storage address{};
  std::memcpy(&address, found->ai_addr, found->ai_addrlen);
  length = found->ai_addrlen;
  ::freeaddrinfo(found);
  return address;
}

void rearm_quick_ack(int fd) {
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);  // best effort: an optimisation only
}

TcpWindowInfo read_window_info(int fd) {
  tcp_info info{};
  socklen_t length = sizeof info;
  TcpWindowInfo out;
  if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &length) != 0) return out;
  out.snd_wscale = info.tcpi_snd_wscale;
  out.rcv_wscale = info.tcpi_rcv_wscale;
  out.snd_cwnd = info.tcpi_snd_cwnd;
  out.snd_mss = info.tcpi_snd_mss;
  out.rtt_us = info.tcpi_rtt;
  out.rttvar_us = info.tcpi_rttvar;
  out.total_retrans = info.tcpi_total_retrans;
  return out;
}

int take_socket_error(int fd) { return get_int_option(fd, SOL_SOCKET, SO_ERROR); }

}  // namespace lp
