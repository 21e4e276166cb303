/* A plain MPI program (mpi.h only): progress while a rank is not in a call that LongPipe sees, and
 * nonblocking sends that outnumber the window. Each scenario is valid MPI; a rank that hangs is
 * stopped by a watchdog (SIGALRM) that names the scenario and exits with status 3.
 *
 *   sit-alltoallw  4 ranks, sites {0,1} {2,3}: rank 0 posts MPI_Irecv from rank 2, then sits in
 *                  MPI_Alltoallw on its own site's communicator, which rank 1 enters only after
 *                  rank 2's MPI_Ssend to rank 0 completed (rank 2 then tells rank 1).
 *   sit-native     the same with rank 0 in PMPI_Recv from rank 1 (a call LongPipe does not wrap)
 *   sit-compute    2 ranks at two sites: rank 0 posts MPI_Irecv, then computes (no MPI call) until
 *                  rank 1's MPI_Ssend completed (rank 1 creates the file named by ARG then)
 *   bibw [BYTES]   2 ranks at two sites: each posts 64 MPI_Irecv, then 64 MPI_Isend of BYTES
 *                  (4 MiB), then one MPI_Waitall (osu_bibw's shape); every byte checked
 *   isend-first    2 ranks at two sites: each sends 400 messages of 64 KiB with MPI_Isend before
 *                  posting any receive (every other one of a derived type), then receives them
 *                  all: in order and intact
 *   exchange-large [BYTES]  2 ranks at two sites: both MPI_Sendrecv one message of BYTES (300 MiB)
 *                  to each other at once; every byte checked
 *
 * Usage: front_end_progress SCENARIO [ARG]. Prints one transcript on rank 0. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char* scenario = "";
enum { kWatchdogSeconds = 120 };

static void watchdog(int signal_number) {
  (void)signal_number;
  char text[256];
  const int length = snprintf(text, sizeof text, "TIMEOUT: scenario %s hung for %d s\n", scenario, kWatchdogSeconds);
  if (length > 0) (void)!write(2, text, (size_t)length);
  _exit(3);
}

/* Each 4 KiB block of message `message` from `sender`: a pattern of the message and sender, with
 * the block's number in its first bytes (so a misplaced block shows), cheap to make and compare
 * (whole blocks: the sanitizer builds check 512 MiB too). */
enum { kBlock = 4096 };

static void make_block(unsigned char* block, int message, int sender, size_t number) {
  for (int i = 0; i < kBlock; ++i) block[i] = (unsigned char)(message * 7 + i * 13 + sender * 101);
  memcpy(block, &number, sizeof number);
}

static void fill(unsigned char* buffer, size_t bytes, int message, int sender) {
  unsigned char block[kBlock];
  for (size_t at = 0, number = 0; at < bytes; at += kBlock, ++number) {
    make_block(block, message, sender, number);
    memcpy(buffer + at, block, bytes - at < kBlock ? bytes - at : kBlock);
  }
}

static int check(const unsigned char* buffer, size_t bytes, int message, int sender) {
  unsigned char block[kBlock];
  for (size_t at = 0, number = 0; at < bytes; at += kBlock, ++number) {
    make_block(block, message, sender, number);
    if (memcmp(buffer + at, block, bytes - at < kBlock ? bytes - at : kBlock) != 0) return 0;
  }
  return 1;
}

