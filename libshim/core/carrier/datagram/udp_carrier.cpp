#include "carrier/datagram/udp_carrier.h"

#include <arpa/inet.h>
#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <optional>

#include "wire/host_port.h"
#include "system_call.h"
#include "carrier/tcp/tcp_socket.h"

namespace lp {
namespace {

// Largest datagram read: ours are at most kMaxDatagramSize (1472); a longer one is cut (MSG_TRUNC)
// and dropped as not ours.
constexpr std::size_t kReceiveSize = 2048;

void set_port(sockaddr_storage& address, std::uint16_t port) {
  if (address.ss_family == AF_INET6) {
    reinterpret_cast<sockaddr_in6*>(&address)->sin6_port = htons(port);
  } else {
    reinterpret_cast<sockaddr_in*>(&address)->sin_port = htons(port);
  }
}

// SO_*BUFFORCE where permitted (root), else SO_*BUF (capped by net.core.*mem_max).
bool set_buffer(int fd, int forced_option, int option, std::size_t wanted) {
  const int value = static_cast<int>(std::min<std::size_t>(wanted, INT32_MAX / 2));
  if (::setsockopt(fd, SOL_SOCKET, forced_option, &value, sizeof value) == 0) return true;
  SystemCall("setsockopt SO_*BUF (UDP)", ::setsockopt(fd, SOL_SOCKET, option, &value, sizeof value));
  return false;
}

// Room for one SCM_TIMESTAMPNS control message per datagram read.
constexpr std::size_t kControlSize = CMSG_SPACE(sizeof(timespec));

std::int64_t nanoseconds_of(const timespec& t) { return std::int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec; }

std::int64_t realtime_now_ns() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return nanoseconds_of(now);
}

// The kernel's receive time of a datagram read with recvmmsg, if it gave one.
std::optional<std::int64_t> kernel_arrival(msghdr& header) {
  for (cmsghdr* c = CMSG_FIRSTHDR(&header); c != nullptr; c = CMSG_NXTHDR(&header, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS && c->cmsg_len >= CMSG_LEN(sizeof(timespec))) {
      timespec t{};
      std::memcpy(&t, CMSG_DATA(c), sizeof t);
      return nanoseconds_of(t);
    }
  }
  return std::nullopt;
}

std::size_t get_buffer(int fd, int option) {
  int value = 0;
  socklen_t length = sizeof value;
  ::getsockopt(fd, SOL_SOCKET, option, &value, &length);
  return static_cast<std::size_t>(value);
}

}  // namespace

bool DatagramAddress::operator<(const DatagramAddress& other) const {
  if (length != other.length) return length < other.length;
  return std::memcmp(&storage, &other.storage, length) < 0;
}

bool peer_datagram_address(int tcp_fd, std::uint16_t port, DatagramAddress& address) {
  address = {};
  address.length = sizeof address.storage;
  if (::getpeername(tcp_fd, reinterpret_cast<sockaddr*>(&address.storage), &address.length) != 0) return false;
  set_port(address.storage, port);
  // Only the family, address and port identify a peer: clear what else the kernel filled in.
  if (address.storage.ss_family == AF_INET6) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&address.storage);
    in6->sin6_flowinfo = 0;
  }
  return true;
}

