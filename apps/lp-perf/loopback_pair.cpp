#include "loopback_pair.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "system_call.h"

namespace lp {

LoopbackPair connect_loopback_pair() {
  FileDescriptor listener(SystemCall("socket", ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  SystemCall("bind", ::bind(listener.get(), reinterpret_cast<sockaddr*>(&address), sizeof address));
  SystemCall("listen", ::listen(listener.get(), 1));
  socklen_t length = sizeof address;
  SystemCall("getsockname", ::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&address), &length));
  LoopbackPair pair;
  pair.client = FileDescriptor(SystemCall("socket", ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)));
  SystemCall("connect", ::connect(pair.client.get(), reinterpret_cast<sockaddr*>(&address), sizeof address));
  pair.server = FileDescriptor(SystemCall("accept", ::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC)));
  return pair;
}

}  // namespace lp
