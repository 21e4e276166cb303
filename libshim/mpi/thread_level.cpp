#include "thread_level.h"

#include <atomic>

#include "api_lock.h"
#include "mpi_api.h"

namespace lp::mpi {
namespace {

std::atomic<int> recorded_level{-1};  // -1: not initialised yet

}  // namespace

int settle_thread_level(int open_mpi_level, bool front_end_running) {
  // Open MPI's level is already min(required, what it supports): the front end lowers nothing.
  ApiLock::enable(front_end_running && open_mpi_level == MPI_THREAD_MULTIPLE);
  recorded_level.store(open_mpi_level, std::memory_order_relaxed);
  return open_mpi_level;
}

int query_thread_level(int* provided) {
  const int level = recorded_level.load(std::memory_order_relaxed);
  if (level < 0 || provided == nullptr) return PMPI_Query_thread(provided);
  *provided = level;
  return MPI_SUCCESS;
}

}  // namespace lp::mpi
