/* collectives_comms_suite.c: every collective on one intra-communicator, blocking or (g_nonblocking)
 * nonblocking, each result checked against values computed here (rank r's i-th value is
 * r * 1000 + i): MPI_IN_PLACE where MPI allows it, zero counts, uneven counts with displacements in
 * reverse rank order and gaps that must stay untouched, a vector type with holes, and a
 * non-commutative operation (2x2 matrix product). */
#include <string.h>

#include "collectives_comms.h"

enum { kBuffer = 1024, kUntouched = -1 };

static void fill(int* a, int n, int value) {
  for (int i = 0; i < n; ++i) a[i] = value;
}

/* The roots of rooted collectives: every rank, or the first, a middle and the last. */
static int roots_of(const Comm* c, int roots[kMaxRanks]) {
  if (g_all_roots) {
    for (int r = 0; r < c->size; ++r) roots[r] = r;
    return c->size;
  }
  int n = 0;
  roots[n++] = 0;
  if (c->size / 2 != 0) roots[n++] = c->size / 2;
  if (c->size - 1 > c->size / 2) roots[n++] = c->size - 1;
  return n;
}

/* Uneven counts r % 3 (some zero), blocks placed in reverse rank order with a gap of one. */
static int uneven_layout(int n, int counts[kMaxRanks], int displs[kMaxRanks]) {
  int at = 0;
  for (int r = n - 1; r >= 0; --r) {
    counts[r] = r % 3;
    displs[r] = at;
    at += counts[r] + 1;
  }
  return at;
}

static void matrix_product_of(int first, int last, int k, unsigned out[4]) { /* M(first,k) ... M(last,k) */
  unsigned acc[4] = {1, 0, 0, 1};
  for (int r = first; r <= last; ++r) {
    unsigned m[4], t[4];
    matrix_of(r, k, m);
    matrix_multiply(acc, m, t);
    memcpy(acc, t, sizeof acc);
  }
  memcpy(out, acc, sizeof acc);
}

static void expect_matrices(const char* what, const unsigned* got, int first, int last, int k0, int count) {
  for (int k = 0; k < count; ++k) {
    unsigned want[4];
    matrix_product_of(first, last, k0 + k, want);
    for (int e = 0; e < 4; ++e) expect_unsigned(what, k * 4 + e, got[k * 4 + e], want[e]);
  }
}

