/* collectives_nonblocking_vector.c: MPI_Igatherv, MPI_Ialltoallv, MPI_Ialltoallw, MPI_Iscan and
 * MPI_Iexscan, part of the collectives_nonblocking program (collectives_nonblocking.c runs these).
 * On a dup of MPI_COMM_WORLD (sites interleaved: Iscan and Iexscan there are Open MPI's), the
 * even/odd split and `by_site` (the world ordered by site: consecutive sites, the site path for
 * Iscan and Iexscan): twelve outstanding at once, completed by each completion call in turn
 * (complete()); uneven and zero counts, displacements reversed and with gaps, MPI_IN_PLACE,
 * derived types (a pair, a spaced pair) on one side only, per-rank types in Ialltoallw, a
 * non-commutative operation (2x2 matrix product) in Iscan and Iexscan, Iexscan's rank 0 whose
 * receive buffer stays untouched; then one Ialltoallv and one Igatherv larger than a segment of the
 * leaders' transfers. Every element is checked here and printed (holes too): integers only, the
 * transcripts with and without LongPipe must be identical. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectives_nonblocking.h"

enum { kMax = 64, kSentinel = -77 };

static MPI_Datatype g_pair;    /* two ints */
static MPI_Datatype g_spaced;  /* two ints two apart, extent four ints */
static MPI_Datatype g_matrix;  /* 2x2 unsigned */
static MPI_Op g_product;       /* matrix product, in rank order: not commutative */

static void matrix_of(int r, int k, unsigned out[4]) {
  out[0] = (unsigned)(r + 2 + k);
  out[1] = 1;
  out[2] = (unsigned)(k + 1);
  out[3] = (unsigned)(r % 3);
}

static void multiply(const unsigned x[4], const unsigned y[4], unsigned out[4]) {
  unsigned p[4];
  p[0] = x[0] * y[0] + x[1] * y[2];
  p[1] = x[0] * y[1] + x[1] * y[3];
  p[2] = x[2] * y[0] + x[3] * y[2];
  p[3] = x[2] * y[1] + x[3] * y[3];
  memcpy(out, p, sizeof p);
}

static void product_op(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  const unsigned* x = in;
  unsigned* y = inout;
  for (int i = 0; i < *len; ++i) multiply(x + 4 * i, y + 4 * i, y + 4 * i);  /* in op inout: in on the left */
}

/* M(0,k) * M(1,k) * ... * M(last,k); the identity if last < 0. */
static void prefix_product(int last, int k, unsigned out[4]) {
  unsigned m[4];
  out[0] = 1, out[1] = 0, out[2] = 0, out[3] = 1;
  for (int r = 0; r <= last; ++r) {
    matrix_of(r, k, m);
    multiply(out, m, out);
  }
}

static void print_ints(const char* what, const int* values, int n) {
  say("%s:", what);
  for (int i = 0; i < n; ++i) say(" %d", values[i]);
  say("\n");
}

typedef struct {
  int rank, size, hrank, hsize, srank, ssize;
} Ranks;

