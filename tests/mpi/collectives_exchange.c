/* collectives_exchange.c: MPI_Alltoall, MPI_Alltoallv, MPI_Alltoallw (those in collectives_alltoall.c),
 * MPI_Reduce_scatter, MPI_Reduce_scatter_block, MPI_Scan and MPI_Exscan on MPI_COMM_WORLD, a dup of it, split communicators that span sites (one
 * without rank 2, one with the ranks reversed) and one inside a site; MPI_IN_PLACE, derived types
 * (with holes, a struct with padding), user-defined operations (commutative and not).
 * Plain MPI (mpi.h only): run with and without LD_PRELOAD=liblongpipe.so, the transcripts must be
 * identical, except lines starting "order-sensitive" (floating-point results whose rounding depends
 * on the order of the reduction; they must be identical from run to run under one library).
 *
 * Usage: collectives_exchange SITES [DIR]
 *   SITES  the site of each world rank, as LONGPIPE_MPI_SITES
 *   DIR    each rank writes DIR/expected-paths.RANK: for each collective, how many of its calls
 *          LongPipe should take across sites ("site") and leave to Open MPI ("native"), from SITES:
 *          the site path needs a communicator spanning sites; Scan and Exscan, and reductions with
 *          a non-commutative operation, also need each site's ranks consecutive
 * Rank 0 prints every rank's lines, in rank order. Exit status 1 on a failed check. */
#include <mpi.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectives_exchange.h"

enum { kTranscriptBytes = 1 << 17, kMatrixModulus = 1000003 };

static char transcript[kTranscriptBytes];
static size_t transcript_used;
int failures;

void say(const char* format, ...) {
  va_list args;
  va_start(args, format);
  int n = vsnprintf(transcript + transcript_used, kTranscriptBytes - transcript_used, format, args);
  va_end(args);
  if (n > 0) transcript_used += (size_t)n;
  if (transcript_used >= kTranscriptBytes) transcript_used = kTranscriptBytes - 1;
}

void say_ints(const int* values, int n) {
  for (int i = 0; i < n; ++i) say(" %d", values[i]);
  say("\n");
}

unsigned long long bits(double value) {
  uint64_t b;
  memcpy(&b, &value, sizeof b);
  return (unsigned long long)b;
}

void check(int ok, const char* name, const char* what, int rank) {
  if (ok) return;
  fprintf(stderr, "FAIL: %s rank %d: %s\n", name, rank, what);
  ++failures;
}

/* ---- which path LongPipe should take (see the usage above) ---- */
static const char* const collective_names[kCollectives] = {"MPI_Alltoall",       "MPI_Alltoallv",
                                                             "MPI_Alltoallw",      "MPI_Reduce_scatter",
                                                             "MPI_Reduce_scatter_block", "MPI_Scan",
                                                             "MPI_Exscan"};
static int expected_site[kCollectives], expected_native[kCollectives];
static int world_site[kMaxRanks];

static struct placement placement_of(MPI_Comm comm) {
  int size;
  MPI_Comm_size(comm, &size);
  MPI_Group group, world_group;
  MPI_Comm_group(comm, &group);
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  int ranks[kMaxRanks], world[kMaxRanks];
  for (int r = 0; r < size; ++r) ranks[r] = r;
  MPI_Group_translate_ranks(group, size, ranks, world_group, world);
  MPI_Group_free(&group);
  MPI_Group_free(&world_group);
  struct placement p = {0, 1};
  int seen[kMaxRanks] = {0};
  for (int r = 0; r < size; ++r) {
    const int site = world_site[world[r]];
    if (site != world_site[world[0]]) p.spans = 1;
    if (r > 0 && site != world_site[world[r - 1]] && seen[site]) p.blocked = 0;
    seen[site] = 1;
  }
  return p;
}

void expect(int collective, int site_path) {
  if (site_path) {
    ++expected_site[collective];
  } else {
    ++expected_native[collective];
  }
}

/* ---- user operations ---- */

/* A 2x2 integer matrix stored in a vector type with holes: elements 0, 2, 4, 6 of 7 ints. */
static MPI_Datatype matrix_type;
static void matrix_product(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  int* a = in;
  int* b = inout;
  for (int m = 0; m < *len; ++m, a += 7, b += 7) {
    long long r0 = ((long long)a[0] * b[0] + (long long)a[2] * b[4]) % kMatrixModulus;
    long long r2 = ((long long)a[0] * b[2] + (long long)a[2] * b[6]) % kMatrixModulus;
    long long r4 = ((long long)a[4] * b[0] + (long long)a[6] * b[4]) % kMatrixModulus;
    long long r6 = ((long long)a[4] * b[2] + (long long)a[6] * b[6]) % kMatrixModulus;
    b[0] = (int)r0, b[2] = (int)r2, b[4] = (int)r4, b[6] = (int)r6;
  }
}

