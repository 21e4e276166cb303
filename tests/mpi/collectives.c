/* collectives.c: MPI_Barrier, MPI_Bcast, MPI_Reduce and MPI_Allreduce on MPI_COMM_WORLD, a dup of
 * it, split communicators that span sites (one with its ranks reordered) and one inside a site;
 * MPI_IN_PLACE, user-defined operations (commutative and not) and derived types with holes.
 * Plain MPI (mpi.h only): run with and without LD_PRELOAD=liblongpipe.so, the transcripts must be
 * identical, except lines starting "order-sensitive" (a floating-point sum whose rounding depends
 * on the order of the reduction; they must be identical from run to run under one library).
 *
 * Usage: collectives SITES [MARKER_DIR]
 *   SITES       the site of each world rank, as LONGPIPE_MPI_SITES (for the inside-a-site communicator)
 *   MARKER_DIR  ranks on one file system: the last rank of each communicator creates a file just
 *               before MPI_Barrier and everyone checks it exists after (nobody left early)
 * Rank 0 prints every rank's lines, in rank order. Exit status 1 on a failed check. */
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { kTranscriptBytes = 1 << 16, kMaxRanks = 64, kMatrixModulus = 1000003 };

static char transcript[kTranscriptBytes];
static size_t transcript_used;
static int failures;

static void say(const char* format, ...) {
  va_list args;
  va_start(args, format);
  int n = vsnprintf(transcript + transcript_used, kTranscriptBytes - transcript_used, format, args);
  va_end(args);
  if (n > 0) transcript_used += (size_t)n;
  if (transcript_used >= kTranscriptBytes) transcript_used = kTranscriptBytes - 1;
}

static unsigned long long bits(double value) {
  uint64_t b;
  memcpy(&b, &value, sizeof b);
  return (unsigned long long)b;
}

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

