/* collectives_gather.c: MPI_Gather, MPI_Gatherv, MPI_Scatter, MPI_Scatterv, MPI_Allgather and
 * MPI_Allgatherv on MPI_COMM_WORLD, a dup of it, split communicators that span sites (one with its
 * ranks reversed, one of the even ranks) and one inside a site: every root, MPI_IN_PLACE, derived
 * types with holes on either side (the holes must keep what was there), uneven counts (zero too)
 * with displacements in reverse rank order and gaps, and a larger block (a checksum).
 * Plain MPI (mpi.h only): run with and without LD_PRELOAD=liblongpipe.so, the transcripts must be
 * identical (run_collectives.sh, scenarios gather-*).
 *
 * Usage: collectives_gather SITES [IGNORED]
 *   SITES  the site of each world rank, as LONGPIPE_MPI_SITES (for the inside-a-site communicator)
 * Rank 0 prints every rank's lines, in rank order. */
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kTranscriptBytes = 1 << 18, kMaxRanks = 64, kBig = 3000 };

static char transcript[kTranscriptBytes];
static size_t transcript_used;

static void say(const char* format, ...) {
  va_list args;
  va_start(args, format);
  int n = vsnprintf(transcript + transcript_used, kTranscriptBytes - transcript_used, format, args);
  va_end(args);
  if (n > 0) transcript_used += (size_t)n;
  if (transcript_used >= kTranscriptBytes) transcript_used = kTranscriptBytes - 1;
}

static void say_ints(const char* what, const int* values, int count) {
  say("%s:", what);
  for (int i = 0; i < count; ++i) say(" %d", values[i]);
  say("\n");
}

static unsigned long long bits(double value) {
  uint64_t b;
  memcpy(&b, &value, sizeof b);
  return (unsigned long long)b;
}

static unsigned long long checksum(const void* data, size_t bytes) {
  const unsigned char* p = data;
  unsigned long long hash = 1469598103934665603ULL;  /* FNV-1a */
  for (size_t i = 0; i < bytes; ++i) hash = (hash ^ p[i]) * 1099511628211ULL;
  return hash;
}

/* Two ints with a hole between them: elements 0 and 2 of 3 (extent 3 ints). */
static MPI_Datatype holey;
/* A struct with padding: {int, double}. */
typedef struct {
  int i;
  double d;
} Pair;
static MPI_Datatype pair_type;

/* Uneven counts (zero too) and displacements in reverse rank order with a gap after each block. */
static int uneven_layout(int size, int first, int* counts, int* displs) {
  int position = 0;
  for (int r = 0; r < size; ++r) counts[r] = (r * 2 + first) % 3;
  for (int r = size - 1; r >= 0; --r) {
    displs[r] = position;
    position += counts[r] + 1;
  }
  return position;
}

