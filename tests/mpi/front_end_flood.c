/* A plain MPI program (mpi.h only): rank 0 floods rank 1 with messages while rank 1, busy with
 * other MPI calls, posts no receive for them; then rank 1 receives them all.
 *
 * Under LongPipe with LONGPIPE_WINDOW_FULL=fail (run_front_end.sh local flood) the flood must end in
 * "window full" errors on rank 0 (MPI_ERRORS_RETURN) that persist: the receiver took only a bounded
 * number of unexpected messages and its engine stopped reading, so the sender's window filled. Rank 0
 * prints how many sends were accepted by then (an upper bound on what rank 1 holds), then keeps
 * retrying the refused message. Rank 1 meanwhile posts and cancels receives for another tag (each
 * post lets the front end take unexpected messages, up to its bound) until a non-blocking barrier,
 * which rank 0 enters once it is stuck, completes; then it receives every message and checks order
 * and content.
 *
 * Usage: front_end_flood [MESSAGES [BYTES]] (default 1000 messages of 1024 bytes), 2 ranks. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { kSender = 0, kReceiver = 1, kFloodTag = 1, kOtherTag = 2 };
static const useconds_t kRetryPauseMicroseconds = 1000; /* between retries of a refused send */
/* Refusals in a row after which the sender counts as stuck and lets rank 1 drain. On a slow machine
 * this may come early (fewer messages held): the check is an upper bound, so it cannot fail then. */
enum { kStuckRefusals = 200 };

static unsigned char pattern(int message, int byte) { return (unsigned char)(message * 7 + byte * 13); }

static void fill(unsigned char* buffer, int bytes, int message) {
  for (int i = 0; i < bytes; ++i) buffer[i] = pattern(message, i);
  memcpy(buffer, &message, sizeof message);
}

static int sender(int messages, int bytes) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  unsigned char* buffer = malloc((size_t)bytes);
  MPI_Request barrier = MPI_REQUEST_NULL;
  int accepted_while_flooding = -1, consecutive_refusals = 0, barrier_done = 0;
  for (int i = 0; i < messages; ++i) {
    fill(buffer, bytes, i);
    while (MPI_Send(buffer, bytes, MPI_UNSIGNED_CHAR, kReceiver, kFloodTag, MPI_COMM_WORLD) != MPI_SUCCESS) {
      if (accepted_while_flooding < 0 && ++consecutive_refusals == kStuckRefusals) {
        accepted_while_flooding = i; /* nothing drains them before rank 1 leaves the barrier */
        MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
      }
      if (!barrier_done && barrier != MPI_REQUEST_NULL) MPI_Test(&barrier, &barrier_done, MPI_STATUS_IGNORE);
      usleep(kRetryPauseMicroseconds);
    }
    consecutive_refusals = 0;
  }
  if (accepted_while_flooding < 0) {
    printf("sender: the window never stayed full (%d messages accepted)\n", messages);
    MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
  } else {
    printf("sender: the window stayed full after %d messages; all %d sent once the receiver drained it\n",
           accepted_while_flooding, messages);
  }
  MPI_Wait(&barrier, MPI_STATUS_IGNORE);
  fflush(stdout);
  free(buffer);
  return accepted_while_flooding < 0;
}

static int receiver(int messages, int bytes) {
  MPI_Request barrier;
  MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
  int barrier_done = 0, other = 0;
  while (!barrier_done) {
    /* Other work with MPI: a receive for a tag that never comes, posted and cancelled. */
    MPI_Request request;
    MPI_Irecv(&other, 1, MPI_INT, kSender, kOtherTag, MPI_COMM_WORLD, &request);
    MPI_Cancel(&request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    MPI_Test(&barrier, &barrier_done, MPI_STATUS_IGNORE);
  }
  unsigned char* buffer = malloc((size_t)bytes);
  unsigned char* expected = malloc((size_t)bytes);
  int bad = 0;
  for (int i = 0; i < messages; ++i) {
    MPI_Status status;
    int count = 0;
    MPI_Recv(buffer, bytes, MPI_UNSIGNED_CHAR, kSender, kFloodTag, MPI_COMM_WORLD, &status);
    MPI_Get_count(&status, MPI_UNSIGNED_CHAR, &count);
    fill(expected, bytes, i);
    if (count != bytes || memcmp(buffer, expected, (size_t)bytes) != 0) {
      int got = -1;
      memcpy(&got, buffer, sizeof got);
      printf("receiver: message %d wrong: %d bytes, numbered %d\n", i, count, got);
      bad = 1;
      break;
    }
  }
  if (!bad) printf("receiver: all %d messages in order and intact\n", messages);
  fflush(stdout);
  free(buffer);
  free(expected);
  return bad;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int messages = argc > 1 ? atoi(argv[1]) : 1000;
  const int bytes = argc > 2 ? atoi(argv[2]) : 1024;
  if (size != 2 || messages < 1 || bytes < (int)sizeof(int)) {
    if (rank == 0) fprintf(stderr, "front_end_flood: 2 ranks, MESSAGES >= 1, BYTES >= %d\n", (int)sizeof(int));
    MPI_Finalize();
    return 2;
  }
  const int failed = rank == kSender ? sender(messages, bytes) : receiver(messages, bytes);
  MPI_Finalize();
  return failed;
}
