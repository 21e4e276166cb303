// TCP sockets tuned for long fat paths (redis anet.c in spirit: small helpers, each says why).
//
//   - Socket buffers are sized to the path's bandwidth-delay product BEFORE listen/connect: the
//     window-scale option is negotiated in the SYN, from the receive buffer at that moment.
//     SO_*BUFFORCE (root) passes net.core.*mem_max; otherwise the kernel caps SO_*BUF at it and
//     the cap is reported (PLATFORM.md: 4 MiB here).
//   - TCP_NODELAY: a message is sent when handed over, not after Nagle's wait.
//   - TCP_CONGESTION per stream (LONGPIPE_CONGESTION): by default cubic for the small-message
//     stream (a burst leaves at once) and "auto" for the large-message one (idle_restart.h);
//     config.h says why. Falls back to the system default, with a note.
//   - TCP Fast Open (LONGPIPE_FAST_OPEN): HELLO rides in the SYN to a host that gave a cookie before.
//   - TCP_QUICKACK is not sticky in Linux: re-armed after every read to keep delayed ACKs off.
#pragma once

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "carrier/carrier.h"
#include "config.h"
#include "wire/host_port.h"
#include "file_descriptor.h"
#include "carrier/tcp/tcp_path_info.h"

namespace lp {

// A non-blocking, close-on-exec TCP socket of `family`, tuned per config (buffers, no-delay,
// congestion control of stream `stream`); `tuning` receives what was granted.
FileDescriptor make_tuned_tcp_socket(int family, const Config& config, std::size_t stream, SocketTuning& tuning);
// Sets TCP_CONGESTION (unless "system"), noting a refusal; records the one in effect.
void choose_congestion(int fd, const std::string& wanted, SocketTuning& tuning);
// The congestion control stream `stream` asks for: LONGPIPE_CONGESTION's entry, "auto" resolved for
// this host and configuration (idle_restart.h, resolve_congestion).
std::string congestion_wanted(const Config& config, std::size_t stream);
// Switches on the kernel's pacing for a stream of large frames whose congestion control does not
// pace itself (idle_restart.h, large_frames_need_pacing); once per socket, never off again.
void pace_large_frames(int fd, SocketTuning& tuning);
// Called before writing to an established connection: if its congestion control is not the
// fallback and TCP_INFO shows it is about to do badly -- a retransmission happened; or nothing is
// in flight, the window has grown past the initial one and the last data left about one RTO ago
// (the kernel would restart slow start on this write and shrink the window) -- switches the socket
// to the fallback, for good, and says so in the note. Returns whether it switched. If instead slow
// start ended without a loss far below the path's bandwidth-delay product (below half; below the
// whole on a stream the kernel paces, pace_large_frames; cubic's HyStart misled by ACKs queued
// behind traffic the other way; growth at a long RTT is then slow), restarts slow
// start from the current window: a switch to the fallback and straight back (bbr's init resets
// ssthresh; the socket stays paced from then on, at twice the window per RTT in slow start).
// One getsockopt while a switch is still possible; nothing afterwards.
bool fall_back_if_unsuited(int fd, SocketTuning& tuning);
// The congestion control the next write will run on: the fallback when fall_back_if_unsuited()
// would switch to it now (judged from `tcp_info_bytes`, the TCP_INFO read the caller also takes
// the window from), else the one in effect. The spill decision judges a stream by it: else the
// write that switches a stream to bbr gets a window's worth, which bbr then paces over a round trip.
std::string congestion_for_next_write(const TcpInfoBytes& tcp_info_bytes, const SocketTuning& tuning);
// The decision of fall_back_if_unsuited(), pure: what `info` calls for, and why.
enum class CongestionRemedy { kNone, kFallBack, kRestartSlowStart };
struct CongestionVerdict {
  CongestionRemedy remedy = CongestionRemedy::kNone;
  std::string why;
};
CongestionVerdict judge_congestion(const tcp_info& info, const SocketTuning& tuning);
// Re-applies the per-connection options to an accepted socket (buffers are inherited from the
// listener, whose SYN-ACK advertised them).
void tune_accepted_socket(int fd, const Config& config, SocketTuning& tuning);

// Requests socket buffers on a live socket (0 = leave that one; SO_*BUFFORCE where permitted) and
// records the request and the granted sizes in `tuning`. Raising SO_RCVBUF works on a live socket
// up to the window scale announced in the SYN (size_buffers leaves measured buffers unlocked, so
// that scale is the host's largest).
void resize_socket_buffers(int fd, std::size_t send, std::size_t receive, SocketTuning& tuning);

// TCP Fast Open (LONGPIPE_FAST_OPEN): on a socket before its connect(), TCP_FASTOPEN_CONNECT (with
// the peer's cookie cached, connect() returns at once and the first write leaves in the SYN); on a
// listener, TCP_FASTOPEN. Best effort: a refusal, or a host whose net.ipv4.tcp_fastopen lacks the
// server bit, is said in the tuning's note and changes nothing else.
void request_fast_open_connect(int fd, SocketTuning& tuning);
void enable_fast_open_listener(int fd, SocketTuning& tuning);

// Binds and listens per LONGPIPE_LISTEN; returns the socket and fills the port actually bound.
FileDescriptor listen_tuned(const Config& config, SocketTuning& tuning, std::uint16_t& bound_port);

// Resolves host:port to an IPv4/IPv6 address (getaddrinfo; /etc/hosts names resolve at once).
sockaddr_storage resolve(const HostPort& where, socklen_t& length);

void rearm_quick_ack(int fd);
TcpWindowInfo read_window_info(int fd);
// Pending socket error after a non-blocking connect (0 = connected).
int take_socket_error(int fd);

}  // namespace lp
