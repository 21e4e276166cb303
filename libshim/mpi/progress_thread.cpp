#include "progress_thread.h"

#include <poll.h>

#include <cerrno>
#include <cstdint>
#include <vector>

#include "event_fd.h"

namespace lp::mpi {

ProgressThread::ProgressThread(int receive_fd, int room_fd, std::function<Watch(ProgressThread&)> step)
    : receive_fd_(receive_fd),
      room_fd_(room_fd),
      step_(std::move(step)),
      wake_fd_(make_eventfd()),
      completion_fd_(make_eventfd()),
      thread_([this] { run(); }) {}

ProgressThread::~ProgressThread() {
  if (!thread_.joinable()) return;
  stop_.store(true);
  wake();
  thread_.join();
}

void ProgressThread::wake() { signal_eventfd(wake_fd_.get()); }
void ProgressThread::signal_completion() { signal_eventfd(completion_fd_.get()); }
void ProgressThread::drain_completion() { drain_eventfd(completion_fd_.get()); }

void ProgressThread::abandon_after_fork(ProgressThread* thread) {
  // The std::thread object names a thread of the parent: destroying it joinable would terminate.
  static auto* abandoned = new std::vector<ProgressThread*>();
  abandoned->push_back(thread);
}

void ProgressThread::run() {
  Watch watch = step_(*this);
  for (;;) {
    pollfd fds[3] = {{wake_fd_.get(), POLLIN, 0}, {room_fd_, 0, 0}, {receive_fd_, 0, 0}};
    if (watch.room) fds[1].events = POLLIN;
    if (watch.receive) fds[2].events = POLLIN;
    if (::poll(fds, 3, -1) < 0 && errno != EINTR) return;
    if (fds[0].revents & POLLIN) drain_eventfd(wake_fd_.get());
    if (stop_.load()) return;
    if (fds[1].revents & POLLIN) drain_eventfd(room_fd_);  // drained before step() tries again
    watch = step_(*this);
  }
}

}  // namespace lp::mpi
