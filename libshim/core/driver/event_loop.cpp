#include "driver/event_loop.h"

#include <sys/epoll.h>

#include <algorithm>
#include <cerrno>

#include "system_call.h"

namespace lp {
namespace {

constexpr int kMaxEpollEvents = 64;

std::uint32_t interest(bool readable, bool writable) {
  return (readable ? EPOLLIN : 0u) | (writable ? EPOLLOUT : 0u);
}

}  // namespace

EventLoop::EventLoop() : epoll_fd_(SystemCall("epoll_create1", ::epoll_create1(EPOLL_CLOEXEC))) {
  events_.reserve(kMaxEpollEvents);
}

void EventLoop::add(int fd, void* tag, bool readable, bool writable) {
  epoll_event event{};
  event.events = interest(readable, writable);
  event.data.ptr = tag;
  SystemCall("epoll_ctl ADD", ::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_ADD, fd, &event));
}

void EventLoop::modify(int fd, void* tag, bool readable, bool writable) {
  epoll_event event{};
  event.events = interest(readable, writable);
  event.data.ptr = tag;
  ::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_MOD, fd, &event);
}

void EventLoop::remove(int fd) { ::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_DEL, fd, nullptr); }

const std::vector<LoopEvent>& EventLoop::wait(Clock::time_point deadline) {
  int timeout = -1;
  if (deadline != Clock::time_point::max()) {
    const auto wait = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
    timeout = static_cast<int>(std::clamp<long long>(wait, 0, INT32_MAX));
  }
  epoll_event raw[kMaxEpollEvents];
  const int count = ::epoll_wait(epoll_fd_.get(), raw, kMaxEpollEvents, timeout);
  events_.clear();
  for (int i = 0; i < count; ++i) {
    const std::uint32_t e = raw[i].events;
    events_.push_back({raw[i].data.ptr, (e & (EPOLLIN | EPOLLERR | EPOLLHUP)) != 0, (e & EPOLLOUT) != 0,
                       (e & (EPOLLERR | EPOLLHUP)) != 0});
  }
  return events_;
}

}  // namespace lp
