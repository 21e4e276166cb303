// The thread level of the process: what MPI_Init_thread provides and MPI_Query_thread answers,
// recorded in one place so that the two agree.
#pragma once

namespace lp::mpi {

// After PMPI_Init or PMPI_Init_thread and the front end's start: Open MPI's level (min(required,
// what Open MPI supports)), provided unchanged. At MPI_THREAD_MULTIPLE with the front end carrying
// inter-site traffic, switches the ApiLock on (api_lock.h). Records the level and returns it.
int settle_thread_level(int open_mpi_level, bool front_end_running);

// MPI_Query_thread: the recorded level; Open MPI's own answer before MPI_Init (and its error for a
// null `provided`).
int query_thread_level(int* provided);

}  // namespace lp::mpi