static void gathers(const char* name, MPI_Comm comm, int rank, int size) {
  char what[128];
  /* Gather of ints to every root. */
  for (int root = 0; root < size; ++root) {
    int mine[3] = {rank * 100 + root, rank * 100 + root + 1, -rank};
    int all[3 * kMaxRanks];
    for (int i = 0; i < 3 * size; ++i) all[i] = -1;
    MPI_Gather(mine, 3, MPI_INT, all, 3, MPI_INT, root, comm);
    snprintf(what, sizeof what, "%s: gather root %d", name, root);
    if (rank == root) say_ints(what, all, 3 * size);
  }
  /* MPI_IN_PLACE at the root (the middle rank): its block is already in place. */
  {
    const int root = size / 2;
    int all[2 * kMaxRanks];
    for (int i = 0; i < 2 * size; ++i) all[i] = -1;
    int mine[2] = {rank + 7, rank * rank};
    if (rank == root) memcpy(all + 2 * root, mine, sizeof mine);
    MPI_Gather(rank == root ? MPI_IN_PLACE : mine, 2, MPI_INT, all, 2, MPI_INT, root, comm);
    snprintf(what, sizeof what, "%s: gather in place root %d", name, root);
    if (rank == root) say_ints(what, all, 2 * size);
  }
  /* Derived types: sent from a type with a hole, received as ints; sent as ints, received with holes. */
  {
    const int root = size - 1;
    int source[3] = {rank * 3, -555, rank * 3 + 1};
    int plain[2 * kMaxRanks], with_holes[3 * kMaxRanks];
    for (int i = 0; i < 2 * size; ++i) plain[i] = -1;
    for (int i = 0; i < 3 * size; ++i) with_holes[i] = -7;
    MPI_Gather(source, 1, holey, plain, 2, MPI_INT, root, comm);
    int two[2] = {rank + 40, rank + 50};
    MPI_Gather(two, 2, MPI_INT, with_holes, 1, holey, root, comm);
    Pair pair = {rank - 3, rank / 4.0}, pairs[kMaxRanks];
    memset(pairs, 0, sizeof pairs);
    MPI_Gather(&pair, 1, pair_type, pairs, 1, pair_type, 0, comm);
    if (rank == root) {
      snprintf(what, sizeof what, "%s: gather from holes root %d", name, root);
      say_ints(what, plain, 2 * size);
      snprintf(what, sizeof what, "%s: gather into holes root %d", name, root);
      say_ints(what, with_holes, 3 * size);
    }
    if (rank == 0) {
      say("%s: gather struct root 0:", name);
      for (int r = 0; r < size; ++r) say(" (%d %016llx)", pairs[r].i, bits(pairs[r].d));
      say("\n");
    }
  }
  /* Gatherv: uneven counts, reverse order with gaps, root 1; then MPI_IN_PLACE at the last rank. */
  {
    int counts[kMaxRanks], displs[kMaxRanks];
    const int length = uneven_layout(size, 1, counts, displs);
    int all[4 * kMaxRanks], mine[3];
    for (int i = 0; i < 3; ++i) mine[i] = rank * 10 + i;
    for (int pass = 0; pass < 2; ++pass) {
      const int root = pass == 0 ? 1 % size : size - 1;
      const int in_place = pass == 1;
      for (int i = 0; i < length; ++i) all[i] = -1;
      if (in_place && rank == root) memcpy(all + displs[root], mine, counts[root] * sizeof(int));
      MPI_Gatherv(in_place && rank == root ? MPI_IN_PLACE : mine, counts[rank], MPI_INT, all, counts, displs,
                  MPI_INT, root, comm);
      snprintf(what, sizeof what, "%s: gatherv%s root %d", name, in_place ? " in place" : "", root);
      if (rank == root) say_ints(what, all, length);
    }
  }
  /* Gatherv into a type with holes, counts 0, 1, 2 of it per rank. */
  {
    int counts[kMaxRanks], displs[kMaxRanks];
    const int length = uneven_layout(size, 2, counts, displs);
    int mine[4] = {rank, rank + 100, rank + 200, rank + 300};
    int all[3 * 4 * kMaxRanks];
    for (int i = 0; i < 3 * length; ++i) all[i] = -9;
    MPI_Gatherv(mine, 2 * counts[rank], MPI_INT, all, counts, displs, holey, 0, comm);
    snprintf(what, sizeof what, "%s: gatherv into holes root 0", name);
    if (rank == 0) say_ints(what, all, 3 * length);
  }
  /* A larger block per rank: a checksum of the whole. */
  {
    static double mine[kBig], all[kBig * kMaxRanks];
    for (int i = 0; i < kBig; ++i) mine[i] = rank * 1e6 + i / 7.0;
    MPI_Gather(mine, kBig, MPI_DOUBLE, all, kBig, MPI_DOUBLE, size - 1, comm);
    if (rank == size - 1) {
      say("%s: gather %d doubles per rank: %016llx\n", name, kBig, checksum(all, sizeof(double) * kBig * size));
    }
  }
}

