#include "tun_device.h"

#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sched.h>
#include <sys/ioctl.h>

#include <cerrno>
#include <cstring>

#include "system_call.h"

namespace lp::netem {

namespace {

// Switches this (single-threaded) process into a network namespace and back again on scope exit,
// so that a TUN device can be created there while the emulator itself stays where it started.
class NetworkNamespaceVisit {
 public:
  explicit NetworkNamespaceVisit(const std::string& netns)
      : home_(SystemCall("open /proc/self/ns/net", ::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC))) {
    const std::string path = "/var/run/netns/" + netns;
    FileDescriptor target(SystemCall("open network namespace " + path, ::open(path.c_str(), O_RDONLY | O_CLOEXEC)));
    SystemCall("enter network namespace " + netns, ::setns(target.get(), CLONE_NEWNET));
  }
  ~NetworkNamespaceVisit() {
    // Failing to return would leave the emulator in the wrong namespace: nothing sane can follow.
    if (::setns(home_.get(), CLONE_NEWNET) < 0) std::abort();
  }
  NetworkNamespaceVisit(const NetworkNamespaceVisit&) = delete;
  NetworkNamespaceVisit& operator=(const NetworkNamespaceVisit&) = delete;

 private:
  FileDescriptor home_;
};

}  // namespace

TunDevice::TunDevice(const std::string& netns, const std::string& name) : netns_(netns) {
  NetworkNamespaceVisit visit(netns);
  fd_.reset(SystemCall("open /dev/net/tun", ::open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC)));
  ifreq request{};
  request.ifr_flags = IFF_TUN | IFF_NO_PI;  // raw IP packets, no GSO metadata (no IFF_VNET_HDR)
  std::strncpy(request.ifr_name, name.c_str(), IFNAMSIZ - 1);
  SystemCall("create TUN device " + name + " in namespace " + netns, ::ioctl(fd_.get(), TUNSETIFF, &request));
}

std::size_t TunDevice::read_packet(std::span<std::uint8_t> buffer) {
  const ssize_t size = ::read(fd_.get(), buffer.data(), buffer.size());
  if (size < 0 && (errno == EAGAIN || errno == EINTR)) return 0;
  return static_cast<std::size_t>(SystemCall("read from TUN device in " + netns_, size));
}

bool TunDevice::write_packet(std::span<const std::uint8_t> packet) {
  return ::write(fd_.get(), packet.data(), packet.size()) == static_cast<ssize_t>(packet.size());
}

}  // namespace lp::netem