/* Twelve outstanding, completed by `how`. */
static void batch(int how, MPI_Comm dup, MPI_Comm half, MPI_Comm by_site, const Ranks* k) {
  const int rank = k->rank, size = k->size, hrank = k->hrank, hsize = k->hsize, srank = k->srank, ssize = k->ssize;
  MPI_Request requests[kRequests];
  int n = 0;
  char what[96];
  /* Igatherv on dup: counts (r + how) % 3, reversed displacements with gaps. */
  const int gv_root = (1 + how) % size;
  int gv_in[3], gv_out[4 * kMax], gv_counts[kMax], gv_displs[kMax];
  for (int i = 0; i < 3; ++i) gv_in[i] = 100 * rank + i;
  for (int r = 0; r < size; ++r) gv_counts[r] = (r + how) % 3, gv_displs[r] = 4 * (size - 1 - r);
  for (int i = 0; i < 4 * size; ++i) gv_out[i] = -1;
  MPI_Igatherv(gv_in, (rank + how) % 3, MPI_INT, gv_out, gv_counts, gv_displs, MPI_INT, gv_root, dup, &requests[n++]);
  /* Igatherv on by_site, MPI_IN_PLACE at the root. */
  const int ip_root = ssize - 1 - how % ssize;
  int ip_buf[3 * kMax], ip_counts[kMax], ip_displs[kMax], ip_in[2] = {20 * srank, 20 * srank + 1};
  for (int r = 0; r < ssize; ++r) ip_counts[r] = 2, ip_displs[r] = 3 * r;
  for (int i = 0; i < 3 * ssize; ++i) ip_buf[i] = srank == ip_root && i / 3 == srank && i % 3 < 2 ? ip_in[i % 3] : -1;
  MPI_Igatherv(srank == ip_root ? MPI_IN_PLACE : ip_in, 2, MPI_INT, ip_buf, ip_counts, ip_displs, MPI_INT, ip_root,
               by_site, &requests[n++]);
  /* Igatherv on half: the root receives pairs, the senders send ints. */
  int hp_in[4], hp_out[4 * kMax], hp_counts[kMax], hp_displs[kMax];
  for (int i = 0; i < 4; ++i) hp_in[i] = 50 * hrank + i + how;
  for (int r = 0; r < hsize; ++r) hp_counts[r] = r % 2 + 1, hp_displs[r] = 2 * r;  /* in pairs */
  for (int i = 0; i < 4 * hsize; ++i) hp_out[i] = -1;
  MPI_Igatherv(hp_in, 2 * (hrank % 2 + 1), MPI_INT, hp_out, hp_counts, hp_displs, g_pair, 0, half, &requests[n++]);
  /* Ialltoallv on dup: counts (i + j + how) % 3, reversed send and gapped receive displacements. */
  int av_in[3 * kMax], av_out[4 * kMax], av_sc[kMax], av_sd[kMax], av_rc[kMax], av_rd[kMax];
  for (int j = 0; j < size; ++j) {
    av_sc[j] = (rank + j + how) % 3, av_sd[j] = 3 * (size - 1 - j);
    av_rc[j] = (j + rank + how) % 3, av_rd[j] = 4 * j + 1;
    for (int i = 0; i < 3; ++i) av_in[av_sd[j] + i] = 1000 * rank + 10 * j + i;
  }
  for (int i = 0; i < 4 * size; ++i) av_out[i] = -1;
  MPI_Ialltoallv(av_in, av_sc, av_sd, MPI_INT, av_out, av_rc, av_rd, MPI_INT, dup, &requests[n++]);
  /* Ialltoallv in place on half: counts (i + j) % 2 + 1. */
  int hv_buf[3 * kMax], hv_counts[kMax], hv_displs[kMax];
  for (int j = 0; j < hsize; ++j) {
    hv_counts[j] = (hrank + j) % 2 + 1, hv_displs[j] = 3 * j;
    for (int i = 0; i < 3; ++i) hv_buf[3 * j + i] = i < hv_counts[j] ? 100 * hrank + 10 * j + i : -1;
  }
  MPI_Ialltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, hv_buf, hv_counts, hv_displs, MPI_INT, half,
                 &requests[n++]);
  /* Ialltoallw on dup: (i + j + how) % 3 pairs; sent as ints to even ranks, as pairs to odd ones;
   * received spaced from even ranks, as ints from odd ones; byte displacements. */
  int aw_in[8 * kMax], aw_out[9 * kMax], aw_sc[kMax], aw_sd[kMax], aw_rc[kMax], aw_rd[kMax];
  MPI_Datatype aw_st[kMax], aw_rt[kMax];
  for (int j = 0; j < size; ++j) {
    const int pairs = (rank + j + how) % 3;
    aw_st[j] = j % 2 ? g_pair : MPI_INT, aw_sc[j] = j % 2 ? pairs : 2 * pairs;
    aw_sd[j] = (int)((size - 1 - j) * 8 * sizeof(int));
    aw_rt[j] = j % 2 ? MPI_INT : g_spaced, aw_rc[j] = j % 2 ? 2 * pairs : pairs;
    aw_rd[j] = (int)((9 * j + 1) * sizeof(int));
    for (int i = 0; i < 8; ++i) aw_in[8 * (size - 1 - j) + i] = 10000 * rank + 100 * j + i;
  }
  for (int i = 0; i < 9 * size; ++i) aw_out[i] = -1;
  MPI_Ialltoallw(aw_in, aw_sc, aw_sd, aw_st, aw_out, aw_rc, aw_rd, aw_rt, dup, &requests[n++]);
  /* Iscan and Iexscan with the matrix product on by_site (the site path) and on dup. */
  unsigned scan_in[2][4], scan_out[2][4], exscan_in[4], exscan_out[4], dup_scan_out[4];
  for (int m = 0; m < 2; ++m) matrix_of(srank, m + how, scan_in[m]);
  matrix_of(srank, how, exscan_in);
  for (int i = 0; i < 4; ++i) exscan_out[i] = (unsigned)kSentinel;
  unsigned dup_scan_in[4];
  matrix_of(rank, how, dup_scan_in);
  MPI_Iscan(scan_in, scan_out, 2, g_matrix, g_product, by_site, &requests[n++]);
  MPI_Iexscan(exscan_in, exscan_out, 1, g_matrix, g_product, by_site, &requests[n++]);
  MPI_Iscan(dup_scan_in, dup_scan_out, 1, g_matrix, g_product, dup, &requests[n++]);
  /* In place, MPI_SUM: Iscan on dup, Iexscan (rank 0 untouched) on by_site; MPI_MAX Iexscan on half. */
  int sum_scan[2] = {rank + how, -rank}, half_max[3] = {hrank * 7 % 5, how, -hrank}, half_max_in[3];
  long long sum_exscan[2] = {1LL << srank, 3};
  memcpy(half_max_in, half_max, sizeof half_max);
  MPI_Iscan(MPI_IN_PLACE, sum_scan, 2, MPI_INT, MPI_SUM, dup, &requests[n++]);
  MPI_Iexscan(MPI_IN_PLACE, sum_exscan, 2, MPI_LONG_LONG, MPI_SUM, by_site, &requests[n++]);
  MPI_Iexscan(half_max_in, half_max, 3, MPI_INT, MPI_MAX, half, &requests[n++]);
  complete((enum Completion)how, n, requests);

  const char* name = completion_names[how];
  if (rank == gv_root) {
    snprintf(what, sizeof what, "%s: igatherv root %d", name, gv_root);
    print_ints(what, gv_out, 4 * size);
    for (int r = 0; r < size; ++r) {
      for (int i = 0; i < 4; ++i) {
        const int got = gv_out[gv_displs[r] + i];
        check(got == (i < gv_counts[r] ? 100 * r + i : -1), "igatherv data");
      }
    }
  }
  if (srank == ip_root) {
    snprintf(what, sizeof what, "%s: igatherv in place by site root %d", name, ip_root);
    print_ints(what, ip_buf, 3 * ssize);
    for (int i = 0; i < 3 * ssize; ++i) {
      check(ip_buf[i] == (i % 3 < 2 ? 20 * (i / 3) + i % 3 : -1), "in-place igatherv");
    }
  }
  if (hrank == 0) {
    snprintf(what, sizeof what, "%s: half igatherv pairs", name);
    print_ints(what, hp_out, 4 * hsize);
    for (int r = 0; r < hsize; ++r) {
      for (int i = 0; i < 4; ++i) {
        check(hp_out[4 * r + i] == (i < 2 * hp_counts[r] ? 50 * r + i + how : -1), "half igatherv data");
      }
    }
  }
  snprintf(what, sizeof what, "%s: ialltoallv", name);
  print_ints(what, av_out, 4 * size);
  for (int i = 0; i < 4 * size; ++i) {
    const int from = i / 4, at = i % 4 - 1;
    check(av_out[i] == (at >= 0 && at < av_rc[from] ? 1000 * from + 10 * rank + at : -1), "ialltoallv data");
  }
  snprintf(what, sizeof what, "%s: half ialltoallv in place", name);
  print_ints(what, hv_buf, 3 * hsize);
  for (int j = 0; j < hsize; ++j) {
    for (int i = 0; i < hv_counts[j]; ++i) check(hv_buf[3 * j + i] == 100 * j + 10 * hrank + i, "in-place ialltoallv");
  }
  snprintf(what, sizeof what, "%s: ialltoallw", name);
  print_ints(what, aw_out, 9 * size);
  for (int from = 0; from < size; ++from) {
    const int pairs = (from + rank + how) % 3;
    for (int e = 0; e < 2 * pairs; ++e) {
      const int at = 9 * from + 1 + (from % 2 ? e : (e / 2) * 4 + (e % 2) * 2);
      check(aw_out[at] == 10000 * from + 100 * rank + e, "ialltoallw data");
    }
  }
  unsigned want[4];
  say("%s: iscan matrices by site:", name);
  for (int m = 0; m < 2; ++m) {
    prefix_product(srank, m + how, want);
    for (int i = 0; i < 4; ++i) say(" %u", scan_out[m][i]), check(scan_out[m][i] == want[i], "iscan matrix product");
  }
  say("\n%s: iexscan matrix by site:", name);
  prefix_product(srank - 1, how, want);
  for (int i = 0; i < 4; ++i) {
    say(" %u", exscan_out[i]);
    check(exscan_out[i] == (srank == 0 ? (unsigned)kSentinel : want[i]), "iexscan matrix product");
  }
  say("\n%s: iscan matrix on dup:", name);
  prefix_product(rank, how, want);
  for (int i = 0; i < 4; ++i) say(" %u", dup_scan_out[i]), check(dup_scan_out[i] == want[i], "dup iscan matrix");
  say("\n%s: iscan in place sum %d %d; iexscan in place by site %lld %lld; half iexscan max", name, sum_scan[0],
      sum_scan[1], sum_exscan[0], sum_exscan[1]);
  check(sum_scan[0] == rank * (rank + 1) / 2 + (rank + 1) * how && sum_scan[1] == -rank * (rank + 1) / 2,
        "in-place iscan");
  if (srank == 0) check(sum_exscan[0] == 1 && sum_exscan[1] == 3, "in-place iexscan wrote rank 0's buffer");
  else check(sum_exscan[0] == (1LL << srank) - 1 && sum_exscan[1] == 3LL * srank, "in-place iexscan");
  for (int i = 0; i < 3 && hrank > 0; ++i) {
    int max = -1000000;
    for (int r = 0; r < hrank; ++r) {
      const int v = i == 0 ? r * 7 % 5 : i == 1 ? how : -r;
      if (v > max) max = v;
    }
    say(" %d", half_max[i]);
    check(half_max[i] == max, "half iexscan max");
  }
  say("\n");
}

