/* mpi_exchange: a plain MPI program (mpi.h only) for jobs across sites: point-to-point between
 * every pair of ranks, then a few collectives, with a transcript that is the same on any correct
 * MPI whatever the placement: run on one host and across sites, the transcripts must be equal.
 *
 *   every ordered pair (i, j): MESSAGES messages from i to j, tags 0..MESSAGES-1, every
 *     LARGE_EVERY-th one LARGE_BYTES long (beyond Open MPI's 64 KiB eager limit; few, as site 3's
 *     access link is thin); j receives them with
 *     MPI_ANY_TAG from i (non-overtaking: tags arrive in order) and with MPI_ANY_SOURCE overall
 *   a ring of MPI_Sendrecv and one MPI_Ssend to the next rank
 *   MPI_Bcast, MPI_Allreduce, MPI_Alltoall, MPI_Gather, MPI_Barrier
 * Rank 0 prints every rank's lines, rank by rank. Exit status 1 on a failed check. */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MESSAGES = 12, LARGE_EVERY = 12, LARGE_BYTES = 70 * 1000, SMALL_BYTES = 64, LINE = 160, MAX_RANKS = 64 };

static char lines[MAX_RANKS * 4][LINE];
static int line_count, failures;

static void say(const char* format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(lines[line_count++], LINE, format, args);
  va_end(args);
}

static int bytes_of(int tag) { return tag % LARGE_EVERY == LARGE_EVERY - 1 ? LARGE_BYTES : SMALL_BYTES + tag; }

static void fill(unsigned char* buffer, int bytes, int from, int to, int tag) {
  for (int i = 0; i < bytes; ++i) buffer[i] = (unsigned char)(from * 31 + to * 7 + tag * 3 + i);
}

static unsigned long checksum(const unsigned char* buffer, int bytes) {
  unsigned long sum = 0;
  for (int i = 0; i < bytes; ++i) sum = sum * 33 + buffer[i];
  return sum;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size > MAX_RANKS) MPI_Abort(MPI_COMM_WORLD, 2);
  unsigned char* out = malloc(LARGE_BYTES);
  unsigned char* in = malloc(LARGE_BYTES);
  MPI_Request* requests = malloc(sizeof(MPI_Request) * (size_t)size * MESSAGES);
  int pending = 0;
  /* The pairwise phase has a communicator of its own: a rank that finished it may start the ring
   * while others still receive with MPI_ANY_SOURCE. */
  MPI_Comm pairs;
  MPI_Comm_dup(MPI_COMM_WORLD, &pairs);
  /* Sends: one buffer per message, all posted at once. */
  unsigned char** large = calloc((size_t)size * MESSAGES, sizeof *large);
  for (int to = 0; to < size; ++to) {
    if (to == rank) continue;
    for (int tag = 0; tag < MESSAGES; ++tag) {
      int bytes = bytes_of(tag);
      unsigned char* buffer = large[to * MESSAGES + tag] = malloc((size_t)bytes);
      fill(buffer, bytes, rank, to, tag);
      MPI_Isend(buffer, bytes, MPI_BYTE, to, tag, pairs, &requests[pending++]);
    }
  }
  /* Receives: from each sender in tag order, whichever sender comes first. */
  int next_tag[MAX_RANKS] = {0};
  unsigned long sums[MAX_RANKS] = {0};
  for (int received = 0; received < (size - 1) * MESSAGES; ++received) {
    MPI_Status status;
    MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, pairs, &status);
    int from = status.MPI_SOURCE, count = 0;
    MPI_Recv(in, LARGE_BYTES, MPI_BYTE, from, MPI_ANY_TAG, pairs, &status);
    MPI_Get_count(&status, MPI_BYTE, &count);
    int tag = next_tag[from]++;
    fill(out, bytes_of(tag), from, rank, tag);
    if (status.MPI_TAG != tag || count != bytes_of(tag) || memcmp(in, out, (size_t)count) != 0) {
      fprintf(stderr, "rank %d: message from %d: tag %d (expected %d), %d bytes, content %s\n", rank, from,
              status.MPI_TAG, tag, count, memcmp(in, out, (size_t)count) ? "wrong" : "right");
      ++failures;
    }
    sums[from] = sums[from] * 7 + checksum(in, count);
  }
  MPI_Waitall(pending, requests, MPI_STATUSES_IGNORE);
  MPI_Comm_free(&pairs);
  for (int from = 0; from < size; ++from) {
    if (from != rank) say("rank %d from %d: %d messages in tag order, sum %lu", rank, from, next_tag[from], sums[from]);
  }
  /* Ring. */
  int right = (rank + 1) % size, left = (rank + size - 1) % size, token = rank * 1000, got = -1;
  MPI_Sendrecv(&token, 1, MPI_INT, right, 99, &got, 1, MPI_INT, left, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  say("rank %d ring: %d from the left", rank, got);
  if (rank % 2 == 0) {
    MPI_Ssend(&token, 1, MPI_INT, right, 98, MPI_COMM_WORLD);
    MPI_Recv(&got, 1, MPI_INT, left, 98, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(&got, 1, MPI_INT, left, 98, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Ssend(&token, 1, MPI_INT, right, 98, MPI_COMM_WORLD);
  }
  say("rank %d ssend: %d from the left", rank, got);
  /* Collectives. */
  int root_value = rank == size - 1 ? 4242 : 0, sum = 0, all[MAX_RANKS], back[MAX_RANKS], gathered[MAX_RANKS];
  MPI_Bcast(&root_value, 1, MPI_INT, size - 1, MPI_COMM_WORLD);
  int mine = rank * rank + 1;
  MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  for (int i = 0; i < size; ++i) all[i] = rank * 100 + i;
  MPI_Alltoall(all, 1, MPI_INT, back, 1, MPI_INT, MPI_COMM_WORLD);
  long alltoall = 0;
  for (int i = 0; i < size; ++i) alltoall = alltoall * 3 + back[i];
  MPI_Gather(&mine, 1, MPI_INT, gathered, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  say("rank %d collectives: bcast %d allreduce %d alltoall %ld", rank, root_value, sum, alltoall);
  /* Transcript: rank 0 prints everyone's lines in rank order. */
  if (rank == 0) {
    for (int i = 0; i < line_count; ++i) printf("%s\n", lines[i]);
    for (int from = 1; from < size; ++from) {
      int count = 0;
      MPI_Recv(&count, 1, MPI_INT, from, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      char text[MAX_RANKS * 4 * LINE];
      MPI_Recv(text, count * LINE, MPI_CHAR, from, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      for (int i = 0; i < count; ++i) printf("%s\n", text + i * LINE);
    }
    long expected = 0, gathered_sum = 0;
    for (int i = 0; i < size; ++i) {
      expected += (long)i * i + 1;
      gathered_sum += gathered[i];
    }
    if (gathered_sum != expected) ++failures;
    printf("size %d gather sum %ld expected %ld\n", size, gathered_sum, expected);
  } else {
    MPI_Send(&line_count, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    MPI_Send(lines, line_count * LINE, MPI_CHAR, 0, 8, MPI_COMM_WORLD);
  }
  int all_failures = 0;
  MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("%s\n", all_failures == 0 ? "all checks passed" : "CHECKS FAILED");
  for (int i = 0; i < size * MESSAGES; ++i) free(large[i]);
  free(large);
  free(requests);
  free(in);
  free(out);
  MPI_Finalize();
  return all_failures == 0 ? 0 : 1;
}
