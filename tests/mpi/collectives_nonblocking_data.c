/* collectives_nonblocking_data.c: MPI_Ireduce, MPI_Igather, MPI_Iscatter(v), MPI_Iallgather(v),
 * MPI_Ialltoall and MPI_Ireduce_scatter(_block), part of the collectives_nonblocking program (collectives_nonblocking.c runs these).
 * On a dup of MPI_COMM_WORLD and the even/odd split (with sites 0,1,0,1,1 the even half has world rank 4 alone
 * at its site): ten outstanding at once, completed in reverse order by MPI_Test polling; non-zero
 * roots; MPI_IN_PLACE; a strided send type at the scatter's root and a pair type receiving ints;
 * blocking collectives and point-to-point between posting and waiting. Each case polls with a
 * deadline and fails with a message naming it (no hang). Integers only: the transcripts with and
 * without LongPipe must be identical. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "collectives_nonblocking.h"

enum { kDeadlineSeconds = 120, kMax = 64 };

/* Completes requests[count - 1] first, down to requests[0], each by MPI_Test polling. */
static void test_in_reverse(const char* what, int count, MPI_Request* requests) {
  const double deadline = MPI_Wtime() + kDeadlineSeconds;
  for (int i = count - 1; i >= 0; --i) {
    int flag = 0;
    while (!flag) {
      MPI_Test(&requests[i], &flag, MPI_STATUS_IGNORE);
      if (!flag && MPI_Wtime() > deadline) {
        fprintf(stderr, "FAIL: %s: request %d not complete after %d s of MPI_Test\n", what, i, kDeadlineSeconds);
        MPI_Abort(MPI_COMM_WORLD, 3);
      }
    }
    check(requests[i] == MPI_REQUEST_NULL, "request not freed by MPI_Test");
  }
}

