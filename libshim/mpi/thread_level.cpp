#include "thread_level.h"

#include <atomic>
#include <cstdio>

#include "mpi_api.h"

namespace lp::mpi {
namespace {

std::atomic<int> recorded_level{-1};  // -1: not initialised yet

}  // namespace

int settle_thread_level(int open_mpi_level, bool front_end_running, int world_rank) {
  int level = open_mpi_level;
  if (front_end_running && level > MPI_THREAD_SERIALIZED) {
    // Say so instead of being silently wrong.
    if (world_rank == 0) {
      std::fprintf(stderr,
                   "liblongpipe: MPI_THREAD_MULTIPLE is not supported across sites; providing "
                   "MPI_THREAD_SERIALIZED (check 'provided')\n");
    }
    level = MPI_THREAD_SERIALIZED;
  }
  recorded_level.store(level, std::memory_order_relaxed);
  return level;
}

int query_thread_level(int* provided) {
  const int level = recorded_level.load(std::memory_order_relaxed);
  if (level < 0 || provided == nullptr) return PMPI_Query_thread(provided);
  *provided = level;
  return MPI_SUCCESS;
}

}  // namespace lp::mpi