/* Commutative: element-wise "larger absolute value, the negative one on ties". */
static void larger_magnitude(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  int* a = in;
  int* b = inout;
  for (int i = 0; i < *len; ++i) {
    int x = abs(a[i]), y = abs(b[i]);
    if (x > y || (x == y && a[i] < b[i])) b[i] = a[i];
  }
}

static MPI_Op product_op, magnitude_op;

/* Matrices of rank `rank`, index `m`: not commuting with each other. */
static void fill_matrix(int* matrix, int rank, int m) {
  matrix[0] = rank + 1 + m, matrix[2] = 1, matrix[4] = (rank * 3 + m) % 5, matrix[6] = 2 - m % 2;
  matrix[1] = matrix[3] = matrix[5] = -99;
}

static void say_matrices(const int* matrices, int count) {
  for (int m = 0; m < count; ++m) {
    const int* a = matrices + 7 * m;
    say(" [%d %d %d %d | holes %d %d %d]", a[0], a[2], a[4], a[6], a[1], a[3], a[5]);
  }
  say("\n");
}

MPI_Datatype pair_type;

/* ---- the collectives on one communicator ---- */

static void reduce_scatter_tests(const char* name, MPI_Comm comm, int rank, int size, struct placement p) {
  /* Reduce_scatter_block: int sums, 2 per rank; MPI_IN_PLACE with max; exact and order-sensitive doubles. */
  int values[2 * kMaxRanks] = {0}, sums[2];
  for (int i = 0; i < 2 * size; ++i) values[i] = rank * 7 + i * 3 - (rank == i % size ? 50 : 0);
  MPI_Reduce_scatter_block(values, sums, 2, MPI_INT, MPI_SUM, comm);
  expect(kReduceScatterBlock, p.spans);
  say("%s: reduce_scatter_block sum:", name);
  say_ints(sums, 2);
  int in_place[2 * kMaxRanks];
  for (int i = 0; i < 2 * size; ++i) in_place[i] = (rank * 13 + i * 5) % 17;
  MPI_Reduce_scatter_block(MPI_IN_PLACE, in_place, 2, MPI_INT, MPI_MAX, comm);
  expect(kReduceScatterBlock, p.spans);
  say("%s: reduce_scatter_block in place max:", name);
  say_ints(in_place, 2);
  double exact[2 * kMaxRanks], exact_sums[2];
  double sensitive[2 * kMaxRanks], sensitive_sums[2];
  for (int i = 0; i < 2 * size; ++i) {
    exact[i] = rank * 0.25 - i;
    sensitive[i] = (rank + i) % 2 ? ((rank + i) % 4 == 1 ? 1e16 : -1e16) : 1.0 + 0.1 * rank + i / 3.0;
  }
  MPI_Reduce_scatter_block(exact, exact_sums, 2, MPI_DOUBLE, MPI_SUM, comm);
  MPI_Reduce_scatter_block(sensitive, sensitive_sums, 2, MPI_DOUBLE, MPI_SUM, comm);
  expect(kReduceScatterBlock, p.spans);
  expect(kReduceScatterBlock, p.spans);
  say("%s: reduce_scatter_block exact doubles: %016llx %016llx\n", name, bits(exact_sums[0]), bits(exact_sums[1]));
  say("order-sensitive %s rank %d: reduce_scatter_block: %016llx %016llx\n", name, rank, bits(sensitive_sums[0]),
      bits(sensitive_sums[1]));

  /* Reduce_scatter: counts i % 3 (rank 0 gets nothing), ints, MPI_IN_PLACE, user operations. */
  int counts[kMaxRanks], total = 0;
  for (int i = 0; i < size; ++i) total += counts[i] = i % 3;
  int mine = counts[rank];
  int vector[3 * kMaxRanks], result[3];
  for (int i = 0; i < total; ++i) vector[i] = (rank + 1) * (i + 1) * (i % 2 ? -1 : 1);
  for (int i = 0; i < 3; ++i) result[i] = -9;
  MPI_Reduce_scatter(vector, result, counts, MPI_INT, MPI_SUM, comm);
  expect(kReduceScatter, p.spans);
  say("%s: reduce_scatter sum:", name);
  say_ints(result, 3);
  long long in_place_ll[3 * kMaxRanks];
  for (int i = 0; i < total; ++i) in_place_ll[i] = (1LL << (rank + 33)) + i;
  MPI_Reduce_scatter(MPI_IN_PLACE, in_place_ll, counts, MPI_LONG_LONG, MPI_SUM, comm);
  expect(kReduceScatter, p.spans);
  say("%s: reduce_scatter in place:", name);
  for (int i = 0; i < mine; ++i) say(" %lld", in_place_ll[i]);
  say("\n");
  int magnitudes[3 * kMaxRanks];
  for (int i = 0; i < total; ++i) magnitudes[i] = (rank * 5 + i * 3) % 11 - 5;
  for (int i = 0; i < 3; ++i) result[i] = -9;
  MPI_Reduce_scatter(magnitudes, result, counts, MPI_INT, magnitude_op, comm);
  expect(kReduceScatter, p.spans);
  say("%s: reduce_scatter user op (commutative):", name);
  say_ints(result, 3);
  /* Non-commutative: matrices in a type with holes; the counts of matrices are 1 + i % 2. */
  int matrix_counts[kMaxRanks], matrices_total = 0;
  for (int i = 0; i < size; ++i) matrices_total += matrix_counts[i] = 1 + i % 2;
  int matrices[7 * 2 * kMaxRanks], products[7 * 2];
  for (int m = 0; m < matrices_total; ++m) fill_matrix(matrices + 7 * m, rank, m);
  for (int i = 0; i < 14; ++i) products[i] = -99;
  MPI_Reduce_scatter(matrices, products, matrix_counts, matrix_type, product_op, comm);
  expect(kReduceScatter, p.spans && p.blocked);
  say("%s: reduce_scatter user op (non-commutative, derived type):", name);
  say_matrices(products, matrix_counts[rank]);
  double sensitive_v[3 * kMaxRanks], sensitive_result[3] = {0, 0, 0};
  for (int i = 0; i < total; ++i) sensitive_v[i] = (rank + i) % 3 == 0 ? 1e16 : ((rank + i) % 3 == 1 ? 0.7 : -1e16);
  MPI_Reduce_scatter(sensitive_v, sensitive_result, counts, MPI_DOUBLE, MPI_SUM, comm);
  expect(kReduceScatter, p.spans);
  say("order-sensitive %s rank %d: reduce_scatter:", name, rank);
  for (int i = 0; i < mine; ++i) say(" %016llx", bits(sensitive_result[i]));
  say("\n");
}