/* One Ialltoallv on by_site and one Igatherv on dup whose blocks make transfers of several segments. */
static void large(MPI_Comm dup, MPI_Comm by_site, const Ranks* k) {
  enum { kBlock = 40000 };
  const int size = k->ssize, rank = k->srank;
  int* in = malloc((size_t)size * kBlock * sizeof *in);
  int* out = malloc((size_t)size * kBlock * sizeof *out);
  int counts[kMax], displs[kMax];
  for (int j = 0; j < size; ++j) {
    counts[j] = kBlock - 1000 * ((rank + j) % 3);
    displs[j] = (size - 1 - j) * kBlock;
    for (int i = 0; i < kBlock; ++i) in[displs[j] + i] = rank * 1000000 + j * 50000 + i;
  }
  for (int i = 0; i < size * kBlock; ++i) out[i] = -1;
  int* gathered = malloc((size_t)k->size * kBlock * sizeof *gathered);
  int* mine = malloc(kBlock * sizeof *mine);
  for (int i = 0; i < kBlock; ++i) mine[i] = k->rank * 1000000 + i;
  int gather_counts[kMax], gather_displs[kMax], wrong = 0, holes = 0;
  for (int r = 0; r < k->size; ++r) gather_counts[r] = kBlock - 7 * r, gather_displs[r] = r * kBlock;
  for (int i = 0; i < k->size * kBlock; ++i) gathered[i] = -1;
  MPI_Request requests[2];
  MPI_Ialltoallv(in, counts, displs, MPI_INT, out, counts, displs, MPI_INT, by_site, &requests[0]);
  MPI_Igatherv(mine, kBlock - 7 * k->rank, MPI_INT, gathered, gather_counts, gather_displs, MPI_INT, k->size - 1, dup,
               &requests[1]);
  MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
  for (int j = 0; j < size; ++j) {
    for (int i = 0; i < kBlock; ++i) {
      const int got = out[displs[j] + i];
      if (i < counts[j]) wrong += got != j * 1000000 + rank * 50000 + i;
      else holes += got != -1;
    }
  }
  if (k->rank == k->size - 1) {
    for (int r = 0; r < k->size; ++r) {
      for (int i = 0; i < kBlock; ++i) {
        wrong += gathered[gather_displs[r] + i] != (i < gather_counts[r] ? r * 1000000 + i : -1);
      }
    }
  }
  say("large: ialltoallv and igatherv of %d-int blocks, %d wrong, %d holes written\n", kBlock, wrong, holes);
  check(wrong == 0 && holes == 0, "large ialltoallv or igatherv");
  free(in);
  free(out);
  free(gathered);
  free(mine);
}