static void rooted(const Comm* c) {
  const int n = c->size, me = c->rank;
  int roots[kMaxRanks], a[kBuffer], b[kBuffer];
  const int nroots = roots_of(c, roots);
  MPI_Datatype vec; /* 3 ints, stride 2: extent 5 ints, holes at 1 and 3 */
  MPI_Type_vector(3, 1, 2, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  for (int k = 0; k < nroots; ++k) {
    const int root = roots[k];
    fill(a, 4, kUntouched);
    if (me == root) for (int i = 0; i < 4; ++i) a[i] = val(root, i);
    RUN(c, Bcast, Ibcast, 0, a, 4, MPI_INT, root, c->comm);
    for (int i = 0; i < 4; ++i) expect_int("bcast", i, a[i], val(root, i));

    for (int i = 0; i < 3; ++i) a[i] = val(me, i);
    fill(b, 3, kUntouched);
    RUN(c, Reduce, Ireduce, 0, a, b, 3, MPI_INT, MPI_SUM, root, c->comm);
    if (me == root) for (int i = 0; i < 3; ++i) expect_int("reduce sum", i, b[i], 1000 * n * (n - 1) / 2 + n * i);

    unsigned m[8], p[8];
    matrix_of(me, 0, m);
    matrix_of(me, 1, m + 4);
    memset(p, 0, sizeof p);
    RUN(c, Reduce, Ireduce, 1, m, p, 2, g_matrix_type, g_matrix_product, root, c->comm);
    if (me == root) expect_matrices("reduce non-commutative", p, 0, n - 1, 0, 2);

    fill(b, 2 * n, kUntouched);
    for (int i = 0; i < 2; ++i) a[i] = val(me, i);
    RUN(c, Gather, Igather, 0, a, 2, MPI_INT, b, 2, MPI_INT, root, c->comm);
    if (me == root) for (int j = 0; j < 2 * n; ++j) expect_int("gather", j, b[j], val(j / 2, j % 2) );

    fill(a, 2 * n, kUntouched);
    if (me == root) for (int j = 0; j < 2 * n; ++j) a[j] = val(j / 2, j % 2) + root;
    fill(b, 2, kUntouched);
    RUN(c, Scatter, Iscatter, 0, a, 2, MPI_INT, b, 2, MPI_INT, root, c->comm);
    for (int i = 0; i < 2; ++i) expect_int("scatter", i, b[i], val(me, i) + root);
  }
  const int last = n - 1, middle = n / 2;
  /* Zero counts. */
  RUN(c, Bcast, Ibcast, 0, a, 0, MPI_INT, last, c->comm);
  RUN(c, Reduce, Ireduce, 0, a, b, 0, MPI_INT, MPI_SUM, middle, c->comm);
  /* A vector type with holes from the last rank: the holes keep what was there. */
  for (int j = 0; j < 10; ++j) a[j] = me == last ? val(last, j) : kUntouched;
  RUN(c, Bcast, Ibcast, 0, a, 2, vec, last, c->comm);
  for (int j = 0; j < 10; ++j) expect_int("bcast vector", j, a[j], (j % 5) % 2 == 0 || me == last ? val(last, j) : kUntouched);
  /* MPI_IN_PLACE at the root. */
  for (int i = 0; i < 3; ++i) a[i] = b[i] = val(me, i);
  RUN(c, Reduce, Ireduce, 0, me == middle ? MPI_IN_PLACE : a, b, 3, MPI_INT, MPI_MAX, middle, c->comm);
  if (me == middle) for (int i = 0; i < 3; ++i) expect_int("reduce in place max", i, b[i], val(n - 1, i));
  fill(b, 2 * n, kUntouched);
  for (int i = 0; i < 2; ++i) a[i] = b[2 * me + i] = val(me, i);
  RUN(c, Gather, Igather, 0, me == last ? MPI_IN_PLACE : a, 2, MPI_INT, b, 2, MPI_INT, last, c->comm);
  if (me == last) for (int j = 0; j < 2 * n; ++j) expect_int("gather in place", j, b[j], val(j / 2, j % 2));
  /* Gather: a vector type with holes on the send side, root 0. */
  for (int j = 0; j < 5; ++j) a[j] = val(me, j);
  fill(b, 3 * n, kUntouched);
  RUN(c, Gather, Igather, 0, a, 1, vec, b, 3, MPI_INT, 0, c->comm);
  if (me == 0) for (int j = 0; j < 3 * n; ++j) expect_int("gather vector", j, b[j], val(j / 3, 2 * (j % 3)));
  /* Scatter in place at the middle root: its block stays where it is. */
  for (int j = 0; j < 2 * n; ++j) a[j] = me == middle ? val(j / 2, j % 2) + 7 : kUntouched;
  fill(b, 2, kUntouched);
  RUN(c, Scatter, Iscatter, 0, a, 2, MPI_INT, me == middle ? MPI_IN_PLACE : b, 2, MPI_INT, middle, c->comm);
  for (int i = 0; i < 2; ++i) expect_int("scatter in place", i, me == middle ? a[2 * me + i] : b[i], val(me, i) + 7);
  /* Gatherv / Scatterv: uneven counts (zero too), reversed displacements with gaps. */
  int counts[kMaxRanks], displs[kMaxRanks];
  const int span = uneven_layout(n, counts, displs);
  for (int i = 0; i < counts[me]; ++i) a[i] = val(me, i);
  fill(b, span, kUntouched);
  RUN(c, Gatherv, Igatherv, 0, a, counts[me], MPI_INT, b, counts, displs, MPI_INT, middle, c->comm);
  if (me == middle) {
    for (int r = 0; r < n; ++r) {
      for (int i = 0; i < counts[r]; ++i) expect_int("gatherv", displs[r] + i, b[displs[r] + i], val(r, i));
      expect_int("gatherv gap", displs[r] + counts[r], b[displs[r] + counts[r]], kUntouched);
    }
  }
  fill(a, span, kUntouched);
  if (me == last) for (int r = 0; r < n; ++r) for (int i = 0; i < counts[r]; ++i) a[displs[r] + i] = val(r, i) + 3;
  fill(b, 3, kUntouched);
  RUN(c, Scatterv, Iscatterv, 0, a, counts, displs, MPI_INT, b, counts[me], MPI_INT, last, c->comm);
  for (int i = 0; i < 3; ++i) expect_int("scatterv", i, b[i], i < counts[me] ? val(me, i) + 3 : kUntouched);
  MPI_Type_free(&vec);
}

static void all_to_all(const Comm* c) {
  const int n = c->size, me = c->rank;
  int a[kBuffer], b[kBuffer];
  MPI_Datatype vec;
  MPI_Type_vector(3, 1, 2, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  /* Allreduce: sums, MPI_IN_PLACE max, the non-commutative product, zero count. */
  for (int i = 0; i < 5; ++i) a[i] = val(me, i);
  fill(b, 5, kUntouched);
  RUN(c, Allreduce, Iallreduce, 0, a, b, 5, MPI_INT, MPI_SUM, c->comm);
  for (int i = 0; i < 5; ++i) expect_int("allreduce sum", i, b[i], 1000 * n * (n - 1) / 2 + n * i);
  for (int i = 0; i < 5; ++i) b[i] = val(me, i);
  RUN(c, Allreduce, Iallreduce, 0, MPI_IN_PLACE, b, 5, MPI_INT, MPI_MAX, c->comm);
  for (int i = 0; i < 5; ++i) expect_int("allreduce in place max", i, b[i], val(n - 1, i));
  unsigned m[8], p[8];
  matrix_of(me, 0, m);
  matrix_of(me, 1, m + 4);
  RUN(c, Allreduce, Iallreduce, 1, m, p, 2, g_matrix_type, g_matrix_product, c->comm);
  expect_matrices("allreduce non-commutative", p, 0, n - 1, 0, 2);
  RUN(c, Allreduce, Iallreduce, 0, a, b, 0, MPI_INT, MPI_SUM, c->comm);
  /* Allgather plain and in place, Allgatherv uneven. */
  for (int i = 0; i < 2; ++i) a[i] = val(me, i);
  fill(b, 2 * n, kUntouched);
  RUN(c, Allgather, Iallgather, 0, a, 2, MPI_INT, b, 2, MPI_INT, c->comm);
  for (int j = 0; j < 2 * n; ++j) expect_int("allgather", j, b[j], val(j / 2, j % 2));
  fill(b, 2 * n, kUntouched);
  for (int i = 0; i < 2; ++i) b[2 * me + i] = val(me, i);
  RUN(c, Allgather, Iallgather, 0, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, 2, MPI_INT, c->comm);
  for (int j = 0; j < 2 * n; ++j) expect_int("allgather in place", j, b[j], val(j / 2, j % 2));
  int counts[kMaxRanks], displs[kMaxRanks];
  const int span = uneven_layout(n, counts, displs);
  fill(b, span, kUntouched);
  RUN(c, Allgatherv, Iallgatherv, 0, a, counts[me], MPI_INT, b, counts, displs, MPI_INT, c->comm);
  for (int r = 0; r < n; ++r) {
    for (int i = 0; i < counts[r]; ++i) expect_int("allgatherv", displs[r] + i, b[displs[r] + i], val(r, i));
    expect_int("allgatherv gap", displs[r] + counts[r], b[displs[r] + counts[r]], kUntouched);
  }
  /* Alltoall: block (me -> d) holds me * 1000 + d * 10 + i; plain, in place, vector send type. */
  for (int d = 0; d < n; ++d) for (int i = 0; i < 2; ++i) a[2 * d + i] = val(me, d * 10 + i);
  fill(b, 2 * n, kUntouched);
  RUN(c, Alltoall, Ialltoall, 0, a, 2, MPI_INT, b, 2, MPI_INT, c->comm);
  for (int j = 0; j < 2 * n; ++j) expect_int("alltoall", j, b[j], val(j / 2, me * 10 + j % 2));
  memcpy(b, a, sizeof(int) * 2 * (size_t)n);
  RUN(c, Alltoall, Ialltoall, 0, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, 2, MPI_INT, c->comm);
  for (int j = 0; j < 2 * n; ++j) expect_int("alltoall in place", j, b[j], val(j / 2, me * 10 + j % 2));
  /* Not above 12 ranks: there Open MPI 4.1.4 alone picks its Bruck algorithm for small blocks,
   * which delivers other ranks' blocks with a vector send type (coll_tuned_alltoall_algorithm 3
   * fails, 2 passes; with or without LongPipe). */
  if (n <= 12) {
    for (int d = 0; d < n; ++d) for (int j = 0; j < 5; ++j) a[5 * d + j] = val(me, d * 10 + j);
    fill(b, 3 * n, kUntouched);
    RUN(c, Alltoall, Ialltoall, 0, a, 1, vec, b, 3, MPI_INT, c->comm);
    for (int j = 0; j < 3 * n; ++j) expect_int("alltoall vector", j, b[j], val(j / 3, me * 10 + 2 * (j % 3)));
  }
  /* Alltoallv / Alltoallw: (me + d) % 3 values to d, packed in order; received in reverse order with gaps. */
  int sc[kMaxRanks], sd[kMaxRanks], rc[kMaxRanks], rd[kMaxRanks], sdb[kMaxRanks], rdb[kMaxRanks];
  MPI_Datatype types[kMaxRanks];
  int at = 0;
  for (int d = 0; d < n; ++d) {
    sc[d] = (me + d) % 3;
    sd[d] = at;
    sdb[d] = at * (int)sizeof(int);
    types[d] = MPI_INT;
    for (int i = 0; i < sc[d]; ++i) a[at + i] = val(me, d * 10 + i);
    at += sc[d];
  }
  at = 0;
  for (int s = n - 1; s >= 0; --s) {
    rc[s] = (s + me) % 3;
    rd[s] = at;
    rdb[s] = at * (int)sizeof(int);
    at += rc[s] + 1;
  }
  for (int w = 0; w < 2; ++w) {
    fill(b, at, kUntouched);
    if (w == 0) RUN(c, Alltoallv, Ialltoallv, 0, a, sc, sd, MPI_INT, b, rc, rd, MPI_INT, c->comm);
    else RUN(c, Alltoallw, Ialltoallw, 0, a, sc, sdb, types, b, rc, rdb, types, c->comm);
    for (int s = 0; s < n; ++s) {
      for (int i = 0; i < rc[s]; ++i) expect_int(w ? "alltoallw" : "alltoallv", rd[s] + i, b[rd[s] + i], val(s, me * 10 + i));
      expect_int("alltoallv gap", rd[s] + rc[s], b[rd[s] + rc[s]], kUntouched);
    }
  }
  MPI_Type_free(&vec);
}

static void reductions(const Comm* c) {
  const int n = c->size, me = c->rank;
  int a[kBuffer], b[kBuffer];
  const int sum0 = 1000 * n * (n - 1) / 2;
  /* Reduce_scatter_block: 2 values each; plain and in place. */
  for (int j = 0; j < 2 * n; ++j) a[j] = val(me, j);
  fill(b, 2, kUntouched);
  RUN(c, Reduce_scatter_block, Ireduce_scatter_block, 0, a, b, 2, MPI_INT, MPI_SUM, c->comm);
  for (int i = 0; i < 2; ++i) expect_int("reduce_scatter_block", i, b[i], sum0 + n * (2 * me + i));
  memcpy(b, a, sizeof(int) * 2 * (size_t)n);
  RUN(c, Reduce_scatter_block, Ireduce_scatter_block, 0, MPI_IN_PLACE, b, 2, MPI_INT, MPI_SUM, c->comm);
  for (int i = 0; i < 2; ++i) expect_int("reduce_scatter_block in place", i, b[i], sum0 + n * (2 * me + i));
  /* Reduce_scatter: counts r % 3 (rank 0 gets nothing), sums in place; matrices, one per rank. */
  int counts[kMaxRanks], offset = 0, total = 0;
  for (int r = 0; r < n; ++r) {
    counts[r] = r % 3;
    if (r < me) offset += counts[r];
    total += counts[r];
  }
  for (int j = 0; j < total; ++j) b[j] = val(me, j);
  RUN(c, Reduce_scatter, Ireduce_scatter, 0, MPI_IN_PLACE, b, counts, MPI_INT, MPI_SUM, c->comm);
  for (int i = 0; i < counts[me]; ++i) expect_int("reduce_scatter in place", i, b[i], sum0 + n * (offset + i));
  unsigned m[4 * kMaxRanks], p[4];
  int ones[kMaxRanks];
  for (int r = 0; r < n; ++r) {
    ones[r] = 1;
    matrix_of(me, r, m + 4 * r);
  }
  RUN(c, Reduce_scatter, Ireduce_scatter, 1, m, p, ones, g_matrix_type, g_matrix_product, c->comm);
  expect_matrices("reduce_scatter non-commutative", p, 0, n - 1, me, 1);
  /* Scan and Exscan: sums, in place, the product. */
  for (int i = 0; i < 3; ++i) a[i] = val(me, i);
  RUN(c, Scan, Iscan, 1, a, b, 3, MPI_INT, MPI_SUM, c->comm);
  for (int i = 0; i < 3; ++i) expect_int("scan", i, b[i], 1000 * me * (me + 1) / 2 + (me + 1) * i);
  memcpy(b, a, 3 * sizeof(int));
  RUN(c, Scan, Iscan, 1, MPI_IN_PLACE, b, 3, MPI_INT, MPI_SUM, c->comm);
  for (int i = 0; i < 3; ++i) expect_int("scan in place", i, b[i], 1000 * me * (me + 1) / 2 + (me + 1) * i);
  matrix_of(me, 0, m);
  matrix_of(me, 1, m + 4);
  unsigned q[8];
  RUN(c, Scan, Iscan, 1, m, q, 2, g_matrix_type, g_matrix_product, c->comm);
  expect_matrices("scan non-commutative", q, 0, me, 0, 2);
  fill(b, 3, kUntouched);
  RUN(c, Exscan, Iexscan, 1, a, b, 3, MPI_INT, MPI_SUM, c->comm);
  if (me > 0) for (int i = 0; i < 3; ++i) expect_int("exscan", i, b[i], 1000 * me * (me - 1) / 2 + me * i);
  memcpy(b, a, 3 * sizeof(int));
  RUN(c, Exscan, Iexscan, 1, MPI_IN_PLACE, b, 3, MPI_INT, MPI_SUM, c->comm);
  if (me > 0) for (int i = 0; i < 3; ++i) expect_int("exscan in place", i, b[i], 1000 * me * (me - 1) / 2 + me * i);
}

void intra_suite(const Comm* c) {
  RUN(c, Barrier, Ibarrier, 0, c->comm);
  rooted(c);
  all_to_all(c);
  reductions(c);
  edge_suite(c);
  RUN(c, Barrier, Ibarrier, 0, c->comm);
}

void overlap_suite(const Comm* c) {
  const int n = c->size, me = c->rank, last = n - 1;
  int bc[4], ar[3], sum[3], at[2 * kMaxRanks], at_out[2 * kMaxRanks], ga[2], gat[2 * kMaxRanks], sc[3];
  MPI_Request requests[6];
  begin_case(c, "overlapping Ibcast Iallreduce Ialltoall Iallgather Iscan Ibarrier");
  for (int i = 0; i < 4; ++i) bc[i] = me == last ? val(last, i) : kUntouched;
  for (int i = 0; i < 3; ++i) ar[i] = val(me, i);
  for (int d = 0; d < n; ++d) for (int i = 0; i < 2; ++i) at[2 * d + i] = val(me, d * 10 + i);
  for (int i = 0; i < 2; ++i) ga[i] = val(me, i);
  MPI_Ibcast(bc, 4, MPI_INT, last, c->comm, &requests[0]);
  MPI_Iallreduce(ar, sum, 3, MPI_INT, MPI_SUM, c->comm, &requests[1]);
  MPI_Ialltoall(at, 2, MPI_INT, at_out, 2, MPI_INT, c->comm, &requests[2]);
  MPI_Iallgather(ga, 2, MPI_INT, gat, 2, MPI_INT, c->comm, &requests[3]);
  MPI_Iscan(ar, sc, 3, MPI_INT, MPI_SUM, c->comm, &requests[4]);
  MPI_Ibarrier(c->comm, &requests[5]);
  const int rc = MPI_Waitall(6, requests, MPI_STATUSES_IGNORE);
  if (rc != MPI_SUCCESS) fail_rc(rc);
  count_call(c, K_Ibcast, 0);
  count_call(c, K_Iallreduce, 0);
  count_call(c, K_Ibarrier, 0);
  count_call(c, K_Ialltoall, 0);
  count_call(c, K_Iallgather, 0);
  count_call(c, K_Iscan, 1);
  for (int i = 0; i < 4; ++i) expect_int("overlapping ibcast", i, bc[i], val(last, i));
  for (int i = 0; i < 3; ++i) expect_int("overlapping iallreduce", i, sum[i], 1000 * n * (n - 1) / 2 + n * i);
  for (int j = 0; j < 2 * n; ++j) expect_int("overlapping ialltoall", j, at_out[j], val(j / 2, me * 10 + j % 2));
  for (int j = 0; j < 2 * n; ++j) expect_int("overlapping iallgather", j, gat[j], val(j / 2, j % 2));
  for (int i = 0; i < 3; ++i) expect_int("overlapping iscan", i, sc[i], 1000 * me * (me + 1) / 2 + (me + 1) * i);
}

/* One call of most collectives (rooted ones from the last rank or the middle one, the
 * non-commutative product, uneven counts), for runs where every call costs round trips. */
void compact_suite(const Comm* c) {
  const int n = c->size, me = c->rank, last = n - 1, middle = n / 2;
  int a[kBuffer], b[kBuffer], counts[kMaxRanks], displs[kMaxRanks];
  RUN(c, Barrier, Ibarrier, 0, c->comm);
  for (int i = 0; i < 4; ++i) a[i] = me == last ? val(last, i) : kUntouched;
  RUN(c, Bcast, Ibcast, 0, a, 4, MPI_INT, last, c->comm);
  for (int i = 0; i < 4; ++i) expect_int("bcast", i, a[i], val(last, i));
  unsigned m[8], p[8];
  matrix_of(me, 0, m);
  matrix_of(me, 1, m + 4);
  RUN(c, Reduce, Ireduce, 1, m, p, 2, g_matrix_type, g_matrix_product, middle, c->comm);
  if (me == middle) expect_matrices("reduce non-commutative", p, 0, n - 1, 0, 2);
  for (int i = 0; i < 3; ++i) a[i] = val(me, i);
  RUN(c, Allreduce, Iallreduce, 0, a, b, 3, MPI_INT, MPI_SUM, c->comm);
  for (int i = 0; i < 3; ++i) expect_int("allreduce sum", i, b[i], 1000 * n * (n - 1) / 2 + n * i);
  const int span = uneven_layout(n, counts, displs);
  fill(b, span, kUntouched);
  RUN(c, Gatherv, Igatherv, 0, a, counts[me], MPI_INT, b, counts, displs, MPI_INT, last, c->comm);
  if (me == last) for (int r = 0; r < n; ++r) for (int i = 0; i < counts[r]; ++i) expect_int("gatherv", displs[r] + i, b[displs[r] + i], val(r, i));
  fill(b, span, kUntouched);
  RUN(c, Allgatherv, Iallgatherv, 0, a, counts[me], MPI_INT, b, counts, displs, MPI_INT, c->comm);
  for (int r = 0; r < n; ++r) for (int i = 0; i < counts[r]; ++i) expect_int("allgatherv", displs[r] + i, b[displs[r] + i], val(r, i));
  int x[2 * kMaxRanks];
  for (int d = 0; d < n; ++d) for (int i = 0; i < 2; ++i) x[2 * d + i] = val(me, d * 10 + i);
  RUN(c, Alltoall, Ialltoall, 0, x, 2, MPI_INT, b, 2, MPI_INT, c->comm);
  for (int j = 0; j < 2 * n; ++j) expect_int("alltoall", j, b[j], val(j / 2, me * 10 + j % 2));
  int offset = 0, total = 0;
  for (int r = 0; r < n; ++r) {
    counts[r] = r % 3;
    offset += r < me ? counts[r] : 0;
    total += counts[r];
  }
  for (int j = 0; j < total; ++j) b[j] = val(me, j);
  RUN(c, Reduce_scatter, Ireduce_scatter, 0, MPI_IN_PLACE, b, counts, MPI_INT, MPI_SUM, c->comm);
  for (int i = 0; i < counts[me]; ++i) expect_int("reduce_scatter in place", i, b[i], 1000 * n * (n - 1) / 2 + n * (offset + i));
  RUN(c, Scan, Iscan, 1, m, p, 2, g_matrix_type, g_matrix_product, c->comm);
  expect_matrices("scan non-commutative", p, 0, me, 0, 2);
  fill(b, 3, kUntouched);
  RUN(c, Exscan, Iexscan, 1, a, b, 3, MPI_INT, MPI_SUM, c->comm);
  if (me > 0) for (int i = 0; i < 3; ++i) expect_int("exscan", i, b[i], 1000 * me * (me - 1) / 2 + me * i);
}