static void scan_tests(const char* name, MPI_Comm comm, int rank, struct placement p) {
  const int ordered = p.spans && p.blocked;
  /* Scan: int sums, MPI_IN_PLACE, user operations, doubles. */
  int values[3] = {rank + 1, rank * rank, -3 * rank}, sums[3];
  MPI_Scan(values, sums, 3, MPI_INT, MPI_SUM, comm);
  expect(kScan, ordered);
  say("%s: scan sum:", name);
  say_ints(sums, 3);
  check(sums[0] == (rank + 1) * (rank + 2) / 2, name, "scan: wrong sum", rank);
  long long in_place[2] = {1LL << (rank + 32), rank % 2 ? -rank : 2 * rank};
  MPI_Scan(MPI_IN_PLACE, in_place, 2, MPI_LONG_LONG, MPI_MAX, comm);
  expect(kScan, ordered);
  say("%s: scan in place max: %lld %lld\n", name, in_place[0], in_place[1]);
  int magnitudes[2] = {(rank * 7) % 5 - 2, rank % 2 ? -rank : rank}, larger[2];
  MPI_Scan(magnitudes, larger, 2, MPI_INT, magnitude_op, comm);
  expect(kScan, ordered);
  say("%s: scan user op (commutative): %d %d\n", name, larger[0], larger[1]);
  int matrices[14], products[14];
  fill_matrix(matrices, rank, 0);
  fill_matrix(matrices + 7, rank, 1);
  for (int i = 0; i < 14; ++i) products[i] = -99;
  MPI_Scan(matrices, products, 2, matrix_type, product_op, comm);
  expect(kScan, ordered);
  say("%s: scan user op (non-commutative, derived type):", name);
  say_matrices(products, 2);
  double exact[2] = {rank * 0.5, -1.0 / (1 << (rank % 8))}, exact_sums[2];
  MPI_Scan(exact, exact_sums, 2, MPI_DOUBLE, MPI_SUM, comm);
  double sensitive[2] = {rank % 2 ? 1e16 : 1.0 + rank * 0.1, rank % 3 ? -1e16 : 0.3}, sensitive_sums[2];
  MPI_Scan(sensitive, sensitive_sums, 2, MPI_DOUBLE, MPI_SUM, comm);
  expect(kScan, ordered);
  expect(kScan, ordered);
  say("%s: scan exact doubles: %016llx %016llx\n", name, bits(exact_sums[0]), bits(exact_sums[1]));
  say("order-sensitive %s rank %d: scan: %016llx %016llx\n", name, rank, bits(sensitive_sums[0]),
      bits(sensitive_sums[1]));

  /* Exscan: the same; rank 0's result is undefined (not printed). */
  for (int i = 0; i < 3; ++i) sums[i] = -9;
  MPI_Exscan(values, sums, 3, MPI_INT, MPI_SUM, comm);
  expect(kExscan, ordered);
  if (rank > 0) {
    say("%s: exscan sum:", name);
    say_ints(sums, 3);
    check(sums[0] == rank * (rank + 1) / 2, name, "exscan: wrong sum", rank);
  }
  long long ex_in_place[2] = {1LL << (rank + 32), rank % 2 ? -rank : 2 * rank};
  MPI_Exscan(MPI_IN_PLACE, ex_in_place, 2, MPI_LONG_LONG, MPI_MAX, comm);
  expect(kExscan, ordered);
  if (rank > 0) say("%s: exscan in place max: %lld %lld\n", name, ex_in_place[0], ex_in_place[1]);
  MPI_Exscan(magnitudes, larger, 2, MPI_INT, magnitude_op, comm);
  expect(kExscan, ordered);
  if (rank > 0) say("%s: exscan user op (commutative): %d %d\n", name, larger[0], larger[1]);
  for (int i = 0; i < 14; ++i) products[i] = -99;
  MPI_Exscan(matrices, products, 2, matrix_type, product_op, comm);
  expect(kExscan, ordered);
  if (rank > 0) {
    say("%s: exscan user op (non-commutative, derived type):", name);
    say_matrices(products, 2);
  }
  MPI_Exscan(sensitive, sensitive_sums, 2, MPI_DOUBLE, MPI_SUM, comm);
  expect(kExscan, ordered);
  if (rank > 0) {
    say("order-sensitive %s rank %d: exscan: %016llx %016llx\n", name, rank, bits(sensitive_sums[0]),
        bits(sensitive_sums[1]));
  }
}

