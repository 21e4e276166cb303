/* lp-gateway-scale: the exchanges of ./longpipe bench --gateway --scale (apps/bench/gateway-scale).
 * A plain MPI program (mpi.h only); all ranks run on one machine (the emulated sites are network
 * namespaces of one host), so they share CLOCK_MONOTONIC.
 *
 * Usage: lp-gateway-scale PATTERN BYTES ROUNDS [PAUSE_FILE]
 *   alltoall   MPI_Alltoall, BYTES from every rank to every rank
 *   neighbour  each rank exchanges BYTES with rank-1 and rank+1 (a ring: a 1-D halo exchange)
 *   allreduce  MPI_Allreduce, sum of BYTES / 8 doubles
 * Every call is timed from the first rank's entry to the last rank's return. Rank 0 prints one line:
 *   pattern P bytes B ranks N first_ms F1,F2,F3,F4,F5 median_ms M goodput_mbit G check ok|FAILED
 * (the first five calls one by one, the median of calls 2..ROUNDS (the cold first one dropped); goodput = the bytes every rank sent
 * to ranks of the other half (the other site with block placement) per median call).
 * With PAUSE_FILE, rank 0 touches PAUSE_FILE.ready after the first call and every rank waits until
 * PAUSE_FILE exists before the next: the caller samples memory, descriptors and connections of the
 * warm job then. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int by_value(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* One call of the pattern; returns 1 if its result is right. */
static int call(const char *pattern, long bytes, int rank, int ranks, char *send, char *receive, int round) {
  if (strcmp(pattern, "alltoall") == 0) {
    for (int peer = 0; peer < ranks; ++peer) memset(send + peer * bytes, (rank * 31 + peer + round) & 0xff, bytes);
    MPI_Alltoall(send, (int)bytes, MPI_BYTE, receive, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
    for (int peer = 0; peer < ranks; ++peer) {
      if (receive[peer * bytes] != (char)((peer * 31 + rank + round) & 0xff)) return 0;
    }
    return 1;
  }
  if (strcmp(pattern, "neighbour") == 0) {
    const int left = (rank + ranks - 1) % ranks, right = (rank + 1) % ranks;
    memset(send, (rank + round) & 0xff, bytes);
    MPI_Sendrecv(send, (int)bytes, MPI_BYTE, right, 1, receive, (int)bytes, MPI_BYTE, left, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    if (receive[bytes - 1] != (char)((left + round) & 0xff)) return 0;
    MPI_Sendrecv(send, (int)bytes, MPI_BYTE, left, 2, receive, (int)bytes, MPI_BYTE, right, 2, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    return receive[0] == (char)((right + round) & 0xff);
  }
  const long n = bytes / 8;
  double *in = (double *)send, *out = (double *)receive;
  for (long i = 0; i < n; ++i) in[i] = rank + round + (double)(i % 7);
  MPI_Allreduce(in, out, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  const double expected = (double)ranks * (ranks - 1) / 2 + (double)ranks * (round + (double)((n - 1) % 7));
  return out[n - 1] == expected;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const char *pattern = argc > 1 ? argv[1] : "";
  const long bytes = argc > 2 ? atol(argv[2]) : 0;
  const int rounds = argc > 3 ? atoi(argv[3]) : 0;
  const char *pause = argc > 4 ? argv[4] : NULL;
  const int known = !strcmp(pattern, "alltoall") || !strcmp(pattern, "neighbour") || !strcmp(pattern, "allreduce");
  if (!known || bytes < 8 || rounds < 5 || ranks < 2) {
    if (rank == 0) fprintf(stderr, "usage: lp-gateway-scale alltoall|neighbour|allreduce BYTES ROUNDS(>=5) [PAUSE_FILE]\n");
    MPI_Finalize();
    return 2;
  }
  const long buffer = strcmp(pattern, "alltoall") == 0 ? bytes * ranks : bytes;
  char *send = malloc(buffer), *receive = malloc(buffer);
  double *took = malloc(sizeof(double) * rounds);
  if (!send || !receive || !took) MPI_Abort(MPI_COMM_WORLD, 2);
  int ok = 1;
  for (int round = 0; round < rounds; ++round) {
    if (round == 1 && pause != NULL) {
      if (rank == 0) {
        char ready[4096];
        snprintf(ready, sizeof ready, "%s.ready", pause);
        FILE *f = fopen(ready, "w");
        if (f) fclose(f);
      }
      const struct timespec interval = {0, 20 * 1000 * 1000L};
      while (access(pause, F_OK) != 0) nanosleep(&interval, NULL);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double started = now_ms(), ended;
    ok &= call(pattern, bytes, rank, ranks, send, receive, round);
    ended = now_ms();
    double first = 0, last = 0;
    MPI_Reduce(&started, &first, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&ended, &last, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    took[round] = last - first;
  }
  int all_ok = 0;
  MPI_Reduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    /* The warm median: the first (cold) call is dropped. */
    double sorted[rounds - 1];
    memcpy(sorted, took + 1, sizeof sorted);
    qsort(sorted, rounds - 1, sizeof(double), by_value);
    const double median = sorted[(rounds - 1) / 2];
    /* Bytes crossing between the halves per call (block placement: between the sites). */
    const double half = ranks / 2.0;
    double crossing = 0;
    if (strcmp(pattern, "alltoall") == 0) crossing = 2.0 * half * half * bytes;
    else if (strcmp(pattern, "neighbour") == 0) crossing = 4.0 * bytes;
    else crossing = 2.0 * bytes; /* at least the reduced vector each way between the sites */
    printf("pattern %s bytes %ld ranks %d first_ms %.2f,%.2f,%.2f,%.2f,%.2f median_ms %.2f goodput_mbit %.1f check %s\n",
           pattern, bytes, ranks, took[0], took[1], took[2], took[3], took[4], median,
           crossing * 8 / (median * 1e3), all_ok ? "ok" : "FAILED");
  }
  fflush(stdout);
  free(send);
  free(receive);
  free(took);
  MPI_Finalize();
  return rank == 0 && !all_ok ? 1 : 0;
}
