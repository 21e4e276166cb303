/* collectives_nonblocking.c: MPI_Ibarrier, MPI_Ibcast and MPI_Iallreduce (and, in
 * collectives_nonblocking_data.c, Ireduce, Igather, Iscatter(v), Iallgather(v)) on MPI_COMM_WORLD,
 * a dup of it and a split (ranks of even and of odd world rank: with sites 0,1,0,1,1 one half spans sites,
 * the other does not), several outstanding at once, mixed with point-to-point requests (to ranks
 * at this and at other sites) and completed by every completion call; MPI_IN_PLACE, a derived type,
 * non-zero roots; blocking collectives on the same communicator while nonblocking ones are under
 * way; transfers larger than a segment. Plain MPI (mpi.h only): run with and without
 * LD_PRELOAD=liblongpipe.so, the transcripts must be identical, except lines starting
 * "order-sensitive" (a floating-point sum whose rounding depends on the order of the reduction;
 * identical from run to run under one library).
 *
 * Nonblocking for real: each rank posts MPI_Ibarrier only after receiving a token that the previous
 * rank sends after posting its own (a blocking Ibarrier deadlocks), and the barrier must not be
 * complete anywhere before the last rank entered; leaders of sites wait in a blocking send or receive
 * that a rank of their own site matches only after its barrier completed.
 *
 * Usage: collectives_nonblocking SITES [MARKER_DIR]
 *   SITES       the site of each world rank, as LONGPIPE_MPI_SITES (unused but for the usage line)
 *   MARKER_DIR  ranks on one file system: the last rank creates a file just before MPI_Ibarrier and
 *               everyone checks it exists after the wait (nobody left early)
 * Rank 0 prints every rank's lines, in rank order. Exit status 1 on a failed check. */
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collectives_nonblocking.h"

enum { kTranscriptBytes = 1 << 17, kMaxRanks = 64, kTokenTag = 77 };

static char transcript[kTranscriptBytes];
static size_t transcript_used;
static int failures;

void say(const char* format, ...) {
  va_list args;
  va_start(args, format);
  int n = vsnprintf(transcript + transcript_used, kTranscriptBytes - transcript_used, format, args);
  va_end(args);
  if (n > 0) transcript_used += (size_t)n;
  if (transcript_used >= kTranscriptBytes) transcript_used = kTranscriptBytes - 1;
}

void check(int ok, const char* what) {
  if (ok) return;
  fprintf(stderr, "FAIL: %s\n", what);
  ++failures;
}

static unsigned long long bits(double value) {
  uint64_t b;
  memcpy(&b, &value, sizeof b);
  return (unsigned long long)b;
}

/* The site of world rank `rank` in SITES ("0,1,0,1,1"); 0 if SITES names fewer ranks. */
static int site_of(const char* sites, int rank) {
  for (int r = 0; *sites; ++r) {
    char* end;
    const long site = strtol(sites, &end, 10);
    if (end == sites) break;
    if (r == rank) return (int)site;
    sites = *end == ',' ? end + 1 : end;
  }
  return 0;
}

/* Ibarrier that other ranks can only reach through point-to-point sent after it was posted. */
static void token_ring_barrier(const char* name, MPI_Comm comm, const char* marker_dir) {
  int rank, size, token = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  char marker[512] = "";
  if (marker_dir) snprintf(marker, sizeof marker, "%s/ibarrier-%s", marker_dir, name);
  if (rank > 0) MPI_Recv(&token, 1, MPI_INT, rank - 1, kTokenTag, comm, MPI_STATUS_IGNORE);
  if (marker_dir && rank == size - 1) {
    usleep(200 * 1000);
    FILE* f = fopen(marker, "w");
    if (f) fclose(f);
  }
  MPI_Request barrier;
  MPI_Ibarrier(comm, &barrier);
  if (rank < size - 1) {
    /* The last rank has not entered yet (it waits for the token): not complete, here or anywhere. */
    int flag = 1;
    MPI_Test(&barrier, &flag, MPI_STATUS_IGNORE);
    say("%s: ibarrier incomplete before the last rank entered: %s\n", name, flag ? "NO" : "yes");
    check(!flag, "ibarrier completed before the last rank entered");
    ++token;
    MPI_Send(&token, 1, MPI_INT, rank + 1, kTokenTag, comm);
  }
  MPI_Wait(&barrier, MPI_STATUS_IGNORE);
  if (marker_dir) check(access(marker, F_OK) == 0, "left MPI_Ibarrier before the last rank entered it");
  say("%s: token ring ibarrier passed, token %d\n", name, token);
}

