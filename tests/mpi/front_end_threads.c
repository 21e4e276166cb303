/* A plain MPI program asking for MPI_THREAD_MULTIPLE: rank 0 prints the level it was given.
 * Open MPI alone provides it; LongPipe across sites provides MPI_THREAD_SERIALIZED and says so
 * (its matching state is not thread-safe), never silently less. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  int provided, rank;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    printf("provided: %s\n", provided == MPI_THREAD_MULTIPLE     ? "MPI_THREAD_MULTIPLE"
                             : provided == MPI_THREAD_SERIALIZED ? "MPI_THREAD_SERIALIZED"
                                                                 : "lower");
  }
  MPI_Finalize();
  return 0;
}
