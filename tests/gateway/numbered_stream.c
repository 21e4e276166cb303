/* numbered_stream: a plain MPI program (mpi.h only) that sends a numbered stream of messages from
 * rank 0 to rank 1, each echoed back, and checks that nothing is lost, duplicated or reordered in
 * either direction. Used by tests/gateway/run_gateway.sh while a gateway restarts under it.
 *
 * Usage: numbered_stream COUNT PAUSE_MS [PROGRESS_FILE]
 *   COUNT          messages (each 1 KiB plus its number, echoed back by rank 1)
 *   PAUSE_MS       rank 0 sleeps this long after each round trip, so that the stream lasts a while
 *   PROGRESS_FILE  rank 1 writes the number of messages it has received there after each one
 * Rank 0 prints "stream: COUNT messages in order both ways" and exits 0; any fault is a line
 * starting with "WRONG" and MPI_Abort (exit status 1). A message lost for good shows as a hang: the test's
 * timeout catches it. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { PAYLOAD_BYTES = 1024, STREAM_TAG = 7 };

struct numbered {
  int number;
  unsigned char payload[PAYLOAD_BYTES];
};

static void fill(struct numbered *m, int number) {
  m->number = number;
  for (int i = 0; i < PAYLOAD_BYTES; ++i) m->payload[i] = (unsigned char)(number * 31 + i);
}

static int intact(const struct numbered *m, int expected) {
  if (m->number != expected) return 0;
  for (int i = 0; i < PAYLOAD_BYTES; ++i) {
    if (m->payload[i] != (unsigned char)(expected * 31 + i)) return 0;
  }
  return 1;
}

static void pause_ms(int ms) {
  struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

static void write_progress(const char *path, int received) {
  if (path == NULL) return;
  char temporary[4096];
  snprintf(temporary, sizeof temporary, "%s.tmp", path);
  FILE *f = fopen(temporary, "w");
  if (f == NULL) return;
  fprintf(f, "%d\n", received);
  fclose(f);
  rename(temporary, path); /* whole numbers only, for the reader */
}

/* After the stream: no message left over anywhere (a duplicate would be). */
static int leftovers(void) {
  int flag = 0;
  MPI_Status status;
  MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
  return flag;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 3 || size != 2) {
    if (rank == 0) fprintf(stderr, "usage: numbered_stream COUNT PAUSE_MS [PROGRESS_FILE] (2 ranks)\n");
    MPI_Finalize();
    return 2;
  }
  const int count = atoi(argv[1]);
  const int pause = atoi(argv[2]);
  const char *progress = argc > 3 ? argv[3] : NULL;
  int wrong = 0;
  struct numbered message;
  for (int n = 0; n < count; ++n) {
    if (rank == 0) {
      fill(&message, n);
      MPI_Send(&message, sizeof message, MPI_BYTE, 1, STREAM_TAG, MPI_COMM_WORLD);
      MPI_Recv(&message, sizeof message, MPI_BYTE, 1, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (!intact(&message, n)) {
        printf("WRONG: echo %d came back as %d (or with other bytes)\n", n, message.number);
        fflush(stdout);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      if (pause > 0) pause_ms(pause);
    } else {
      MPI_Recv(&message, sizeof message, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (!intact(&message, n)) {
        printf("WRONG: message %d arrived as %d (or with other bytes)\n", n, message.number);
        fflush(stdout);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      MPI_Send(&message, sizeof message, MPI_BYTE, 0, STREAM_TAG, MPI_COMM_WORLD);
      write_progress(progress, n + 1);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (leftovers()) {
    printf("WRONG: rank %d has a message left over after the stream (a duplicate)\n", rank);
    wrong = 1;
  }
  int any_wrong = 0;
  MPI_Allreduce(&wrong, &any_wrong, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && !any_wrong) printf("stream: %d messages in order both ways\n", count);
  fflush(stdout);
  MPI_Finalize();
  return any_wrong ? 1 : 0;
}