/* rank 0 waits with an Irecv posted while sitting in `how`; ranks 2 (or 1) Ssend to it. */
static int sit(int rank, int size, const char* how, const char* flag_file) {
  int value = -1, ok = 1;
  const int sender = size == 4 ? 2 : 1;
  if (!strcmp(how, "compute")) {
    if (rank == 0) {
      MPI_Request request;
      MPI_Irecv(&value, 1, MPI_INT, sender, 5, MPI_COMM_WORLD, &request);
      double sum = 0;
      while (access(flag_file, F_OK) != 0) {
        for (int i = 0; i < 100000; ++i) sum += i * 0.5; /* computation, no MPI call */
        usleep(1000);
      }
      MPI_Wait(&request, MPI_STATUS_IGNORE);
      ok = value == 42 && sum > 0;
    } else {
      const int message = 42;
      MPI_Ssend(&message, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
      FILE* file = fopen(flag_file, "w");
      if (file) fclose(file);
    }
    return ok;
  }
  MPI_Comm site;
  MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &site);
  const int go = 7;
  int got = 0;
  if (rank == 0) {
    MPI_Request request;
    MPI_Irecv(&value, 1, MPI_INT, 2, 5, MPI_COMM_WORLD, &request);
    if (!strcmp(how, "alltoallw")) {
      int counts[2] = {1, 1}, displacements[2] = {0, (int)sizeof(int)};
      MPI_Datatype types[2] = {MPI_INT, MPI_INT};
      int out[2] = {10, 11}, in[2] = {0, 0};
      MPI_Alltoallw(out, counts, displacements, types, in, counts, displacements, types, site);
      ok = in[0] == 10 && in[1] == 20;
    } else {
      PMPI_Recv(&got, 1, MPI_INT, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      ok = got == go;
    }
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    ok = ok && value == 42;
  } else if (rank == 1) {
    MPI_Recv(&got, 1, MPI_INT, 2, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* rank 2's Ssend is done */
    if (!strcmp(how, "alltoallw")) {
      int counts[2] = {1, 1}, displacements[2] = {0, (int)sizeof(int)};
      MPI_Datatype types[2] = {MPI_INT, MPI_INT};
      int out[2] = {20, 21}, in[2] = {0, 0};
      MPI_Alltoallw(out, counts, displacements, types, in, counts, displacements, types, site);
      ok = in[0] == 11 && in[1] == 21;
    } else {
      MPI_Send(&go, 1, MPI_INT, 0, 6, MPI_COMM_WORLD);
    }
  } else if (rank == 2) {
    const int message = 42;
    MPI_Ssend(&message, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
    MPI_Send(&go, 1, MPI_INT, 1, 6, MPI_COMM_WORLD);
  }
  MPI_Comm_free(&site);
  return ok;
}

/* Both ranks: `messages` receives posted first (if `receives_first`), `messages` Isends of `bytes`. */
static int exchange(int rank, int messages, size_t bytes, int receives_first) {
  const int peer = 1 - rank;
  unsigned char* out = malloc(bytes * (size_t)messages);
  unsigned char* in = malloc(bytes * (size_t)messages);
  MPI_Request* requests = malloc(sizeof(MPI_Request) * 2 * (size_t)messages);
  int ok = out && in && requests;
  if (!ok) return 0;
  for (int i = 0; i < messages; ++i) fill(out + (size_t)i * bytes, bytes, i, rank);
  memset(in, 0, bytes * (size_t)messages);
  if (receives_first) {
    for (int i = 0; i < messages; ++i) {
      MPI_Irecv(in + (size_t)i * bytes, (int)bytes, MPI_BYTE, peer, 9, MPI_COMM_WORLD, &requests[i]);
    }
  }
  /* isend-first: every other message as one element of a derived type (bytes x MPI_BYTE, the same
   * type signature), which LongPipe packs with MPI in the application's thread only. */
  MPI_Datatype block;
  MPI_Type_contiguous((int)bytes, MPI_BYTE, &block);
  MPI_Type_commit(&block);
  for (int i = 0; i < messages; ++i) {
    const int derived = !receives_first && i % 2 == 1;
    MPI_Isend(out + (size_t)i * bytes, derived ? 1 : (int)bytes, derived ? block : MPI_BYTE, peer, 9, MPI_COMM_WORLD,
              &requests[messages + i]);
  }
  MPI_Type_free(&block); /* the sends under way keep it */
  if (receives_first) {
    MPI_Waitall(2 * messages, requests, MPI_STATUSES_IGNORE);
  } else {
    for (int i = 0; i < messages; ++i) {
      MPI_Status status;
      int count = 0;
      MPI_Recv(in + (size_t)i * bytes, (int)bytes, MPI_BYTE, peer, 9, MPI_COMM_WORLD, &status);
      MPI_Get_count(&status, MPI_BYTE, &count);
      ok = ok && count == (int)bytes;
    }
    MPI_Waitall(messages, requests + messages, MPI_STATUSES_IGNORE);
  }
  for (int i = 0; i < messages; ++i) ok = ok && check(in + (size_t)i * bytes, bytes, i, peer);
  free(out);
  free(in);
  free(requests);
  return ok;
}

/* Both ranks at once: one MPI_Sendrecv of `bytes` each way. */
static int sendrecv_large(int rank, size_t bytes) {
  const int peer = 1 - rank;
  unsigned char* out = malloc(bytes);
  unsigned char* in = calloc(bytes, 1);
  int ok = out && in;
  if (ok) {
    fill(out, bytes, 1, rank);
    MPI_Status status;
    int count = 0;
    MPI_Sendrecv(out, (int)bytes, MPI_BYTE, peer, 11, in, (int)bytes, MPI_BYTE, peer, 11, MPI_COMM_WORLD, &status);
    MPI_Get_count(&status, MPI_BYTE, &count);
    ok = count == (int)bytes && status.MPI_SOURCE == peer && check(in, bytes, 1, peer);
  }
  free(out);
  free(in);
  return ok;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  scenario = argc > 1 ? argv[1] : "";
  signal(SIGALRM, watchdog);
  alarm(kWatchdogSeconds);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int ok = 0;
  if (!strcmp(scenario, "sit-alltoallw") && size == 4) {
    ok = sit(rank, size, "alltoallw", NULL);
  } else if (!strcmp(scenario, "sit-native") && size == 4) {
    ok = sit(rank, size, "native", NULL);
  } else if (!strcmp(scenario, "sit-compute") && size == 2 && argc > 2) {
    ok = sit(rank, size, "compute", argv[2]);
  } else if (!strcmp(scenario, "bibw") && size == 2) {
    ok = exchange(rank, 64, argc > 2 ? (size_t)atol(argv[2]) : (size_t)4 << 20, 1);
  } else if (!strcmp(scenario, "isend-first") && size == 2) {
    ok = exchange(rank, 400, (size_t)64 << 10, 0);
  } else if (!strcmp(scenario, "exchange-large") && size == 2) {
    ok = sendrecv_large(rank, argc > 2 ? (size_t)atol(argv[2]) : (size_t)300 << 20);
  } else {
    if (rank == 0) fprintf(stderr, "usage: front_end_progress sit-alltoallw|sit-native (4 ranks) | sit-compute FILE|bibw [BYTES]|isend-first|exchange-large [BYTES] (2 ranks)\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int all_ok = 0;
  MPI_Reduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("%s: %s on every rank\n", scenario, all_ok ? "complete and intact" : "WRONG");
  alarm(0);
  MPI_Finalize();
  return all_ok || rank != 0 ? 0 : 1;
}
