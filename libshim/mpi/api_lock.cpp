#include "api_lock.h"

#include <mutex>

namespace lp::mpi {
namespace {

std::mutex api_mutex;
thread_local int depth = 0;  // this thread's nested holds (0: it does not hold the lock)

}  // namespace

void ApiLock::acquire() {
  if (depth++ == 0) api_mutex.lock();
}

void ApiLock::release() {
  if (--depth == 0) api_mutex.unlock();
}

int ApiLock::give_up() {
  const int held = depth;
  if (held > 0) {
    depth = 0;
    api_mutex.unlock();
  }
  return held;
}

void ApiLock::take_back(int held) {
  api_mutex.lock();
  depth = held;
}

}  // namespace lp::mpi