/* World ranks 0 and 1 (with sites 0,1,0,1,1 the leaders of both sites) sit in blocking calls that
 * need ranks 2 and 3, which make their part only after their barrier completed: rank 0 in
 * MPI_Ssend to rank 2 (which receives after its wait), rank 1 in MPI_Probe and MPI_Recv from rank 3
 * (which sends after its wait). The barrier must progress inside those calls. */
static void leaders_blocked_barrier(void) {
  int rank, size, message = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Request barrier;
  MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
  const int tag = kTokenTag + 1;
  if (size >= 4 && rank == 0) {
    message = 4242;
    MPI_Ssend(&message, 1, MPI_INT, 2, tag, MPI_COMM_WORLD);
    MPI_Wait(&barrier, MPI_STATUS_IGNORE);
  } else if (size >= 4 && rank == 1) {
    MPI_Status status;
    MPI_Probe(3, tag, MPI_COMM_WORLD, &status);
    MPI_Recv(&message, 1, MPI_INT, 3, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&barrier, MPI_STATUS_IGNORE);
  } else {
    MPI_Wait(&barrier, MPI_STATUS_IGNORE);
    if (size >= 4 && rank == 2) MPI_Recv(&message, 1, MPI_INT, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (size >= 4 && rank == 3) {
      message = 1003;
      MPI_Send(&message, 1, MPI_INT, 1, tag, MPI_COMM_WORLD);
    }
  }
  say("world: ibarrier with ranks blocked in a send, probe or receive passed, message %d\n", message);
}

const char* const completion_names[kCompletions] = {"waitall", "test", "waitany", "waitsome",
                                                           "testall", "testany", "testsome", "get_status"};

void complete(enum Completion how, int count, MPI_Request* requests) {
  MPI_Status statuses[kRequests];
  int indices[kRequests];
  int done = 0, flag = 0, index = 0, outcount = 0;
  switch (how) {
    case kWaitall:
      MPI_Waitall(count, requests, statuses);
      break;
    case kTestLoop:  /* last first, each to completion in turn */
      for (int i = count - 1; i >= 0; --i) {
        do MPI_Test(&requests[i], &flag, &statuses[0]);
        while (!flag);
      }
      break;
    case kWaitany:
      for (done = 0; done < count; ++done) {
        MPI_Waitany(count, requests, &index, &statuses[0]);
        check(index != MPI_UNDEFINED && requests[index] == MPI_REQUEST_NULL, "waitany index");
      }
      MPI_Waitany(count, requests, &index, &statuses[0]);
      check(index == MPI_UNDEFINED, "waitany with nothing active");
      break;
    case kWaitsome:
      while (done < count) {
        MPI_Waitsome(count, requests, &outcount, indices, statuses);
        check(outcount > 0, "waitsome outcount");
        for (int k = 0; k < outcount; ++k) check(requests[indices[k]] == MPI_REQUEST_NULL, "waitsome index");
        done += outcount;
      }
      break;
    case kTestall:
      do MPI_Testall(count, requests, &flag, statuses);
      while (!flag);
      break;
    case kTestany:
      while (done < count) {
        MPI_Testany(count, requests, &index, &flag, &statuses[0]);
        if (flag && index != MPI_UNDEFINED) ++done;
      }
      break;
    case kTestsome:
      while (done < count) {
        MPI_Testsome(count, requests, &outcount, indices, statuses);
        if (outcount != MPI_UNDEFINED) done += outcount;
      }
      break;
    case kGetStatus:  /* Request_get_status until done, then MPI_Wait frees them */
      for (int i = 0; i < count; ++i) {
        do MPI_Request_get_status(requests[i], &flag, &statuses[0]);
        while (!flag);
        MPI_Wait(&requests[i], &statuses[0]);
      }
      break;
    case kCompletions:
      break;
  }
  for (int i = 0; i < count; ++i) check(requests[i] == MPI_REQUEST_NULL, "request not freed on completion");
}

/* Several nonblocking collectives on two communicators and point-to-point, all outstanding. */
static void outstanding(int how, MPI_Comm dup, MPI_Comm half) {
  const char* name = completion_names[how];
  int rank, size, half_rank, half_size;
  MPI_Comm_rank(dup, &rank);
  MPI_Comm_size(dup, &size);
  MPI_Comm_rank(half, &half_rank);
  MPI_Comm_size(half, &half_size);
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  const int far_right = (rank + 2) % size, far_left = (rank + size - 2) % size;
  MPI_Datatype strided;
  MPI_Type_vector(3, 2, 3, MPI_INT, &strided);
  MPI_Type_commit(&strided);

  long long mine[3] = {rank + 1 + how, 1LL << (rank + 20), -7 * rank * (how + 1)}, sums[3] = {0, 0, 0};
  int half_values[4], half_root = half_size - 1;
  for (int i = 0; i < 4; ++i) half_values[i] = half_rank == half_root ? 100 * how + 10 * half_rank + i : -1;
  int maxima[2] = {rank * 3 % 7 + how, -rank};
  int vector[8], vector_root = 1 % size;
  for (int i = 0; i < 8; ++i) vector[i] = rank == vector_root ? 100 + 10 * how + i : -(rank + 1);
  double exact[2] = {rank * 0.5 + how, -1.0 / (1 << (rank % 8))}, exact_sums[2] = {0, 0};
  int sent_near = 1000 * how + rank, sent_far = 2000 * how + rank, got_near = -1, got_far = -1;

  MPI_Request requests[kRequests];
  int n = 0;
  MPI_Iallreduce(mine, sums, 3, MPI_LONG_LONG, MPI_SUM, dup, &requests[n++]);
  MPI_Ibcast(half_values, 4, MPI_INT, half_root, half, &requests[n++]);
  MPI_Irecv(&got_near, 1, MPI_INT, left, 10 + how, MPI_COMM_WORLD, &requests[n++]);
  MPI_Iallreduce(MPI_IN_PLACE, maxima, 2, MPI_INT, MPI_MAX, half, &requests[n++]);
  MPI_Ibcast(vector, 1, strided, vector_root, dup, &requests[n++]);
  MPI_Isend(&sent_near, 1, MPI_INT, right, 10 + how, MPI_COMM_WORLD, &requests[n++]);
  MPI_Irecv(&got_far, 1, MPI_INT, far_left, 20 + how, MPI_COMM_WORLD, &requests[n++]);
  MPI_Iallreduce(exact, exact_sums, 2, MPI_DOUBLE, MPI_SUM, dup, &requests[n++]);
  MPI_Ibarrier(half, &requests[n++]);
  MPI_Isend(&sent_far, 1, MPI_INT, far_right, 20 + how, MPI_COMM_WORLD, &requests[n++]);
  complete((enum Completion)how, n, requests);

  say("%s: iallreduce sum %lld %lld %lld double %016llx %016llx\n", name, sums[0], sums[1], sums[2],
      bits(exact_sums[0]), bits(exact_sums[1]));
  say("%s: half ibcast root %d: %d %d %d %d in-place max %d %d\n", name, half_root, half_values[0], half_values[1],
      half_values[2], half_values[3], maxima[0], maxima[1]);
  say("%s: ibcast vector type root %d:", name, vector_root);
  for (int i = 0; i < 8; ++i) say(" %d", vector[i]);
  say("\n%s: point-to-point %d %d\n", name, got_near, got_far);
  check(got_near == 1000 * how + left && got_far == 2000 * how + far_left, "point-to-point data");
  MPI_Type_free(&strided);
}

/* Blocking collectives on the same communicators while nonblocking ones are under way. */
static void blocking_in_between(MPI_Comm dup, MPI_Comm half) {
  int rank, size;
  MPI_Comm_rank(dup, &rank);
  MPI_Comm_size(dup, &size);
  const int root = 2 % size;
  int data[3];
  for (int i = 0; i < 3; ++i) data[i] = rank == root ? 500 + i : -1;
  int flags = 1 << rank, any = 0, total = 0, one = 1;
  MPI_Request requests[3];
  MPI_Ibcast(data, 3, MPI_INT, root, dup, &requests[0]);
  MPI_Iallreduce(&flags, &any, 1, MPI_INT, MPI_BOR, half, &requests[1]);
  MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, dup);
  MPI_Barrier(half);
  MPI_Barrier(dup);
  MPI_Ibarrier(dup, &requests[2]);
  MPI_Bcast(&total, 1, MPI_INT, 0, dup);
  MPI_Waitall(3, requests, MPI_STATUSES_IGNORE);
  say("blocking in between: ibcast %d %d %d half bor %x allreduce %d\n", data[0], data[1], data[2], any, total);
}