void nonblocking_vector(MPI_Comm dup, MPI_Comm half, MPI_Comm by_site) {
  Ranks k;
  MPI_Comm_rank(dup, &k.rank);
  MPI_Comm_size(dup, &k.size);
  MPI_Comm_rank(half, &k.hrank);
  MPI_Comm_size(half, &k.hsize);
  MPI_Comm_rank(by_site, &k.srank);
  MPI_Comm_size(by_site, &k.ssize);
  MPI_Type_contiguous(2, MPI_INT, &g_pair);
  MPI_Type_commit(&g_pair);
  MPI_Datatype spaced;
  MPI_Type_vector(2, 1, 2, MPI_INT, &spaced);
  MPI_Type_create_resized(spaced, 0, 4 * (MPI_Aint)sizeof(int), &g_spaced);
  MPI_Type_commit(&g_spaced);
  MPI_Type_free(&spaced);
  MPI_Type_contiguous(4, MPI_UNSIGNED, &g_matrix);
  MPI_Type_commit(&g_matrix);
  MPI_Op_create(product_op, 0, &g_product);
  for (int how = 0; how < kCompletions; ++how) batch(how, dup, half, by_site, &k);
  large(dup, by_site, &k);
  MPI_Op_free(&g_product);
  MPI_Type_free(&g_matrix);
  MPI_Type_free(&g_spaced);
  MPI_Type_free(&g_pair);
}
