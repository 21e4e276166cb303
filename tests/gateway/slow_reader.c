/* slow_reader: a destination that stops reading. Rank 0 sends COUNT numbered messages of SIZE bytes
 * to rank 1, which receives none of them until GO_FILE exists, then receives them all and checks
 * that none is lost, duplicated or reordered. Used by tests/gateway/run_gateway.sh (slow-destination)
 * beside a numbered stream through the same gateways.
 *
 * Usage: slow_reader COUNT SIZE GO_FILE [SENT_FILE]
 *   SENT_FILE  rank 0 writes the number of its sends that have returned there after each one
 * Rank 1 prints "slow: COUNT messages in order" and the job exits 0; any fault is a line starting
 * with "WRONG" and MPI_Abort. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { SLOW_TAG = 9 };

static void fill(unsigned char *buffer, int size, int number) {
  memcpy(buffer, &number, sizeof number);
  for (int i = (int)sizeof number; i < size; ++i) buffer[i] = (unsigned char)(number * 7 + i);
}

static int intact(const unsigned char *buffer, int size, int expected) {
  int number = 0;
  memcpy(&number, buffer, sizeof number);
  if (number != expected) return 0;
  for (int i = (int)sizeof number; i < size; ++i) {
    if (buffer[i] != (unsigned char)(expected * 7 + i)) return 0;
  }
  return 1;
}

static void write_count(const char *path, int value) {
  if (path == NULL) return;
  char temporary[4096];
  snprintf(temporary, sizeof temporary, "%s.tmp", path);
  FILE *f = fopen(temporary, "w");
  if (f == NULL) return;
  fprintf(f, "%d\n", value);
  fclose(f);
  rename(temporary, path);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (argc < 4 || ranks != 2 || atoi(argv[1]) < 1 || atoi(argv[2]) < (int)sizeof(int)) {
    if (rank == 0) fprintf(stderr, "usage: slow_reader COUNT SIZE GO_FILE [SENT_FILE] (2 ranks)\n");
    MPI_Finalize();
    return 2;
  }
  const int count = atoi(argv[1]);
  const int size = atoi(argv[2]);
  const char *go = argv[3];
  const char *sent = argc > 4 ? argv[4] : NULL;
  unsigned char *buffer = malloc((size_t)size);
  if (buffer == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
  if (rank == 0) {
    for (int n = 0; n < count; ++n) {
      fill(buffer, size, n);
      MPI_Send(buffer, size, MPI_BYTE, 1, SLOW_TAG, MPI_COMM_WORLD);
      write_count(sent, n + 1);
    }
  } else {
    const struct timespec poll_interval = {0, 20 * 1000 * 1000L};
    while (access(go, F_OK) != 0) nanosleep(&poll_interval, NULL);
    for (int n = 0; n < count; ++n) {
      MPI_Recv(buffer, size, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (!intact(buffer, size, n)) {
        int number = 0;
        memcpy(&number, buffer, sizeof number);
        printf("WRONG: message %d arrived as %d (or with other bytes)\n", n, number);
        fflush(stdout);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    }
    int flag = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    if (flag) {
      printf("WRONG: a message left over after the %d expected (a duplicate)\n", count);
      fflush(stdout);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    printf("slow: %d messages in order\n", count);
    fflush(stdout);
  }
  free(buffer);
  MPI_Finalize();
  return 0;
}