/* Larger than one segment of the leaders' transfers (wire_format.h): an Ibcast and an Iallreduce
 * outstanding together, completed by Waitall. */
static void large(MPI_Comm comm) {
  enum { kInts = 100000, kSums = 60000 };
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int root = size - 1;
  int* data = malloc(kInts * sizeof *data);
  long long* mine = malloc(kSums * sizeof *mine);
  long long* sums = malloc(kSums * sizeof *sums);
  for (int i = 0; i < kInts; ++i) data[i] = rank == root ? i * 7 + 3 : -1;
  for (int i = 0; i < kSums; ++i) mine[i] = (long long)(rank + 1) * i;
  MPI_Request requests[2];
  MPI_Ibcast(data, kInts, MPI_INT, root, comm, &requests[0]);
  MPI_Iallreduce(mine, sums, kSums, MPI_LONG_LONG, MPI_SUM, comm, &requests[1]);
  MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
  int bad_data = 0, bad_sums = 0;
  const long long ranks_sum = (long long)size * (size + 1) / 2;
  for (int i = 0; i < kInts; ++i) bad_data += data[i] != i * 7 + 3;
  for (int i = 0; i < kSums; ++i) bad_sums += sums[i] != ranks_sum * i;
  say("large: ibcast %d ints, %d wrong; iallreduce %d sums, %d wrong\n", kInts, bad_data, kSums, bad_sums);
  check(bad_data == 0 && bad_sums == 0, "large ibcast or iallreduce");
  free(data);
  free(mine);
  free(sums);
}

