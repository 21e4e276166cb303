// An eventfd as a wake-up signal between threads: made non-blocking, signalled by adding one, drained
// by one read (the counter resets). Signals and drains ignore errors: a full or empty counter still
// means "look again".
#pragma once

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>

#include "file_descriptor.h"
#include "system_call.h"

namespace lp {

inline FileDescriptor make_eventfd() {
  return FileDescriptor(SystemCall("eventfd", ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)));
}

inline void signal_eventfd(int fd) {
  const std::uint64_t one = 1;
  [[maybe_unused]] auto ignored = ::write(fd, &one, sizeof one);
}

inline void drain_eventfd(int fd) {
  std::uint64_t value = 0;
  [[maybe_unused]] auto ignored = ::read(fd, &value, sizeof value);
}

}  // namespace lp