static void exercise(const char* name, MPI_Comm comm, const char* marker_dir) {
  if (comm == MPI_COMM_NULL) return;
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  say("%s: rank %d of %d\n", name, rank, size);

  /* Barrier: the last rank arrives late, with a file made just before; nobody may leave before. */
  for (int round = 0; round < 2; ++round) {
    char marker[512] = "";
    if (marker_dir) snprintf(marker, sizeof marker, "%s/barrier-%s-%d", marker_dir, name, round);
    if (marker_dir && rank == size - 1) {
      usleep(300 * 1000);
      FILE* f = fopen(marker, "w");
      if (f) fclose(f);
    }
    MPI_Barrier(comm);
    if (marker_dir && access(marker, F_OK) != 0) {
      fprintf(stderr, "FAIL: %s rank %d left MPI_Barrier before rank %d entered it\n", name, rank, size - 1);
      ++failures;
    }
  }
  say("%s: barrier passed\n", name);

  /* Bcast from every root: ints and doubles. */
  for (int root = 0; root < size; ++root) {
    int values[5];
    double reals[3];
    for (int i = 0; i < 5; ++i) values[i] = rank == root ? 1000 * root + i * 7 - 3 : -1;
    for (int i = 0; i < 3; ++i) reals[i] = rank == root ? root / 3.0 + i * 1e-7 : 0.0;
    MPI_Bcast(values, 5, MPI_INT, root, comm);
    MPI_Bcast(reals, 3, MPI_DOUBLE, root, comm);
    say("%s: bcast root %d: %d %d %d %d %d | %016llx %016llx %016llx\n", name, root, values[0], values[1], values[2],
        values[3], values[4], bits(reals[0]), bits(reals[1]), bits(reals[2]));
  }
  /* Bcast of a derived type with holes: the holes keep what was there. */
  {
    MPI_Datatype strided;
    MPI_Type_vector(3, 2, 3, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    int data[8];
    const int root = size - 1;
    for (int i = 0; i < 8; ++i) data[i] = rank == root ? 100 + i : -(rank + 1);
    MPI_Bcast(data, 1, strided, root, comm);
    say("%s: bcast vector type:", name);
    for (int i = 0; i < 8; ++i) say(" %d", data[i]);
    say("\n");
    MPI_Type_free(&strided);
  }

  /* Reduce to every root: int sum and max, exact double sum; MPI_IN_PLACE at the root. */
  for (int root = 0; root < size; ++root) {
    int mine[3] = {rank + 1, (rank * 37) % 11, -rank};
    int sums[3] = {0, 0, 0}, maxima[3] = {0, 0, 0};
    double exact = rank + 0.25 * root, exact_sum = 0.0;
    MPI_Reduce(mine, sums, 3, MPI_INT, MPI_SUM, root, comm);
    MPI_Reduce(mine, maxima, 3, MPI_INT, MPI_MAX, root, comm);
    MPI_Reduce(&exact, &exact_sum, 1, MPI_DOUBLE, MPI_SUM, root, comm);
    int in_place[2] = {rank * 3 + 1, 1 << rank % 16};
    MPI_Reduce(rank == root ? MPI_IN_PLACE : in_place, in_place, 2, MPI_INT, MPI_SUM, root, comm);
    if (rank == root) {
      say("%s: reduce root %d: sum %d %d %d max %d %d %d double %016llx in-place %d %d\n", name, root, sums[0],
          sums[1], sums[2], maxima[0], maxima[1], maxima[2], bits(exact_sum), in_place[0], in_place[1]);
    }
  }

  /* Allreduce: ints, exact doubles, MPI_IN_PLACE, user-defined ops on a derived type. */
  {
    long long mine[4] = {rank + 1, 1LL << (rank + 20), -7 * rank, rank * rank};
    long long sums[4];
    MPI_Allreduce(mine, sums, 4, MPI_LONG_LONG, MPI_SUM, comm);
    int flags = 1 << rank % 30, any = 0;
    MPI_Allreduce(&flags, &any, 1, MPI_INT, MPI_BOR, comm);
    double exact[2] = {rank * 0.5, -1.0 / (1 << (rank % 8))}, exact_sums[2];
    MPI_Allreduce(exact, exact_sums, 2, MPI_DOUBLE, MPI_SUM, comm);
    int in_place[3] = {rank, 10 - rank, rank % 3};
    MPI_Allreduce(MPI_IN_PLACE, in_place, 3, MPI_INT, MPI_MIN, comm);
    say("%s: allreduce sum %lld %lld %lld %lld bor %x double %016llx %016llx in-place min %d %d %d\n", name, sums[0],
        sums[1], sums[2], sums[3], any, bits(exact_sums[0]), bits(exact_sums[1]), in_place[0], in_place[1],
        in_place[2]);

    int magnitudes[3] = {rank % 2 ? -rank : rank, 3 - rank, rank == 1 ? -50 : 50}, larger[3];
    MPI_Allreduce(magnitudes, larger, 3, MPI_INT, magnitude_op, comm);
    say("%s: allreduce user op (commutative) %d %d %d\n", name, larger[0], larger[1], larger[2]);

    /* Non-commutative: product of 2x2 matrices in rank order; two of them, in a type with holes. */
    int matrices[14], products[14];
    for (int i = 0; i < 14; ++i) matrices[i] = products[i] = -99;
    int* m0 = matrices;
    int* m1 = matrices + 7;
    m0[0] = rank + 1, m0[2] = 1, m0[4] = 1, m0[6] = 0;
    m1[0] = 2, m1[2] = rank, m1[4] = rank + 3, m1[6] = 1;
    MPI_Allreduce(matrices, products, 2, matrix_type, product_op, comm);
    say("%s: allreduce user op (non-commutative, derived type) %d %d %d %d / %d %d %d %d holes %d %d\n", name,
        products[0], products[2], products[4], products[6], products[7], products[9], products[11], products[13],
        products[1], products[8]);
    int reduced[14];
    for (int i = 0; i < 14; ++i) reduced[i] = -99;
    MPI_Reduce(matrices, reduced, 2, matrix_type, product_op, size - 1, comm);
    if (rank == size - 1) {
      say("%s: reduce user op (non-commutative, derived type) %d %d %d %d / %d %d %d %d\n", name, reduced[0],
          reduced[2], reduced[4], reduced[6], reduced[7], reduced[9], reduced[11], reduced[13]);
    }
  }

  /* Floating point whose rounding depends on the order: all ranks must get the same bits. */
  {
    double sensitive[3] = {rank % 2 ? 1e16 : 1.0 + rank * 0.1, rank % 3 ? -1e16 : 0.3, 1.0 / (rank + 3)};
    double sums[3];
    MPI_Allreduce(sensitive, sums, 3, MPI_DOUBLE, MPI_SUM, comm);
    double all[3 * kMaxRanks];
    MPI_Gather(sums, 3, MPI_DOUBLE, all, 3, MPI_DOUBLE, 0, comm);
    if (rank == 0) {
      int same = 1;
      for (int r = 1; r < size && r < kMaxRanks; ++r) same = same && memcmp(all, all + 3 * r, sizeof sums) == 0;
      say("%s: allreduce order-sensitive doubles equal on every rank: %s\n", name, same ? "yes" : "NO");
      if (!same) ++failures;
      say("order-sensitive %s: %016llx %016llx %016llx\n", name, bits(sums[0]), bits(sums[1]), bits(sums[2]));
    }
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int world_rank, world_size;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  if (argc < 2 || world_size > kMaxRanks) {
    if (world_rank == 0) fprintf(stderr, "usage: collectives SITES [MARKER_DIR] (at most %d ranks)\n", kMaxRanks);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int site[kMaxRanks] = {0};
  const char* p = argv[1];
  for (int r = 0; r < world_size && *p; ++r) {
    site[r] = (int)strtol(p, (char**)&p, 10);
    if (*p == ',') ++p;
  }
  const char* marker_dir = argc > 2 ? argv[2] : NULL;

  MPI_Type_vector(4, 1, 2, MPI_INT, &matrix_type);
  MPI_Type_commit(&matrix_type);
  MPI_Op_create(matrix_product, 0, &product_op);
  MPI_Op_create(larger_magnitude, 1, &magnitude_op);

  exercise("world", MPI_COMM_WORLD, marker_dir);
  MPI_Comm dup, without_rank2, reversed, one_site;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  exercise("dup", dup, marker_dir);
  MPI_Comm_split(MPI_COMM_WORLD, world_rank == 2 ? MPI_UNDEFINED : 0, world_rank, &without_rank2);
  exercise("without-rank-2", without_rank2, marker_dir);
  MPI_Comm_split(MPI_COMM_WORLD, 0, world_size - world_rank, &reversed);
  exercise("reversed", reversed, marker_dir);
  MPI_Comm_split(MPI_COMM_WORLD, site[world_rank], world_rank, &one_site);
  char one_site_name[32];
  snprintf(one_site_name, sizeof one_site_name, "site-%d", site[world_rank]);
  exercise(one_site_name, one_site, marker_dir);
  /* Freed and made again: the cached site sub-communicator goes with it. */
  MPI_Comm_free(&dup);
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  exercise("dup-again", dup, marker_dir);
  MPI_Comm_free(&dup);
  MPI_Comm_free(&reversed);
  MPI_Comm_free(&one_site);
  if (without_rank2 != MPI_COMM_NULL) MPI_Comm_free(&without_rank2);

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
  MPI_Finalize();
  return all_failures ? 1 : 0;
}
