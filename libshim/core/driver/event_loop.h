// EventLoop: epoll, waiting until one earliest deadline. Each watched descriptor carries a tag
// (a pointer the driver chooses) that comes back with its events.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "file_descriptor.h"

namespace lp {

struct LoopEvent {
  void* tag = nullptr;
  bool readable = false;  // or hung up / in error: a read will tell
  bool writable = false;
  bool failed = false;    // error or hang-up
};

class EventLoop {
 public:
  using Clock = std::chrono::steady_clock;

  EventLoop();

  // Throws SystemError.
  void add(int fd, void* tag, bool readable, bool writable);
  // Best effort: a descriptor that is already gone is ignored.
  void modify(int fd, void* tag, bool readable, bool writable);
  void remove(int fd);

  // Waits until something happens or `deadline` passes (time_point::max(): no deadline).
  const std::vector<LoopEvent>& wait(Clock::time_point deadline);

 private:
  FileDescriptor epoll_fd_;
  std::vector<LoopEvent> events_;
};

}  // namespace lp