static void scatters(const char* name, MPI_Comm comm, int rank, int size) {
  char what[128];
  /* Scatter of ints from every root. */
  for (int root = 0; root < size; ++root) {
    int all[2 * kMaxRanks], mine[2] = {-1, -1};
    for (int i = 0; i < 2 * size; ++i) all[i] = rank == root ? root * 1000 + i : -2;
    MPI_Scatter(all, 2, MPI_INT, mine, 2, MPI_INT, root, comm);
    snprintf(what, sizeof what, "%s: scatter root %d", name, root);
    say_ints(what, mine, 2);
  }
  /* MPI_IN_PLACE at the root (the middle rank): its block stays in the send buffer. */
  {
    const int root = size / 2;
    int all[3 * kMaxRanks], mine[3] = {-1, -1, -1};
    for (int i = 0; i < 3 * size; ++i) all[i] = rank == root ? 500 + i : -2;
    MPI_Scatter(all, 3, MPI_INT, rank == root ? MPI_IN_PLACE : mine, 3, MPI_INT, root, comm);
    snprintf(what, sizeof what, "%s: scatter in place root %d", name, root);
    if (rank == root) {
      say_ints(what, all, 3 * size);
    } else {
      say_ints(what, mine, 3);
    }
  }
  /* Derived types: sent from a type with holes, received as ints; sent as ints, received with holes. */
  {
    const int root = size > 2 ? 2 : size - 1;
    int source[3 * kMaxRanks], plain[2] = {-1, -1}, with_holes[3] = {-7, -7, -7};
    for (int i = 0; i < 3 * size; ++i) source[i] = rank == root ? (i % 3 == 1 ? -555 : 70 + i) : -2;
    MPI_Scatter(source, 1, holey, plain, 2, MPI_INT, root, comm);
    int ints[2 * kMaxRanks];
    for (int i = 0; i < 2 * size; ++i) ints[i] = rank == root ? 900 + i : -2;
    MPI_Scatter(ints, 2, MPI_INT, with_holes, 1, holey, root, comm);
    snprintf(what, sizeof what, "%s: scatter from holes root %d", name, root);
    say_ints(what, plain, 2);
    snprintf(what, sizeof what, "%s: scatter into holes root %d", name, root);
    say_ints(what, with_holes, 3);
  }
  /* Scatterv: uneven counts (zero too), reverse order with gaps, the last rank; then MPI_IN_PLACE at rank 1. */
  {
    int counts[kMaxRanks], displs[kMaxRanks];
    const int length = uneven_layout(size, 0, counts, displs);
    for (int pass = 0; pass < 2; ++pass) {
      const int root = pass == 0 ? size - 1 : 1 % size;
      const int in_place = pass == 1;
      int all[4 * kMaxRanks], mine[3] = {-1, -1, -1};
      for (int i = 0; i < length; ++i) all[i] = rank == root ? 3000 + i * 3 : -2;
      MPI_Scatterv(all, counts, displs, MPI_INT, in_place && rank == root ? MPI_IN_PLACE : mine, counts[rank],
                   MPI_INT, root, comm);
      snprintf(what, sizeof what, "%s: scatterv%s root %d", name, in_place ? " in place" : "", root);
      say_ints(what, in_place && rank == root ? all : mine, in_place && rank == root ? length : 3);
    }
  }
  /* Scatterv of structs. */
  {
    Pair all[kMaxRanks], mine[2];
    int counts[kMaxRanks], displs[kMaxRanks];
    memset(mine, 0, sizeof mine);
    for (int r = 0; r < size; ++r) {
      counts[r] = r % 2 + 1;
      displs[r] = (size - 1 - r) / 2;  /* blocks may be sent twice from one place: allowed */
      all[r].i = rank == 0 ? r * 11 : -1;
      all[r].d = rank == 0 ? 1.0 / (r + 1) : 0.0;
    }
    MPI_Scatterv(all, counts, displs, pair_type, mine, counts[rank], pair_type, 0, comm);
    say("%s: scatterv struct root 0:", name);
    for (int i = 0; i < counts[rank]; ++i) say(" (%d %016llx)", mine[i].i, bits(mine[i].d));
    say("\n");
  }
  /* A larger block per rank: a checksum of each rank's part. */
  {
    static double all[kBig * kMaxRanks], mine[kBig];
    for (int i = 0; i < kBig * size; ++i) all[i] = rank == 1 % size ? i / 3.0 : -1.0;
    MPI_Scatter(all, kBig, MPI_DOUBLE, mine, kBig, MPI_DOUBLE, 1 % size, comm);
    say("%s: scatter %d doubles per rank: %016llx\n", name, kBig, checksum(mine, sizeof mine));
  }
}

