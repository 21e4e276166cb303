/* A plain MPI program (mpi.h only), 2 ranks: point-to-point messages larger than LongPipe's engine
 * carries in one message (LONGPIPE_MAX_MESSAGE, 64 MiB), which travel as segments. Rank 0 sends,
 * rank 1 receives and prints what it got; run with and without LongPipe, the transcripts must be
 * identical (run_front_end.sh local large / large-huge / large-send-error).
 *
 * Usage: front_end_large large        80 MiB: MPI_Send/MPI_Probe/MPI_Recv of ints (contiguous),
 *                                     MPI_Isend/MPI_Irecv of a vector type with holes (receive
 *                                     posted first), one vector element of 80 MiB (larger than a
 *                                     segment), MPI_Ssend, a receive 40 MiB short
 *                                     (MPI_ERRORS_RETURN: MPI_ERR_TRUNCATE)
 *        front_end_large huge         one message of 2.5 GiB: 2,621,440 elements of
 *                                     MPI_Type_contiguous(1024, MPI_BYTE), checked by pattern
 *        front_end_large send-error   LongPipe only, LONGPIPE_WINDOW_FULL=fail with a window of one
 *                                     message while rank 1 sleeps: MPI_Isend and MPI_Sendrecv of
 *                                     80 MiB fail through the error handler (MPI_ERR_OTHER), leave
 *                                     no request and no receive behind; a later message from rank 1
 *                                     reaches a later receive */
#define _DEFAULT_SOURCE /* usleep */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { kInts = 80 << 18 }; /* 80 MiB of ints */

static unsigned value(size_t i, unsigned stage) { return (unsigned)(i * 2654435761u) ^ (stage * 0x9e3779b9u); }

static void fill(unsigned* data, size_t n, unsigned stage) {
  for (size_t i = 0; i < n; ++i) data[i] = value(i, stage);
}

/* Index of the first wrong int, or n if all are right. */
static size_t check(const unsigned* data, size_t n, unsigned stage) {
  for (size_t i = 0; i < n; ++i) {
    if (data[i] != value(i, stage)) return i;
  }
  return n;
}

static const char* error_name(int rc) {
  int error_class = MPI_SUCCESS;
  MPI_Error_class(rc, &error_class);
  switch (error_class) {
    case MPI_SUCCESS: return "MPI_SUCCESS";
    case MPI_ERR_TRUNCATE: return "MPI_ERR_TRUNCATE";
    case MPI_ERR_OTHER: return "MPI_ERR_OTHER";
    default: return "another error class";
  }
}