static void outstanding_data(MPI_Comm dup, MPI_Comm half) {
  int rank, size, hrank, hsize;
  MPI_Comm_rank(dup, &rank);
  MPI_Comm_size(dup, &size);
  MPI_Comm_rank(half, &hrank);
  MPI_Comm_size(half, &hsize);
  const int reduce_root = size - 1, gather_root = 1 % size, scatter_root = 2 % size, half_root = hsize - 1;

  long long reduce_in[3] = {rank + 1, (long long)rank * rank, -3LL * rank}, reduce_out[3] = {-1, -1, -1};
  int allgather_in[2] = {10 * rank, 10 * rank + 1}, allgather_out[2 * kMax];
  MPI_Datatype pair;  /* receives what the senders send as two MPI_INT */
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  int gather_in[3] = {100 * rank, 100 * rank + 1, 100 * rank + 2}, gather_out[3 * kMax];
  MPI_Datatype strided;  /* the scatter root's blocks: ints 0 and 2 of every 3 */
  MPI_Type_vector(2, 1, 2, MPI_INT, &strided);
  MPI_Type_commit(&strided);
  int scatter_in[3 * kMax], scatter_out[2] = {-1, -1};
  for (int i = 0; i < 3 * size; ++i) scatter_in[i] = rank == scatter_root ? 1000 + i : -1;
  int half_all[kMax];
  for (int i = 0; i < hsize; ++i) half_all[i] = i == hrank ? 7 * hrank + 1 : -1;
  int half_max[2] = {hrank * 5 % 3, -hrank};
  int half_counts[kMax], half_displs[kMax], half_send[kMax], half_got[kMax];
  for (int r = 0, at = 0; r < hsize; ++r) {
    half_counts[r] = r % 3;
    half_displs[r] = at;
    at += r % 3;
  }
  for (int i = 0; i < kMax; ++i) half_send[i] = hrank == 0 ? 50 + i : -1;
  for (int i = 0; i < kMax; ++i) half_got[i] = -1;
  int v_counts[kMax], v_displs[kMax], v_in[kMax], v_out[4 * kMax];
  for (int r = 0; r < size; ++r) {
    v_counts[r] = (r + 1) % 3;
    v_displs[r] = 4 * (size - 1 - r);  /* reversed, with gaps */
  }
  for (int i = 0; i < kMax; ++i) v_in[i] = 300 * rank + i;
  for (int i = 0; i < 4 * kMax; ++i) v_out[i] = -1;
  for (int i = 0; i < 2 * kMax; ++i) allgather_out[i] = -1;
  for (int i = 0; i < 3 * kMax; ++i) gather_out[i] = -1;
  int a2a_in[2 * kMax], a2a_out[2 * kMax], half_a2a_in[kMax], half_a2a_out[kMax];
  for (int i = 0; i < 2 * size; ++i) {
    a2a_in[i] = 1000 * rank + i;  /* to rank i / 2 */
    a2a_out[i] = -1;
  }
  for (int i = 0; i < hsize; ++i) {
    half_a2a_in[i] = 10 * hrank + i;
    half_a2a_out[i] = -1;
  }

  MPI_Request requests[10];
  int n = 0;
  MPI_Ireduce(reduce_in, reduce_out, 3, MPI_LONG_LONG, MPI_SUM, reduce_root, dup, &requests[n++]);
  MPI_Iallgather(allgather_in, 2, MPI_INT, allgather_out, 1, pair, dup, &requests[n++]);
  MPI_Igather(gather_in, 3, MPI_INT, gather_out, 3, MPI_INT, gather_root, dup, &requests[n++]);
  MPI_Iscatter(scatter_in, 1, strided, scatter_out, 2, MPI_INT, scatter_root, dup, &requests[n++]);
  MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, half_all, 1, MPI_INT, half, &requests[n++]);
  MPI_Ireduce(hrank == half_root ? MPI_IN_PLACE : half_max, half_max, 2, MPI_INT, MPI_MAX, half_root, half,
              &requests[n++]);
  MPI_Iscatterv(half_send, half_counts, half_displs, MPI_INT, half_got, hrank % 3, MPI_INT, 0, half, &requests[n++]);
  MPI_Ialltoall(a2a_in, 2, MPI_INT, a2a_out, 1, pair, dup, &requests[n++]);
  MPI_Iallgatherv(v_in, (rank + 1) % 3, MPI_INT, v_out, v_counts, v_displs, MPI_INT, dup, &requests[n++]);
  MPI_Ialltoall(half_a2a_in, 1, MPI_INT, half_a2a_out, 1, MPI_INT, half, &requests[n++]);
  test_in_reverse("ten outstanding", n, requests);

  if (rank == reduce_root) {
    say("ireduce root %d: %lld %lld %lld\n", reduce_root, reduce_out[0], reduce_out[1], reduce_out[2]);
    check(reduce_out[0] == (long long)size * (size + 1) / 2, "ireduce sum");
  }
  say("iallgather pair type:");
  for (int i = 0; i < 2 * size; ++i) say(" %d", allgather_out[i]);
  for (int i = 0; i < 2 * size; ++i) check(allgather_out[i] == 10 * (i / 2) + i % 2, "iallgather data");
  if (rank == gather_root) {
    say("\nigather root %d:", gather_root);
    for (int i = 0; i < 3 * size; ++i) say(" %d", gather_out[i]);
    for (int i = 0; i < 3 * size; ++i) check(gather_out[i] == 100 * (i / 3) + i % 3, "igather data");
  }
  say("\niscatter strided root %d: %d %d\n", scatter_root, scatter_out[0], scatter_out[1]);
  check(scatter_out[0] == 1000 + 3 * rank && scatter_out[1] == 1002 + 3 * rank, "iscatter data");
  say("half iallgather in place:");
  for (int i = 0; i < hsize; ++i) say(" %d", half_all[i]);
  for (int i = 0; i < hsize; ++i) check(half_all[i] == 7 * i + 1, "in-place iallgather data");
  if (hrank == half_root) say("\nhalf ireduce in place max root %d: %d %d", half_root, half_max[0], half_max[1]);
  say("\nhalf iscatterv:");
  for (int i = 0; i < hrank % 3; ++i) say(" %d", half_got[i]);
  for (int i = 0; i < hrank % 3; ++i) check(half_got[i] == 50 + half_displs[hrank] + i, "iscatterv data");
  say("\nialltoall pair type:");
  for (int i = 0; i < 2 * size; ++i) say(" %d", a2a_out[i]);
  for (int i = 0; i < 2 * size; ++i) check(a2a_out[i] == 1000 * (i / 2) + 2 * rank + i % 2, "ialltoall data");
  say("\nhalf ialltoall:");
  for (int i = 0; i < hsize; ++i) say(" %d", half_a2a_out[i]);
  for (int i = 0; i < hsize; ++i) check(half_a2a_out[i] == 10 * i + hrank, "half ialltoall data");
  say("\niallgatherv reversed:");
  for (int i = 0; i < 4 * size; ++i) say(" %d", v_out[i]);
  say("\n");
  MPI_Type_free(&pair);
  MPI_Type_free(&strided);
}