static void exercise(const char* name, MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return;
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const struct placement p = placement_of(comm);
  say("%s: rank %d of %d\n", name, rank, size);
  alltoall_tests(name, comm, rank, size, p);
  alltoallw_tests(name, comm, rank, size, p);
  reduce_scatter_tests(name, comm, rank, size, p);
  scan_tests(name, comm, rank, p);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int world_rank, world_size;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  if (argc < 2 || world_size > kMaxRanks) {
    if (world_rank == 0) fprintf(stderr, "usage: collectives_exchange SITES [DIR] (at most %d ranks)\n", kMaxRanks);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const char* p = argv[1];
  for (int r = 0; r < world_size && *p; ++r) {
    world_site[r] = (int)strtol(p, (char**)&p, 10);
    if (*p == ',') ++p;
  }

  MPI_Type_vector(4, 1, 2, MPI_INT, &matrix_type);
  MPI_Type_commit(&matrix_type);
  {
    const int lengths[2] = {1, 1};
    const MPI_Aint displacements[2] = {offsetof(struct pair, key), offsetof(struct pair, value)};
    const MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Datatype unsized;
    MPI_Type_create_struct(2, lengths, displacements, types, &unsized);
    MPI_Type_create_resized(unsized, 0, sizeof(struct pair), &pair_type);
    MPI_Type_commit(&pair_type);
    MPI_Type_free(&unsized);
  }
  MPI_Op_create(matrix_product, 0, &product_op);
  MPI_Op_create(larger_magnitude, 1, &magnitude_op);

  exercise("world", MPI_COMM_WORLD);
  MPI_Comm dup, without_rank2, reversed, one_site;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  exercise("dup", dup);
  MPI_Comm_split(MPI_COMM_WORLD, world_rank == 2 ? MPI_UNDEFINED : 0, world_rank, &without_rank2);
  exercise("without-rank-2", without_rank2);
  MPI_Comm_split(MPI_COMM_WORLD, 0, world_size - world_rank, &reversed);
  exercise("reversed", reversed);
  MPI_Comm_split(MPI_COMM_WORLD, world_site[world_rank], world_rank, &one_site);
  char one_site_name[32];
  snprintf(one_site_name, sizeof one_site_name, "site-%d", world_site[world_rank]);
  exercise(one_site_name, one_site);
  MPI_Comm_free(&dup);
  MPI_Comm_free(&reversed);
  MPI_Comm_free(&one_site);
  if (without_rank2 != MPI_COMM_NULL) MPI_Comm_free(&without_rank2);

  if (argc > 2) {
    char path[1024];
    snprintf(path, sizeof path, "%s/expected-paths.%d", argv[2], world_rank);
    FILE* f = fopen(path, "w");
    if (!f) {
      perror(path);
      ++failures;
    } else {
      for (int c = 0; c < kCollectives; ++c) fprintf(f, "%s %d %d\n", collective_names[c], expected_site[c], expected_native[c]);
      fclose(f);
    }
  }

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
  MPI_Op_free(&product_op);
  MPI_Op_free(&magnitude_op);
  MPI_Type_free(&matrix_type);
  MPI_Type_free(&pair_type);
  MPI_Finalize();
  return all_failures ? 1 : 0;
}
