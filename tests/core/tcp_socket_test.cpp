// resize_socket_buffers(): a receive buffer raised on a live connection also widens the window the
// kernel may advertise (its window clamp), which Linux fixes when the connection is set up.
// Real loopback TCP sockets.
#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "loopback_pair.h"
#include "system_call.h"
#include "carrier/tcp/tcp_socket.h"

namespace {

int window_clamp(int fd) {
  int clamp = 0;
  socklen_t length = sizeof clamp;
  lp::SystemCall("getsockopt TCP_WINDOW_CLAMP", ::getsockopt(fd, IPPROTO_TCP, TCP_WINDOW_CLAMP, &clamp, &length));
  return clamp;
}

}  // namespace

TEST_CASE("a receive buffer raised on a live connection raises its window clamp, never lowers it") {
  lp::LoopbackPair pair = lp::connect_loopback_pair();
  const int fd = pair.server.get();
  // 4 MiB: within net.core.rmem_max here, so SO_RCVBUF grants it without root too.
  constexpr std::size_t kRaised = 4u << 20;
  REQUIRE(window_clamp(fd) < static_cast<int>(kRaised));  // set up from the default buffer
  lp::SocketTuning tuning;
  lp::resize_socket_buffers(fd, 0, kRaised, tuning);
  CHECK(tuning.requested_receive == kRaised);
  CHECK(window_clamp(fd) == static_cast<int>(kRaised));
  lp::resize_socket_buffers(fd, 0, kRaised / 4, tuning);  // a smaller buffer leaves the clamp
  CHECK(window_clamp(fd) == static_cast<int>(kRaised));
}