/* Blocking collectives and point-to-point on the same communicator between posting and waiting. */
static void mixed_with_blocking(MPI_Comm dup) {
  int rank, size;
  MPI_Comm_rank(dup, &rank);
  MPI_Comm_size(dup, &size);
  const int root = size - 1;
  int mine = rank + 1, gathered[kMax], total = 0, blocking_all[kMax], scattered = -1, max = -1, token = -1;
  int to_scatter[kMax], ones[kMax], reversed[kMax];
  for (int i = 0; i < size; ++i) {
    to_scatter[i] = rank == 1 % size ? 40 + i : -1;
    ones[i] = 1;
    reversed[i] = size - 1 - i;
  }
  int exchanged[kMax], to_exchange[kMax];
  for (int i = 0; i < size; ++i) to_exchange[i] = 100 * rank + i;
  MPI_Request requests[5];
  MPI_Igather(&mine, 1, MPI_INT, gathered, 1, MPI_INT, root, dup, &requests[0]);
  MPI_Ireduce(&mine, &total, 1, MPI_INT, MPI_SUM, 0, dup, &requests[1]);
  MPI_Allgather(&mine, 1, MPI_INT, blocking_all, 1, MPI_INT, dup);
  MPI_Iscatterv(to_scatter, ones, reversed, MPI_INT, &scattered, 1, MPI_INT, 1 % size, dup, &requests[2]);
  MPI_Reduce(&mine, &max, 1, MPI_INT, MPI_MAX, root, dup);
  MPI_Sendrecv(&mine, 1, MPI_INT, (rank + 1) % size, 31, &token, 1, MPI_INT, (rank + size - 1) % size, 31, dup,
               MPI_STATUS_IGNORE);
  MPI_Ibarrier(dup, &requests[3]);
  MPI_Ialltoall(to_exchange, 1, MPI_INT, exchanged, 1, MPI_INT, dup, &requests[4]);
  MPI_Bcast(&max, 1, MPI_INT, root, dup);
  int summed = mine;
  MPI_Allreduce(MPI_IN_PLACE, &summed, 1, MPI_INT, MPI_SUM, dup);
  test_in_reverse("mixed with blocking", 5, requests);
  for (int i = 0; i < size; ++i) check(exchanged[i] == 100 * i + rank, "ialltoall among blocking");
  say("mixed: iscatterv %d token %d bcast max %d allgather last %d allreduce %d ialltoall first %d", scattered,
      token, max, blocking_all[size - 1], summed, exchanged[0]);
  check(scattered == 40 + size - 1 - rank && max == size && token == (rank + size - 1) % size + 1, "mixed results");
  if (rank == 0) say(" ireduce %d", total);
  if (rank == root) {
    say(" igather");
    for (int i = 0; i < size; ++i) say(" %d", gathered[i]);
    for (int i = 0; i < size; ++i) check(gathered[i] == i + 1, "igather among blocking");
  }
  say("\n");
}

/* Ireduce_scatter_block and Ireduce_scatter on the dup and an MPI_IN_PLACE Ireduce_scatter with uneven counts on the
 * half, outstanding together with a blocking Allreduce in between. */
static void reduce_scatter(MPI_Comm dup, MPI_Comm half) {
  int rank, size, hrank, hsize;
  MPI_Comm_rank(dup, &rank);
  MPI_Comm_size(dup, &size);
  MPI_Comm_rank(half, &hrank);
  MPI_Comm_size(half, &hsize);
  int block_in[2 * kMax], block_out[2] = {-1, -1}, counts[kMax], vector[3 * kMax], total = 0, one = 1, ranks = 0;
  for (int i = 0; i < 2 * size; ++i) block_in[i] = rank * 100 + i;
  for (int r = 0; r < hsize; ++r) {
    counts[r] = (r + 2) % 3;
    total += counts[r];
  }
  for (int i = 0; i < total; ++i) vector[i] = (hrank + 1) * (i + 1);
  int twos[kMax], as_v[2] = {-1, -1};
  for (int r = 0; r < size; ++r) twos[r] = 2;
  MPI_Request requests[3];
  MPI_Ireduce_scatter_block(block_in, block_out, 2, MPI_INT, MPI_SUM, dup, &requests[0]);
  MPI_Ireduce_scatter(block_in, as_v, twos, MPI_INT, MPI_SUM, dup, &requests[2]);
  MPI_Ireduce_scatter(MPI_IN_PLACE, vector, counts, MPI_INT, MPI_MAX, half, &requests[1]);
  MPI_Allreduce(&one, &ranks, 1, MPI_INT, MPI_SUM, dup);
  test_in_reverse("reduce_scatter", 3, requests);
  check(as_v[0] == block_out[0] && as_v[1] == block_out[1], "ireduce_scatter with equal counts");
  const int sum_of_ranks = size * (size - 1) / 2;
  say("ireduce_scatter_block: %d %d; ireduce_scatter in place max:", block_out[0], block_out[1]);
  check(block_out[0] == 100 * sum_of_ranks + size * 2 * rank && block_out[1] == block_out[0] + size,
        "ireduce_scatter_block data");
  int first = 0;
  for (int r = 0; r < hrank; ++r) first += counts[r];
  for (int i = 0; i < counts[hrank]; ++i) {
    say(" %d", vector[i]);
    check(vector[i] == hsize * (first + i + 1), "ireduce_scatter data");
  }
  say(" (allreduce %d)\n", ranks);
}

void nonblocking_data(MPI_Comm dup, MPI_Comm half) {
  reduce_scatter(dup, half);
  for (int round = 0; round < 2; ++round) outstanding_data(dup, half);
  mixed_with_blocking(dup);
  mixed_with_blocking(half);
}