/* Floating point whose rounding depends on the order: all ranks must get the same bits. */
static void order_sensitive(MPI_Comm comm) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  double sensitive[3] = {rank % 2 ? 1e16 : 1.0 + rank * 0.1, rank % 3 ? -1e16 : 0.3, 1.0 / (rank + 3)};
  double sums[3];
  MPI_Request request;
  MPI_Iallreduce(sensitive, sums, 3, MPI_DOUBLE, MPI_SUM, comm, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  /* Compared by point-to-point: this program calls no collective but the ones it tests. */
  if (rank != 0) MPI_Send(sums, 3, MPI_DOUBLE, 0, kTokenTag + 2, comm);
  if (rank == 0) {
    int same = 1;
    for (int r = 1; r < size; ++r) {
      double theirs[3];
      MPI_Recv(theirs, 3, MPI_DOUBLE, r, kTokenTag + 2, comm, MPI_STATUS_IGNORE);
      same = same && memcmp(sums, theirs, sizeof sums) == 0;
    }
    say("iallreduce order-sensitive doubles equal on every rank: %s\n", same ? "yes" : "NO");
    check(same, "order-sensitive iallreduce differs between ranks");
    say("order-sensitive: %016llx %016llx %016llx\n", bits(sums[0]), bits(sums[1]), bits(sums[2]));
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int world_rank, world_size;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  if (argc < 2 || world_size > kMaxRanks || world_size < 2) {
    if (world_rank == 0) {
      fprintf(stderr, "usage: collectives_nonblocking SITES [MARKER_DIR] (2 to %d ranks)\n", kMaxRanks);
    }
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const char* marker_dir = argc > 2 ? argv[2] : NULL;

  token_ring_barrier("world", MPI_COMM_WORLD, marker_dir);
  MPI_Comm dup, half;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_size - world_rank, &half);
  token_ring_barrier(world_rank % 2 ? "odd" : "even", half, marker_dir);
  leaders_blocked_barrier();
  for (int how = 0; how < kCompletions; ++how) outstanding(how, dup, half);
  blocking_in_between(dup, half);
  large(dup);
  order_sensitive(MPI_COMM_WORLD);
  nonblocking_data(dup, half);
  /* The ranks ordered by site (SITES): consecutive sites, so Iscan and Iexscan take the site path. */
  MPI_Comm by_site;
  MPI_Comm_split(MPI_COMM_WORLD, 0, site_of(argv[1], world_rank) * world_size + world_rank, &by_site);
  nonblocking_vector(dup, half, by_site);
  MPI_Comm_free(&by_site);
  MPI_Comm_free(&dup);
  MPI_Comm_free(&half);

  /* Rank 0 prints everyone's lines in rank order. */
  if (world_rank == 0) {
    fputs(transcript, stdout);
    static char other[kTranscriptBytes];
    for (int r = 1; r < world_size; ++r) {
      MPI_Status status;
      MPI_Recv(other, kTranscriptBytes, MPI_CHAR, r, 999, MPI_COMM_WORLD, &status);
      int n;
      MPI_Get_count(&status, MPI_CHAR, &n);
      printf("--- rank %d\n%.*s", r, n, other);
    }
  } else {
    MPI_Send(transcript, (int)transcript_used, MPI_CHAR, 0, 999, MPI_COMM_WORLD);
  }
  int all_failures = 0;
  MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  return all_failures ? 1 : 0;
}