UdpCarrier::UdpCarrier(const Config& config, std::uint16_t port) : buffers_(kBatch * kReceiveSize) {
  const HostPort where = parse_host_port(config.listen, false);
  DatagramAddress local;
  if (where.host.empty()) {
    auto* in = reinterpret_cast<sockaddr_in*>(&local.storage);
    in->sin_family = AF_INET;
    in->sin_addr.s_addr = htonl(INADDR_ANY);
    local.length = sizeof(sockaddr_in);
  } else {
    local.storage = resolve(where, local.length);
  }
  set_port(local.storage, port);
  fd_ = FileDescriptor(SystemCall("socket (UDP)", ::socket(local.storage.ss_family,
                                                           SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)));
  const std::size_t wanted = std::max(kMinimumBuffer, config.effective_receive_buffer());
  tuning_.requested_receive = tuning_.requested_send = wanted;
  tuning_.forced = set_buffer(fd_.get(), SO_RCVBUFFORCE, SO_RCVBUF, wanted) &
                   set_buffer(fd_.get(), SO_SNDBUFFORCE, SO_SNDBUF, wanted);
  tuning_.receive_buffer = get_buffer(fd_.get(), SO_RCVBUF);
  tuning_.send_buffer = get_buffer(fd_.get(), SO_SNDBUF);
  tuning_.congestion = "datagram";
  if (!tuning_.forced) tuning_.note += "UDP socket buffers capped by net.core.[rw]mem_max (SO_*BUFFORCE needs root); ";
  // Receive times: without them (an old kernel) a datagram is dated when it is read, and so is
  // one that arrives in the moment before the kernel has turned them on (deferred work).
  const int on = 1;
  if (::setsockopt(fd_.get(), SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) != 0) {
    tuning_.note += "no kernel receive times (SO_TIMESTAMPNS); ";
  }
  SystemCall("bind UDP to port " + std::to_string(port) + " (beside the TCP listener)",
             ::bind(fd_.get(), reinterpret_cast<const sockaddr*>(&local.storage), local.length));
}

std::size_t UdpCarrier::receive(const Sink& sink, std::size_t limit) {
  std::size_t total = 0;
  while (total < limit) {
    const std::size_t batch = std::min(kBatch, limit - total);
    mmsghdr messages[kBatch] = {};
    iovec vectors[kBatch] = {};
    DatagramAddress from[kBatch];
    alignas(cmsghdr) std::byte control[kBatch][kControlSize];
    for (std::size_t i = 0; i < batch; ++i) {
      vectors[i] = {buffers_.data() + i * kReceiveSize, kReceiveSize};
      messages[i].msg_hdr.msg_iov = &vectors[i];
      messages[i].msg_hdr.msg_iovlen = 1;
      messages[i].msg_hdr.msg_name = &from[i].storage;
      messages[i].msg_hdr.msg_namelen = sizeof from[i].storage;
      messages[i].msg_hdr.msg_control = control[i];
      messages[i].msg_hdr.msg_controllen = kControlSize;
    }
    const int count = ::recvmmsg(fd_.get(), messages, static_cast<unsigned>(batch), MSG_DONTWAIT, nullptr);
    if (count < 0) {
      if (errno == EINTR) continue;
      return total;  // EAGAIN; or a pending ICMP error, reported once and gone: try on the next event
    }
    const std::int64_t read_at = realtime_now_ns();
    for (int i = 0; i < count; ++i) {
      if (messages[i].msg_hdr.msg_flags & MSG_TRUNC) continue;  // longer than any datagram of ours
      from[i].length = messages[i].msg_hdr.msg_namelen;
      sink(from[i], std::span(buffers_.data() + static_cast<std::size_t>(i) * kReceiveSize, messages[i].msg_len),
           kernel_arrival(messages[i].msg_hdr).value_or(read_at));
    }
    total += static_cast<std::size_t>(count);
    if (static_cast<std::size_t>(count) < batch) return total;
  }
  return total;
}

bool UdpCarrier::send(const DatagramAddress& to, std::deque<std::vector<std::byte>>& queue) {
  while (!queue.empty()) {
    const std::size_t batch = std::min(kBatch, queue.size());
    mmsghdr messages[kBatch] = {};
    iovec vectors[kBatch] = {};
    for (std::size_t i = 0; i < batch; ++i) {
      vectors[i] = {queue[i].data(), queue[i].size()};
      messages[i].msg_hdr.msg_iov = &vectors[i];
      messages[i].msg_hdr.msg_iovlen = 1;
      messages[i].msg_hdr.msg_name = const_cast<sockaddr_storage*>(&to.storage);
      messages[i].msg_hdr.msg_namelen = to.length;
    }
    const int count = ::sendmmsg(fd_.get(), messages, static_cast<unsigned>(batch), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (count < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) return false;
      ++send_errors_;  // ECONNREFUSED from an earlier ICMP, EHOSTUNREACH...: this one is lost
      queue.pop_front();
      continue;
    }
    for (int i = 0; i < count; ++i) queue.pop_front();
  }
  return true;
}

}  // namespace lp
