// UdpCarrier: the one UDP socket of an engine on the datagram carrier (LONGPIPE_CARRIER=udp). I/O
// only: it binds beside the TCP listener (same address, same port number: a peer's datagram
// address is its endpoint), sizes the socket buffers, and moves datagrams in batches
// (recvmmsg/sendmmsg). Which session a datagram belongs to is decided by its source address
// (datagram_port.h); what it means, by the session's DatagramChannel.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "carrier/carrier.h"
#include "config.h"
#include "file_descriptor.h"

namespace lp {

// A socket address as a map key.
struct DatagramAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;
  bool operator<(const DatagramAddress& other) const;
  bool operator==(const DatagramAddress& other) const { return !(*this < other) && !(other < *this); }
};

// The address of the peer of a connected TCP socket, with `port` instead of its own (a peer's
// datagrams come from its endpoint's port). False if the socket has no peer.
bool peer_datagram_address(int tcp_fd, std::uint16_t port, DatagramAddress& address);

class UdpCarrier {
 public:
  // Datagrams read or sent per system call.
  static constexpr std::size_t kBatch = 64;
  // Socket buffers: at least this (a burst of datagrams must not overflow the receive buffer while
  // the progress thread is busy), else 2 x the bandwidth-delay product as for TCP.
  static constexpr std::size_t kMinimumBuffer = 4u << 20;

  // Binds per LONGPIPE_LISTEN's host and `port` (the TCP listener's). Throws SystemError.
  UdpCarrier(const Config& config, std::uint16_t port);

  int fd() const { return fd_.get(); }
  const SocketTuning& tuning() const { return tuning_; }

  // Reads up to `limit` datagrams, calling `sink(from, bytes, arrival_ns)` for each (the bytes are
  // valid during the call only). `arrival_ns`: when the kernel received it (SO_TIMESTAMPNS, on
  // CLOCK_REALTIME), or when it was read if the kernel gave no time: a loaded receiver reads a
  // burst late and in one turn, but the kernel's times keep the spacing the path gave it (the ACKs
  // report it: wire_frame.h, AckArrivals). Returns how many were read (fewer than `limit`: the
  // socket is drained).
  using Sink = std::function<void(const DatagramAddress&, std::span<std::byte>, std::int64_t arrival_ns)>;
  std::size_t receive(const Sink& sink, std::size_t limit);

  // Sends datagrams from the front of `queue` to `to`, popping each one sent. Returns false when
  // the socket buffer is full (the rest waits for writability); datagrams refused for other reasons
  // (an unreachable peer: ICMP errors) are dropped, as the network would drop them.
  bool send(const DatagramAddress& to, std::deque<std::vector<std::byte>>& queue);

  std::uint64_t send_errors() const { return send_errors_; }

 private:
  FileDescriptor fd_;
  SocketTuning tuning_;
  std::vector<std::byte> buffers_;  // kBatch receive buffers
  std::uint64_t send_errors_ = 0;
};

}  // namespace lp
