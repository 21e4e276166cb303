/* collectives_comms_edges.c: the corners of the intra-communicator suite, blocking or
 * (g_nonblocking) nonblocking: MPI_IN_PLACE in the v-collectives, zero counts everywhere, a
 * non-commutative Reduce_scatter_block. (Open MPI refuses predefined operations on a vector type:
 * MPI_ERR_OP.) */
#include <string.h>

#include "collectives_comms.h"

enum { kBuffer = 1024, kUntouched = -1 };

static void fill(int* a, int n, int value) {
  for (int i = 0; i < n; ++i) a[i] = value;
}

void edge_suite(const Comm* c) {
  const int n = c->size, me = c->rank, last = n - 1, middle = n / 2;
  int a[kBuffer], b[kBuffer], counts[kMaxRanks], displs[kMaxRanks], zeros[kMaxRanks];
  int at = 0;
  for (int r = n - 1; r >= 0; --r) { /* uneven, reversed, gaps */
    counts[r] = (r + 1) % 3;
    displs[r] = at;
    at += counts[r] + 1;
    zeros[r] = 0;
  }
  /* Gatherv, Scatterv in place at a middle root; Allgatherv, Alltoallv in place everywhere. */
  fill(b, at, kUntouched);
  for (int i = 0; i < counts[me]; ++i) a[i] = b[displs[me] + i] = val(me, i);
  RUN(c, Gatherv, Igatherv, 0, me == middle ? MPI_IN_PLACE : a, counts[me], MPI_INT, b, counts, displs, MPI_INT, middle, c->comm);
  if (me == middle) for (int r = 0; r < n; ++r) for (int i = 0; i < counts[r]; ++i) expect_int("gatherv in place", displs[r] + i, b[displs[r] + i], val(r, i));
  fill(a, at, kUntouched);
  if (me == middle) for (int r = 0; r < n; ++r) for (int i = 0; i < counts[r]; ++i) a[displs[r] + i] = val(r, i) + 9;
  fill(b, 3, kUntouched);
  RUN(c, Scatterv, Iscatterv, 0, a, counts, displs, MPI_INT, me == middle ? MPI_IN_PLACE : b, counts[me], MPI_INT, middle, c->comm);
  for (int i = 0; i < counts[me]; ++i) expect_int("scatterv in place", i, me == middle ? a[displs[me] + i] : b[i], val(me, i) + 9);
  fill(b, at, kUntouched);
  for (int i = 0; i < counts[me]; ++i) b[displs[me] + i] = val(me, i);
  RUN(c, Allgatherv, Iallgatherv, 0, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, counts, displs, MPI_INT, c->comm);
  for (int r = 0; r < n; ++r) {
    for (int i = 0; i < counts[r]; ++i) expect_int("allgatherv in place", displs[r] + i, b[displs[r] + i], val(r, i));
    expect_int("allgatherv in place gap", displs[r] + counts[r], b[displs[r] + counts[r]], kUntouched);
  }
  /* Alltoallv in place: symmetric counts (r + me) % 3 from and to r, reversed with gaps. */
  int tc[kMaxRanks], td[kMaxRanks];
  at = 0;
  for (int r = n - 1; r >= 0; --r) {
    tc[r] = (r + me) % 3;
    td[r] = at;
    at += tc[r] + 1;
  }
  fill(b, at, kUntouched);
  for (int r = 0; r < n; ++r) for (int i = 0; i < tc[r]; ++i) b[td[r] + i] = val(me, r * 10 + i);
  RUN(c, Alltoallv, Ialltoallv, 0, MPI_IN_PLACE, zeros, zeros, MPI_DATATYPE_NULL, b, tc, td, MPI_INT, c->comm);
  for (int r = 0; r < n; ++r) {
    for (int i = 0; i < tc[r]; ++i) expect_int("alltoallv in place", td[r] + i, b[td[r] + i], val(r, me * 10 + i));
    expect_int("alltoallv in place gap", td[r] + tc[r], b[td[r] + tc[r]], kUntouched);
  }
  /* Zero counts: nothing moves, nothing is written. */
  fill(b, 8, kUntouched);
  RUN(c, Gather, Igather, 0, a, 0, MPI_INT, b, 0, MPI_INT, last, c->comm);
  RUN(c, Scatter, Iscatter, 0, a, 0, MPI_INT, b, 0, MPI_INT, middle, c->comm);
  RUN(c, Allgather, Iallgather, 0, a, 0, MPI_INT, b, 0, MPI_INT, c->comm);
  RUN(c, Alltoall, Ialltoall, 0, a, 0, MPI_INT, b, 0, MPI_INT, c->comm);
  RUN(c, Allgatherv, Iallgatherv, 0, a, 0, MPI_INT, b, zeros, zeros, MPI_INT, c->comm);
  RUN(c, Alltoallv, Ialltoallv, 0, a, zeros, zeros, MPI_INT, b, zeros, zeros, MPI_INT, c->comm);
  RUN(c, Reduce_scatter_block, Ireduce_scatter_block, 0, a, b, 0, MPI_INT, MPI_SUM, c->comm);
  RUN(c, Reduce_scatter, Ireduce_scatter, 0, a, b, zeros, MPI_INT, MPI_SUM, c->comm);
  RUN(c, Scan, Iscan, 1, a, b, 0, MPI_INT, MPI_SUM, c->comm);
  RUN(c, Exscan, Iexscan, 1, a, b, 0, MPI_INT, MPI_SUM, c->comm);
  for (int j = 0; j < 8; ++j) expect_int("zero counts", j, b[j], kUntouched);
  /* Reduce_scatter_block with the non-commutative product: rank r gets M(0,r) ... M(n-1,r). */
  unsigned m[4 * kMaxRanks], p[4], want[4] = {1, 0, 0, 1};
  for (int r = 0; r < n; ++r) matrix_of(me, r, m + 4 * r);
  RUN(c, Reduce_scatter_block, Ireduce_scatter_block, 1, m, p, 1, g_matrix_type, g_matrix_product, c->comm);
  for (int r = 0; r < n; ++r) {
    unsigned x[4], t[4];
    matrix_of(r, me, x);
    matrix_multiply(want, x, t);
    memcpy(want, t, sizeof want);
  }
  for (int e = 0; e < 4; ++e) expect_unsigned("reduce_scatter_block non-commutative", e, p[e], want[e]);
}