static void allgathers(const char* name, MPI_Comm comm, int rank, int size) {
  char what[128];
  {
    int mine[2] = {rank * 5, -rank}, all[2 * kMaxRanks];
    for (int i = 0; i < 2 * size; ++i) all[i] = -1;
    MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, comm);
    snprintf(what, sizeof what, "%s: allgather", name);
    say_ints(what, all, 2 * size);
  }
  {
    double mine = rank / 3.0 + 1e-9, all[kMaxRanks];
    MPI_Allgather(&mine, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, comm);
    say("%s: allgather doubles:", name);
    for (int r = 0; r < size; ++r) say(" %016llx", bits(all[r]));
    say("\n");
  }
  /* MPI_IN_PLACE at every rank. */
  {
    int all[3 * kMaxRanks];
    for (int i = 0; i < 3 * size; ++i) all[i] = -1;
    for (int i = 0; i < 3; ++i) all[3 * rank + i] = rank * 1000 + i;
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, 3, MPI_INT, comm);
    snprintf(what, sizeof what, "%s: allgather in place", name);
    say_ints(what, all, 3 * size);
  }
  /* Derived types: sent from holes, received as ints; sent as ints, received with holes. */
  {
    int source[3] = {rank * 2, -555, rank * 2 + 1}, plain[2 * kMaxRanks], with_holes[3 * kMaxRanks];
    for (int i = 0; i < 2 * size; ++i) plain[i] = -1;
    for (int i = 0; i < 3 * size; ++i) with_holes[i] = -7 - rank;
    MPI_Allgather(source, 1, holey, plain, 2, MPI_INT, comm);
    int two[2] = {rank + 60, rank + 70};
    MPI_Allgather(two, 2, MPI_INT, with_holes, 1, holey, comm);
    snprintf(what, sizeof what, "%s: allgather from holes", name);
    say_ints(what, plain, 2 * size);
    snprintf(what, sizeof what, "%s: allgather into holes", name);
    say_ints(what, with_holes, 3 * size);
  }
  /* Allgatherv: uneven counts (zero too), reverse order with gaps; then MPI_IN_PLACE. */
  {
    int counts[kMaxRanks], displs[kMaxRanks];
    const int length = uneven_layout(size, 1, counts, displs);
    int all[4 * kMaxRanks], mine[3];
    for (int i = 0; i < 3; ++i) mine[i] = rank * 10 + i;
    for (int i = 0; i < length; ++i) all[i] = -1;
    MPI_Allgatherv(mine, counts[rank], MPI_INT, all, counts, displs, MPI_INT, comm);
    snprintf(what, sizeof what, "%s: allgatherv", name);
    say_ints(what, all, length);
    for (int i = 0; i < length; ++i) all[i] = -1 - rank;
    for (int i = 0; i < counts[rank]; ++i) all[displs[rank] + i] = rank * 10 + i + 5;
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, counts, displs, MPI_INT, comm);
    snprintf(what, sizeof what, "%s: allgatherv in place", name);
    say_ints(what, all, length);
  }
  /* Allgatherv of structs, and into a type with holes. */
  {
    int counts[kMaxRanks], displs[kMaxRanks];
    uneven_layout(size, 2, counts, displs);
    Pair mine[2] = {{rank, rank * 0.1}, {-rank, rank * 0.2}}, all[4 * kMaxRanks];
    memset(all, 0, sizeof all);
    MPI_Allgatherv(mine, counts[rank], pair_type, all, counts, displs, pair_type, comm);
    say("%s: allgatherv struct:", name);
    for (int r = 0; r < size; ++r) {
      for (int i = 0; i < counts[r]; ++i) say(" (%d %016llx)", all[displs[r] + i].i, bits(all[displs[r] + i].d));
    }
    say("\n");
    const int length = uneven_layout(size, 1, counts, displs);
    int ints[4] = {rank + 1, rank + 2, rank + 3, rank + 4}, with_holes[3 * 4 * kMaxRanks];
    for (int i = 0; i < 3 * length; ++i) with_holes[i] = -3;
    MPI_Allgatherv(ints, 2 * counts[rank], MPI_INT, with_holes, counts, displs, holey, comm);
    snprintf(what, sizeof what, "%s: allgatherv into holes", name);
    say_ints(what, with_holes, 3 * length);
  }
  /* A larger block per rank: a checksum of the whole. */
  {
    static double mine[kBig], all[kBig * kMaxRanks];
    for (int i = 0; i < kBig; ++i) mine[i] = rank - i / 9.0;
    MPI_Allgather(mine, kBig, MPI_DOUBLE, all, kBig, MPI_DOUBLE, comm);
    say("%s: allgather %d doubles per rank: %016llx\n", name, kBig, checksum(all, sizeof(double) * kBig * size));
  }
}