static void large(int rank) {
  unsigned* data = malloc((size_t)kInts * sizeof *data);
  MPI_Status status;
  int count = 0;
  /* 1. MPI_Send / MPI_Probe / MPI_Recv, contiguous: the probe sees the whole size. */
  if (rank == 0) {
    fill(data, kInts, 1);
    MPI_Send(data, kInts, MPI_UNSIGNED, 1, 1, MPI_COMM_WORLD);
  } else {
    MPI_Probe(0, 1, MPI_COMM_WORLD, &status);
    MPI_Get_count(&status, MPI_UNSIGNED, &count);
    printf("probe: source %d tag %d count %d\n", status.MPI_SOURCE, status.MPI_TAG, count);
    memset(data, 0, (size_t)kInts * sizeof *data);
    MPI_Recv(data, kInts, MPI_UNSIGNED, 0, 1, MPI_COMM_WORLD, &status);
    MPI_Get_count(&status, MPI_UNSIGNED, &count);
    printf("send/recv 80 MiB: count %d, first wrong int %zu of %d\n", count, check(data, kInts, 1), kInts);
  }
  /* 2. MPI_Isend / MPI_Irecv of a vector type with holes (2 blocks of 1024 ints, stride 1536), the
   * receive posted before the message leaves; the holes stay untouched. */
  MPI_Datatype vector;
  MPI_Type_vector(2, 1024, 1536, MPI_UNSIGNED, &vector);
  MPI_Type_commit(&vector);
  const int elements = kInts / 2048;      /* 80 MiB of data */
  const size_t span = (size_t)elements * 2560; /* an element's extent is 2560 ints */
  unsigned* spread = malloc(span * sizeof *spread);
  MPI_Request request;
  if (rank == 0) {
    fill(spread, span, 2);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Isend(spread, elements, vector, 1, 2, MPI_COMM_WORLD, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  } else {
    for (size_t i = 0; i < span; ++i) spread[i] = 0xdeadbeefu;
    MPI_Irecv(spread, elements, vector, 0, 2, MPI_COMM_WORLD, &request);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Wait(&request, &status);
    MPI_Get_count(&status, vector, &count);
    size_t wrong_data = 0, wrong_holes = 0;
    for (size_t i = 0; i < span; ++i) {
      const size_t in_element = i % 2560; /* ints 0-1023 and 1536-2559 are data, 1024-1535 a hole */
      const int is_data = in_element < 1024 || in_element >= 1536;
      if (is_data && spread[i] != value(i, 2)) ++wrong_data;
      if (!is_data && spread[i] != 0xdeadbeefu) ++wrong_holes;
    }
    printf("isend/irecv vector 80 MiB: count %d, wrong data ints %zu, holes overwritten %zu\n", count, wrong_data,
           wrong_holes);
  }
  /* The same 80 MiB as ONE element of a vector type (larger than a segment: packed once, sent in
   * pieces), received as one element of the same type. */
  MPI_Datatype whole;
  MPI_Type_vector(2 * elements, 1024, 1536, MPI_UNSIGNED, &whole);
  MPI_Type_commit(&whole);
  free(spread);
  const size_t wide = (size_t)(2 * elements - 1) * 1536 + 1024; /* the element's extent in ints */
  spread = malloc(wide * sizeof *spread);
  if (rank == 0) {
    fill(spread, wide, 6);
    MPI_Send(spread, 1, whole, 1, 6, MPI_COMM_WORLD);
  } else {
    for (size_t i = 0; i < wide; ++i) spread[i] = 0xdeadbeefu;
    MPI_Recv(spread, 1, whole, 0, 6, MPI_COMM_WORLD, &status);
    MPI_Get_count(&status, whole, &count);
    size_t wrong_data = 0, wrong_holes = 0;
    for (size_t i = 0; i < wide; ++i) {
      const size_t in_block = i % 1536; /* ints 0-1023 of every 1536 are data */
      if (in_block < 1024 && spread[i] != value(i, 6)) ++wrong_data;
      if (in_block >= 1024 && spread[i] != 0xdeadbeefu) ++wrong_holes;
    }
    printf("send/recv one vector element of 80 MiB: count %d, wrong data ints %zu, holes overwritten %zu\n", count,
           wrong_data, wrong_holes);
  }
  MPI_Type_free(&whole);
  free(spread);
  MPI_Type_free(&vector);
  /* 3. MPI_Ssend. */
  if (rank == 0) {
    fill(data, kInts, 3);
    MPI_Ssend(data, kInts, MPI_UNSIGNED, 1, 3, MPI_COMM_WORLD); /* rank 1 alone prints: one order */
  } else {
    MPI_Recv(data, kInts, MPI_UNSIGNED, 0, 3, MPI_COMM_WORLD, &status);
    MPI_Get_count(&status, MPI_UNSIGNED, &count);
    printf("ssend/recv 80 MiB: count %d, first wrong int %zu of %d\n", count, check(data, kInts, 3), kInts);
  }
  /* 4. A receive 40 MiB short of the message: MPI_ERR_TRUNCATE under MPI_ERRORS_RETURN. */
  if (rank == 0) {
    fill(data, kInts, 4);
    MPI_Send(data, kInts, MPI_UNSIGNED, 1, 4, MPI_COMM_WORLD);
  } else {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const int rc = MPI_Recv(data, kInts / 2, MPI_UNSIGNED, 0, 4, MPI_COMM_WORLD, &status);
    printf("truncated receive of 80 MiB into 40 MiB: %s\n", error_name(rc));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  }
  /* 5. MPI_Sendrecv_replace of 80 MiB on rank 0 (a packed copy goes out); rank 1 reports its check. */
  if (rank == 0) {
    fill(data, kInts, 7);
    MPI_Sendrecv_replace(data, kInts, MPI_UNSIGNED, 1, 7, 1, 8, MPI_COMM_WORLD, &status);
    const unsigned long long wrong = check(data, kInts, 8);
    MPI_Send(&wrong, 1, MPI_UNSIGNED_LONG_LONG, 1, 9, MPI_COMM_WORLD);
  } else {
    MPI_Recv(data, kInts, MPI_UNSIGNED, 0, 7, MPI_COMM_WORLD, &status);
    const size_t wrong_sent = check(data, kInts, 7);
    fill(data, kInts, 8);
    MPI_Send(data, kInts, MPI_UNSIGNED, 0, 8, MPI_COMM_WORLD);
    unsigned long long wrong_back = 0;
    MPI_Recv(&wrong_back, 1, MPI_UNSIGNED_LONG_LONG, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("sendrecv_replace 80 MiB: sent first wrong int %zu of %d\n", wrong_sent, kInts);
    printf("sendrecv_replace 80 MiB: replaced first wrong int %llu of %d\n", wrong_back, kInts);
  }
  free(data);
  MPI_Barrier(MPI_COMM_WORLD);
}

static void huge(int rank) {
  const int elements = 2621440; /* x 1 KiB = 2.5 GiB */
  const size_t ints = (size_t)elements * 256;
  MPI_Datatype kib;
  MPI_Type_contiguous(1024, MPI_BYTE, &kib);
  MPI_Type_commit(&kib);
  unsigned* data = malloc(ints * sizeof *data);
  if (!data) {
    printf("rank %d: no memory for 2.5 GiB\n", rank);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (rank == 0) {
    fill(data, ints, 5);
    MPI_Send(data, elements, kib, 1, 5, MPI_COMM_WORLD);
  } else {
    memset(data, 0, ints * sizeof *data);
    MPI_Status status;
    MPI_Recv(data, elements, kib, 0, 5, MPI_COMM_WORLD, &status);
    int count = 0;
    MPI_Count bytes = 0;
    MPI_Get_count(&status, kib, &count);
    MPI_Get_elements_x(&status, MPI_BYTE, &bytes);
    printf("2.5 GiB: count %d, bytes %lld, first wrong int %zu of %zu\n", count, (long long)bytes,
           check(data, ints, 5), ints);
  }
  free(data);
  MPI_Type_free(&kib);
  MPI_Barrier(MPI_COMM_WORLD);
}

static int handler_calls = 0, handler_class = MPI_SUCCESS;
static void record_error(MPI_Comm* comm, int* code, ...) {
  (void)comm;
  ++handler_calls;
  MPI_Error_class(*code, &handler_class);
}

static int send_error(int rank) {
  int failed = 0;
  MPI_Errhandler recorder;
  MPI_Comm_create_errhandler(record_error, &recorder);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, recorder);
  MPI_Barrier(MPI_COMM_WORLD); /* Open MPI's (LONGPIPE_COLLECTIVES=native) */
  if (rank == 1) {
    sleep(3); /* in no MPI call: its engine stops reading, rank 0's window fills */
    int value = 0;
    MPI_Recv(&value, 1, MPI_INT, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    value = 33;
    MPI_Send(&value, 1, MPI_INT, 0, 3, MPI_COMM_WORLD);
  } else {
    unsigned* data = calloc((size_t)kInts, sizeof *data);
    MPI_Request request = (MPI_Request)(intptr_t)0x1234;
    int rc = MPI_Isend(data, kInts, MPI_UNSIGNED, 1, 1, MPI_COMM_WORLD, &request);
    printf("isend 80 MiB into a full window: %s, handler called %d time(s) with %s, request %s\n", error_name(rc),
           handler_calls, error_name(handler_class), request == MPI_REQUEST_NULL ? "MPI_REQUEST_NULL" : "left set");
    failed |= rc == MPI_SUCCESS || handler_calls != 1 || request != MPI_REQUEST_NULL;
    int reply = 0;
    rc = MPI_Sendrecv(data, kInts, MPI_UNSIGNED, 1, 2, &reply, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("sendrecv of 80 MiB into a full window: %s, handler called %d time(s)\n", error_name(rc), handler_calls);
    failed |= rc == MPI_SUCCESS || handler_calls != 2;
    int value = 44, tries = 0;
    while (MPI_Send(&value, 1, MPI_INT, 1, 4, MPI_COMM_WORLD) != MPI_SUCCESS && ++tries < 3000) usleep(10000);
    /* The reply with the Sendrecv's tag must reach this receive: no receive of the failed Sendrecv
     * is left to swallow it. */
    MPI_Irecv(&reply, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, &request);
    int done = 0;
    const time_t deadline = time(NULL) + 60;
    while (!done && time(NULL) < deadline) {
      MPI_Test(&request, &done, MPI_STATUS_IGNORE);
      if (!done) usleep(1000);
    }
    printf("later receive with the failed Sendrecv's tag: %s (%d)\n", done ? "got the reply" : "nothing in 60 s",
           reply);
    failed |= !done || reply != 33;
    if (!done) MPI_Abort(MPI_COMM_WORLD, 3);
    free(data);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_Errhandler_free(&recorder);
  MPI_Barrier(MPI_COMM_WORLD);
  return failed;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* mode = argc > 1 ? argv[1] : "large";
  int failed = 0;
  if (size != 2) {
    if (rank == 0) printf("needs 2 ranks\n");
    failed = 1;
  } else if (strcmp(mode, "large") == 0) {
    large(rank);
  } else if (strcmp(mode, "huge") == 0) {
    huge(rank);
  } else if (strcmp(mode, "send-error") == 0) {
    failed = send_error(rank);
  } else {
    if (rank == 0) printf("unknown mode %s\n", mode);
    failed = 1;
  }
  fflush(stdout);
  MPI_Finalize();
  return failed;
}
