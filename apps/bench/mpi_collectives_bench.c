/* lp-mpi-collectives-bench: time per call of back-to-back MPI collectives. A plain MPI program
 * (mpi.h only): apps/bench/collectives runs it under Open MPI alone and under LongPipe.
 *
 * Usage: lp-mpi-collectives-bench CALLS POINT...
 *   POINT is OPERATION:BYTES, OPERATION one of
 *     barrier            (BYTES ignored)
 *     bcast:B            B bytes from rank 0
 *     allreduce:B        sum of B / 8 doubles
 *     gather:B           B bytes from every rank to rank 0
 *     alltoall:B         B bytes from every rank to every rank
 *
 * All ranks run on one machine (the emulated sites are network namespaces of one host), so they
 * share CLOCK_MONOTONIC: a call's completion time is the moment its last rank returns. For each
 * point, after a barrier: the first call, timed from the first rank's entry to the last rank's
 * return (LongPipe may open the leaders' sessions then); then, after a barrier, CALLS + 2 calls
 * back to back, and the time per call is the interval between the completions of call 2 and call
 * CALLS + 2, divided by CALLS: the steady state of back-to-back calls, free of the up to one
 * one-way delay by which a barrier lets one site go before the other. Rank 0 prints, per point:
 *   point OPERATION BYTES first_ms FIRST per_call_ms EACH calls CALLS check ok|FAILED
 * where the check compares the last call's result with the expected values. Exit status 1 if a
 * check failed. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Calls of the back-to-back loop before the measured ones: the first completion anchors the
 * interval, so the barrier's skew before the loop does not count. */
#define WARM_CALLS 2

/* One clock for every rank: they share a host (the sites are network namespaces). */
static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

enum operation { BARRIER, BCAST, ALLREDUCE, GATHER, ALLTOALL };

static const char* const operation_names[] = {"barrier", "bcast", "allreduce", "gather", "alltoall"};

struct point {
  enum operation operation;
  long bytes;
};

static int parse_point(const char* text, struct point* point) {
  const char* colon = strchr(text, ':');
  const size_t name_length = colon ? (size_t)(colon - text) : strlen(text);
  for (int op = BARRIER; op <= ALLTOALL; ++op) {
    if (strlen(operation_names[op]) == name_length && strncmp(text, operation_names[op], name_length) == 0) {
      point->operation = (enum operation)op;
      point->bytes = colon ? atol(colon + 1) : 0;
      return point->bytes >= 0 && (op == BARRIER || point->bytes > 0);
    }
  }
  return 0;
}

/* The value rank `rank` contributes at index i: small integers, so that sums of doubles are exact. */
static unsigned char byte_of(int rank, long i) { return (unsigned char)(rank * 31 + i * 7 + 1); }

