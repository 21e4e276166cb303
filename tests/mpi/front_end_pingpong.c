/* Same-site ping-pong between ranks 0 and 1 (plain MPI): what LongPipe's routing costs a message
 * that stays on Open MPI. Prints the median of BATCHES batches, microseconds per round trip.
 * Extra ranks (e.g. rank 2 forced to another site with LONGPIPE_MPI_SITES=0,0,1, so that the
 * front end is active) only wait, sleeping, for the end.
 * With "self", rank 0 sends to itself (Irecv, Send, Wait) while the others sleep: one process, so
 * the machine's load disturbs it least.
 *   mpirun -np 2|3 front_end_pingpong [SIZE] [ROUND_TRIPS] [BATCHES] [self] */
#include <string.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int compare_doubles(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char** argv) {
  int rank, size, i, batch;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int bytes = argc > 1 ? atoi(argv[1]) : 8;
  const int round_trips = argc > 2 ? atoi(argv[2]) : 20000;
  const int batches = argc > 3 ? atoi(argv[3]) : 11;
  const int to_self = argc > 4 && strcmp(argv[4], "self") == 0;
  char* buffer = calloc((size_t)bytes + 1, 1);
  double* per_batch = calloc((size_t)batches, sizeof(double));
  if (rank >= 2 || (to_self && rank >= 1)) {
    int done = 0, flag = 0;
    MPI_Request request;
    MPI_Irecv(&done, 1, MPI_INT, 0, 99, MPI_COMM_WORLD, &request);
    while (!flag) {
      usleep(20000);
      MPI_Test(&request, &flag, MPI_STATUS_IGNORE);
    }
  } else {
    for (batch = 0; batch < batches; ++batch) {
      const double start = MPI_Wtime();
      for (i = 0; i < round_trips; ++i) {
        if (to_self) {
          MPI_Request request;
          MPI_Irecv(buffer, bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &request);
          MPI_Send(buffer, bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
          MPI_Wait(&request, MPI_STATUS_IGNORE);
        } else if (rank == 0) {
          MPI_Send(buffer, bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
          MPI_Recv(buffer, bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
          MPI_Recv(buffer, bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          MPI_Send(buffer, bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        }
      }
      per_batch[batch] = (MPI_Wtime() - start) * 1e6 / round_trips;
    }
    if (rank == 0) {
      int done = 1;
      for (i = to_self ? 1 : 2; i < size; ++i) MPI_Send(&done, 1, MPI_INT, i, 99, MPI_COMM_WORLD);
      qsort(per_batch, (size_t)batches, sizeof(double), compare_doubles);
      printf("%s %d B: median %.3f us per round trip (min %.3f, %d batches of %d)\n", to_self ? "to itself" : "ping-pong", bytes,
             per_batch[batches / 2], per_batch[0], batches, round_trips);
    }
  }
  free(buffer);
  free(per_batch);
  MPI_Finalize();
  return 0;
}
