/* A plain MPI program whose peer at the other site stops answering: rank 1 stops itself (SIGSTOP)
 * right after MPI_Init, rank 0 keeps sending to it. Under LongPipe the peer is given up on after
 * LONGPIPE_DEAD_PEER_MS and the send reports it through the communicator's error handler:
 *   front_end_unreachable return  -> MPI_ERRORS_RETURN: prints the error class, then MPI_Abort
 *   front_end_unreachable fatal   -> MPI_ERRORS_ARE_FATAL: LongPipe aborts the job naming the peer
 * Run with 2 ranks, LONGPIPE_MPI_SITES=0,1.
 *   front_end_unreachable barrier -> 4 ranks, LONGPIPE_MPI_SITES=0,0,1,1, MPI_ERRORS_RETURN: rank 2,
 *   the other site's leader, stops after a first barrier; in the next barrier rank 0 (its site's
 *   leader) gets the error and rank 1 must get it from its leader too, not wait forever. Ranks 0
 *   and 1 print the outcome, then rank 0 calls MPI_Abort.
 *   front_end_unreachable ibarrier -> the same with MPI_Ibarrier + MPI_Wait as the second barrier.
 *   front_end_unreachable scatter -> the same with an MPI_Scatter from rank 2 (the stopped leader is
 *   the root) as the second collective.
 *   front_end_unreachable alltoall -> the same with an MPI_Alltoall. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* How long rank 0 keeps trying before it calls the test failed (well above the dead-peer time). */
#define GIVE_UP_SECONDS 60

static void collective_with_a_stopped_leader(int rank, const char* kind) {
  int rc, error_class, blocks[4] = {0, 1, 2, 3}, mine = -1, received[4];
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Barrier(MPI_COMM_WORLD); /* the leaders' session is up */
  if (rank == 2) raise(SIGSTOP);
  if (rank == 3) pause(); /* its leader is gone: nothing can release it (the job's abort ends it) */
  if (strcmp(kind, "ibarrier") == 0) {
    MPI_Request request;
    rc = MPI_Ibarrier(MPI_COMM_WORLD, &request);
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
  } else if (strcmp(kind, "scatter") == 0) {
    rc = MPI_Scatter(blocks, 1, MPI_INT, &mine, 1, MPI_INT, 2, MPI_COMM_WORLD);
  } else if (strcmp(kind, "alltoall") == 0) {
    rc = MPI_Alltoall(blocks, 1, MPI_INT, received, 1, MPI_INT, MPI_COMM_WORLD);
  } else {
    rc = MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Error_class(rc, &error_class);
  printf("rank %d: %s with the other site's leader stopped: %s (class %s)\n", rank, kind,
         rc == MPI_SUCCESS ? "succeeded" : "failed", error_class == MPI_ERR_OTHER ? "MPI_ERR_OTHER" : "other");
  fflush(stdout);
  if (rank == 0) {
    sleep(1); /* rank 1's line first */
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  pause();
}

int main(int argc, char** argv) {
  int rank, value = 1, rc = MPI_SUCCESS, error_class, attempts;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc > 1 && (strcmp(argv[1], "barrier") == 0 || strcmp(argv[1], "ibarrier") == 0 ||
                   strcmp(argv[1], "scatter") == 0 || strcmp(argv[1], "alltoall") == 0)) {
    collective_with_a_stopped_leader(rank, argv[1]);
  }
  if (rank == 1) {
    MPI_Recv(&value, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* the session is up */
    raise(SIGSTOP);
  } else {
    if (argc > 1 && strcmp(argv[1], "return") == 0) MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Send(&value, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
    for (attempts = 0; attempts < GIVE_UP_SECONDS * 10 && rc == MPI_SUCCESS; ++attempts) {
      rc = MPI_Send(&value, 1, MPI_INT, 1, 2, MPI_COMM_WORLD);
      usleep(100000);
    }
    MPI_Error_class(rc, &error_class);
    printf("send to the stopped rank: %s (class %s)\n", rc == MPI_SUCCESS ? "never failed" : "failed",
           error_class == MPI_ERR_OTHER ? "MPI_ERR_OTHER" : "other");
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  MPI_Finalize();
  return 0;
}
