/* A plain MPI program asking for MPI_THREAD_MULTIPLE: rank 0 prints the level it was given and
 * the level MPI_Query_thread answers, which must be the same.
 * Open MPI alone provides it, and so does LongPipe across sites (run_front_end.sh thread-multiple). */
#include <mpi.h>
#include <stdio.h>

static const char* level_name(int level) {
  return level == MPI_THREAD_MULTIPLE     ? "MPI_THREAD_MULTIPLE"
         : level == MPI_THREAD_SERIALIZED ? "MPI_THREAD_SERIALIZED"
                                          : "lower";
}

int main(int argc, char** argv) {
  int provided, queried = -1, rank;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Query_thread(&queried);
  if (rank == 0) {
    printf("provided: %s\n", level_name(provided));
    printf("query_thread: %s\n", level_name(queried));
  }
  MPI_Finalize();
  return 0;
}