static void exercise(const char* name, MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return;
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  say("%s: rank %d of %d\n", name, rank, size);
  gathers(name, comm, rank, size);
  scatters(name, comm, rank, size);
  allgathers(name, comm, rank, size);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int world_rank, world_size;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  if (argc < 2 || world_size > kMaxRanks) {
    if (world_rank == 0) fprintf(stderr, "usage: collectives_gather SITES (at most %d ranks)\n", kMaxRanks);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int site[kMaxRanks] = {0};
  const char* p = argv[1];
  for (int r = 0; r < world_size && *p; ++r) {
    site[r] = (int)strtol(p, (char**)&p, 10);
    if (*p == ',') ++p;
  }

  MPI_Type_vector(2, 1, 2, MPI_INT, &holey);
  MPI_Type_commit(&holey);
  {
    Pair probe;
    int lengths[2] = {1, 1};
    MPI_Aint base, offsets[2];
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Get_address(&probe, &base);
    MPI_Get_address(&probe.i, &offsets[0]);
    MPI_Get_address(&probe.d, &offsets[1]);
    offsets[0] -= base;
    offsets[1] -= base;
    MPI_Datatype unsized;
    MPI_Type_create_struct(2, lengths, offsets, types, &unsized);
    MPI_Type_create_resized(unsized, 0, sizeof(Pair), &pair_type);
    MPI_Type_commit(&pair_type);
    MPI_Type_free(&unsized);
  }

  exercise("world", MPI_COMM_WORLD);
  MPI_Comm dup, without_rank2, reversed, even, one_site;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  exercise("dup", dup);
  MPI_Comm_split(MPI_COMM_WORLD, world_rank == 2 ? MPI_UNDEFINED : 0, world_rank, &without_rank2);
  exercise("without-rank-2", without_rank2);
  MPI_Comm_split(MPI_COMM_WORLD, 0, world_size - world_rank, &reversed);
  exercise("reversed", reversed);
  MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2 ? MPI_UNDEFINED : 0, world_rank, &even);
  exercise("even", even);
  MPI_Comm_split(MPI_COMM_WORLD, site[world_rank], world_rank, &one_site);
  char one_site_name[32];
  snprintf(one_site_name, sizeof one_site_name, "site-%d", site[world_rank]);
  exercise(one_site_name, one_site);
  MPI_Comm_free(&dup);
  MPI_Comm_free(&reversed);
  MPI_Comm_free(&one_site);
  if (without_rank2 != MPI_COMM_NULL) MPI_Comm_free(&without_rank2);
  if (even != MPI_COMM_NULL) MPI_Comm_free(&even);

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
  MPI_Type_free(&holey);
  MPI_Type_free(&pair_type);
  MPI_Finalize();
  return transcript_used >= kTranscriptBytes - 1 ? 1 : 0;
}
