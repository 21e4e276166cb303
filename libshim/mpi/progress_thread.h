// ProgressThread: the MPI front end's own thread, one per process while LongPipe carries the job.
// It sleeps on the engine's receive event fd, its room event fd and a wake-up eventfd, and runs the
// front end's `step` (matching, acknowledgements, pending sends: MPI-free) whenever one is
// readable. It never calls MPI (Open MPI may run at MPI_THREAD_SERIALIZED or below) and never takes
// the ApiLock (api_lock.h): it progresses whatever the application's threads hold.
//
// A completion eventfd goes the other way: step() signals it when a request of the application's
// changed state, and the application's wait loops sleep on it.
#pragma once

#include <atomic>
#include <functional>
#include <thread>

#include "file_descriptor.h"

namespace lp::mpi {

class ProgressThread {
 public:
  // What step() wants watched next: the receive fd (false while its bound of unexpected messages
  // is reached: it then waits for wake()), the room fd.
  struct Watch {
    bool receive = true;
    bool room = true;
  };
  // Starts the thread; it runs step() once at once, then after every event.
  ProgressThread(int receive_fd, int room_fd, std::function<Watch(ProgressThread&)> step);
  // Stops and joins the thread.
  ~ProgressThread();
  ProgressThread(const ProgressThread&) = delete;
  ProgressThread& operator=(const ProgressThread&) = delete;

  // Makes the thread run step() again (the application took unexpected messages, ...).
  void wake();
  // From step(): a request changed state.
  void signal_completion();
  // The application's side: readable after signal_completion(); drain before looking.
  int completion_fd() const { return completion_fd_.get(); }
  void drain_completion();

  // In the child after fork(): the thread does not exist there. Leaks it instead of joining.
  static void abandon_after_fork(ProgressThread* thread);

 private:
  void run();

  const int receive_fd_;
  const int room_fd_;
  std::function<Watch(ProgressThread&)> step_;
  lp::FileDescriptor wake_fd_;
  lp::FileDescriptor completion_fd_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace lp::mpi