/* One call of the point's collective. */
static void run_once(const struct point* point, int rank, unsigned char* send, unsigned char* receive) {
  const int bytes = (int)point->bytes;
  switch (point->operation) {
    case BARRIER: MPI_Barrier(MPI_COMM_WORLD); break;
    case BCAST: MPI_Bcast(rank == 0 ? send : receive, bytes, MPI_BYTE, 0, MPI_COMM_WORLD); break;
    case ALLREDUCE: {
      const int count = bytes / (int)sizeof(double) > 0 ? bytes / (int)sizeof(double) : 1;
      MPI_Allreduce(send, receive, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      break;
    }
    case GATHER: MPI_Gather(send, bytes, MPI_BYTE, receive, bytes, MPI_BYTE, 0, MPI_COMM_WORLD); break;
    case ALLTOALL: MPI_Alltoall(send, bytes, MPI_BYTE, receive, bytes, MPI_BYTE, MPI_COMM_WORLD); break;
  }
}

/* Fills the send buffer with this rank's values. */
static void fill(const struct point* point, int rank, int size, unsigned char* send) {
  if (point->operation == ALLREDUCE) {
    double* values = (double*)send;
    const long count = point->bytes / (long)sizeof(double) > 0 ? point->bytes / (long)sizeof(double) : 1;
    for (long i = 0; i < count; ++i) values[i] = (double)byte_of(rank, i);
    return;
  }
  const long total = point->operation == ALLTOALL ? point->bytes * size : point->bytes;
  for (long i = 0; i < total; ++i) send[i] = byte_of(rank, i);
}

/* Whether `receive` holds the result one call should leave on this rank. */
static int check(const struct point* point, int rank, int size, const unsigned char* receive) {
  switch (point->operation) {
    case BARRIER: return 1;
    case BCAST:
      if (rank == 0) return 1;
      for (long i = 0; i < point->bytes; ++i)
        if (receive[i] != byte_of(0, i)) return 0;
      return 1;
    case ALLREDUCE: {
      const double* values = (const double*)receive;
      const long count = point->bytes / (long)sizeof(double) > 0 ? point->bytes / (long)sizeof(double) : 1;
      for (long i = 0; i < count; ++i) {
        double expected = 0;
        for (int r = 0; r < size; ++r) expected += (double)byte_of(r, i);
        if (values[i] != expected) return 0;
      }
      return 1;
    }
    case GATHER:
      if (rank != 0) return 1;
      for (int r = 0; r < size; ++r)
        for (long i = 0; i < point->bytes; ++i)
          if (receive[r * point->bytes + i] != byte_of(r, i)) return 0;
      return 1;
    case ALLTOALL:
      for (int r = 0; r < size; ++r)
        for (long i = 0; i < point->bytes; ++i)
          if (receive[r * point->bytes + i] != byte_of(r, rank * point->bytes + i)) return 0;
      return 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int calls = argc > 1 ? atoi(argv[1]) : 0;
  if (argc < 3 || calls < 1) {
    if (rank == 0) fprintf(stderr, "usage: %s CALLS OPERATION[:BYTES]...\n", argv[0]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int failed = 0;
  for (int a = 2; a < argc; ++a) {
    struct point point = {BARRIER, 0};
    if (!parse_point(argv[a], &point)) {
      if (rank == 0) fprintf(stderr, "%s: bad point '%s' (OPERATION:BYTES)\n", argv[0], argv[a]);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const size_t buffer_bytes = (size_t)(point.bytes > 0 ? point.bytes : 8) * (size_t)size;
    unsigned char* send = calloc(buffer_bytes, 1);
    unsigned char* receive = calloc(buffer_bytes, 1);
    fill(&point, rank, size, send);

    MPI_Barrier(MPI_COMM_WORLD);
    double entry = now_seconds();
    run_once(&point, rank, send, receive);
    double done = now_seconds();
    double first_entry = 0, first_done = 0;
    MPI_Reduce(&entry, &first_entry, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&done, &first_done, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

    const int loop_calls = calls + WARM_CALLS;
    double* completed = calloc((size_t)loop_calls, sizeof(double));
    double* last_completed = calloc((size_t)loop_calls, sizeof(double));
    MPI_Barrier(MPI_COMM_WORLD);
    for (int c = 0; c < loop_calls; ++c) {
      run_once(&point, rank, send, receive);
      completed[c] = now_seconds();
    }
    int ok = check(&point, rank, size, receive);
    MPI_Reduce(completed, last_completed, loop_calls, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    int all_ok = 0;
    MPI_Reduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      const double each = (last_completed[loop_calls - 1] - last_completed[WARM_CALLS - 1]) / calls;
      printf("point %s %ld first_ms %.3f per_call_ms %.3f calls %d check %s\n", operation_names[point.operation],
             point.bytes, (first_done - first_entry) * 1e3, each * 1e3, calls, all_ok ? "ok" : "FAILED");
      fflush(stdout);
      if (!all_ok) failed = 1;
    }
    free(completed);
    free(last_completed);
    free(send);
    free(receive);
  }
  MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return failed;
}
