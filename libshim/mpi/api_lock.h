// ApiLock: what makes the front end safe for MPI_THREAD_MULTIPLE. One process-wide mutex that
// every interposed MPI call takes while it runs front-end code, so that the application-side state
// (requests, communicators and their counters, claimed Open MPI messages, matched messages,
// collectives and their statistics) sees one caller at a time, as under MPI_THREAD_SERIALIZED.
// A call gives the lock up while it waits: in every blocking Open MPI call the front end makes
// (libmpi_names.h marks them: PMPI_Recv, PMPI_Wait, the blocking collectives, communicator
// creation...) and in each idle round of its own wait loops, so the other threads' calls run
// meanwhile and can complete what it waits for. Open MPI itself runs at MPI_THREAD_MULTIPLE then
// and needs no lock of ours.
//
// Off (every operation a single branch) unless MPI_Init_thread provided MPI_THREAD_MULTIPLE while
// the front end carries inter-site traffic. The lock is counted per thread: a call made from
// inside another (an error handler or a user reduction op that calls MPI) does not take it again.
//
// Lock order: ApiLock before FrontEnd::mutex_. The progress thread takes only mutex_ and never this
// lock, and no code waits for this lock while holding mutex_ (nothing blocks under mutex_).
#pragma once

#include <atomic>

namespace lp::mpi {

class ApiLock {
 public:
  // At MPI_Init(_thread), before another thread can call MPI, and at MPI_Finalize, after every
  // other thread's last call (MPI's rules for both).
  static void enable(bool on) { enabled_.store(on, std::memory_order_relaxed); }
  static bool enabled() { return enabled_.load(std::memory_order_relaxed); }

  // Held for the lifetime of the object (by this thread, if it did not hold it already).
  class Hold {
   public:
    Hold() : active_(enabled()) {
      if (active_) acquire();
    }
    ~Hold() {
      if (active_) release();
    }
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;

   private:
    bool active_;
  };

  // Not held for the lifetime of the object, if this thread held it: around a wait.
  class Unheld {
   public:
    Unheld() : depth_(enabled() ? give_up() : 0) {}
    ~Unheld() {
      if (depth_ > 0) take_back(depth_);
    }
    Unheld(const Unheld&) = delete;
    Unheld& operator=(const Unheld&) = delete;
    // Whether the lock was given up (other threads may run now).
    bool released() const { return depth_ > 0; }

   private:
    int depth_;
  };

 private:
  static void acquire();
  static void release();
  static int give_up();            // this thread's depth, after unlocking if it was > 0
  static void take_back(int depth);

  static inline std::atomic<bool> enabled_{false};
};

}  // namespace lp::mpi
