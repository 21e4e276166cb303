/* collectives_timing.c: not a test; a timing tool for the two-level collectives (libshim/mpi/README.md, "Collectives").
 * Time per call of back-to-back MPI_Allreduce (sum of doubles) of BYTES, CALLS times, after one
 * first call reported apart (cold: the engine's sessions open then). Plain MPI.
 * Usage: collectives_timing BYTES CALLS
 * Prints (rank 0): allreduce BYTES B: first call X ms, back-to-back Y ms per call (CALLS calls) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const long bytes = argc > 1 ? atol(argv[1]) : 8;
  const int calls = argc > 2 ? atoi(argv[2]) : 10;
  const int count = (int)(bytes / (long)sizeof(double)) > 0 ? (int)(bytes / (long)sizeof(double)) : 1;
  double* in = malloc(sizeof(double) * (size_t)count);
  double* out = malloc(sizeof(double) * (size_t)count);
  for (int i = 0; i < count; ++i) in[i] = rank + i * 0.5;
  MPI_Barrier(MPI_COMM_WORLD);
  double start = MPI_Wtime();
  MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  const double first = MPI_Wtime() - start;
  MPI_Barrier(MPI_COMM_WORLD);
  start = MPI_Wtime();
  for (int c = 0; c < calls; ++c) MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  const double each = (MPI_Wtime() - start) / calls;
  if (rank == 0) {
    printf("allreduce %ld B: first call %.1f ms, back-to-back %.1f ms per call (%d calls)\n", bytes, first * 1e3,
           each * 1e3, calls);
  }
  free(in);
  free(out);
  MPI_Finalize();
  return 0;
}
