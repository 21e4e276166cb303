// TunDevice: a TUN device (layer 3, no packet-info header) created inside a named network namespace
// and read/written from the namespace the caller lives in. Non-blocking; the device disappears when
// the descriptor is closed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "file_descriptor.h"

namespace lp::netem {

class TunDevice {
 public:
  // Enters /var/run/netns/<netns>, creates TUN device `name` there and returns to the caller's namespace.
  TunDevice(const std::string& netns, const std::string& name);

  int fd() const { return fd_.get(); }
  const std::string& netns() const { return netns_; }

  // Reads one packet into `buffer`; returns its size, or 0 when none is waiting.
  std::size_t read_packet(std::span<std::uint8_t> buffer);

  // Hands one packet to the namespace's IP stack; false if the kernel refused it (e.g. link down).
  bool write_packet(std::span<const std::uint8_t> packet);

 private:
  std::string netns_;
  FileDescriptor fd_;
};

}  // namespace lp::netem
