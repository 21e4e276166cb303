/* collectives_neighbor.c: the neighbourhood collectives (MPI_Neighbor_allgather(v),
 * MPI_Neighbor_alltoall(v/w) and their MPI_Ineighbor_* forms) on Cartesian grids of 1 to 3
 * dimensions (periodic and not, a periodic dimension of size 1 and 2: both sides one process), a
 * graph with repeated edges, and a distributed graph with repeated, asymmetric and self edges given
 * in an order of their own; a vector type with holes and per-neighbour types; MPI_PROC_NULL
 * neighbours (their blocks stay untouched); the nonblocking forms all outstanding at once and
 * waited for in reverse order; blocks of 1.2 MB on a ring; a communicator without topology (Open
 * MPI's error, returned).
 * Every received element is checked against what MPI's rules say it must be.
 * Plain MPI (mpi.h only): run with and without LD_PRELOAD=liblongpipe.so, the transcripts must be
 * identical.
 *
 * Usage: collectives_neighbor SITES DIR
 *   SITES  the site of each world rank, as LONGPIPE_MPI_SITES
 *   DIR    each rank writes DIR/expected-paths.RANK: per neighbourhood collective, how many of its
 *          calls LongPipe should take across sites and leave to Open MPI (a communicator spanning
 *          sites: across; none without topology)
 * Rank 0 prints every rank's lines, in rank order. A failed check aborts the job naming the case;
 * a case that does not finish within kCaseSeconds prints "HANG: ..." and exits 3. */
#include <mpi.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collectives_neighbor.h"

enum { kTranscriptBytes = 1 << 16 };

static char transcript[kTranscriptBytes];
static size_t transcript_used;
static char current_case[200];
static char hang_message[300];
static const char* const names[kCalls] = {
    "MPI_Neighbor_allgather",  "MPI_Neighbor_allgatherv",  "MPI_Neighbor_alltoall",  "MPI_Neighbor_alltoallv",
    "MPI_Neighbor_alltoallw",  "MPI_Ineighbor_allgather",  "MPI_Ineighbor_allgatherv", "MPI_Ineighbor_alltoall",
    "MPI_Ineighbor_alltoallv", "MPI_Ineighbor_alltoallw"};
static int expected[kCalls][2]; /* [call][0: across sites, 1: Open MPI] */
int g_world_rank, g_world_size;
int g_world_site[kMaxRanks];

void say(const char* format, ...) {
  va_list args;
  va_start(args, format);
  int n = vsnprintf(transcript + transcript_used, kTranscriptBytes - transcript_used, format, args);
  va_end(args);
  if (n > 0) transcript_used += (size_t)n;
  if (transcript_used >= kTranscriptBytes) transcript_used = kTranscriptBytes - 1;
}

static void on_alarm(int signal_number) {
  (void)signal_number;
  ssize_t ignored = write(2, hang_message, strlen(hang_message));
  (void)ignored;
  _exit(3);
}

void begin_case(const char* what) {
  snprintf(current_case, sizeof current_case, "%s (world rank %d)", what, g_world_rank);
  snprintf(hang_message, sizeof hang_message, "HANG: %s did not finish within %d s\n", current_case, kCaseSeconds);
  alarm(kCaseSeconds);
}

void fail(const char* format, ...) {
  char text[400];
  va_list args;
  va_start(args, format);
  vsnprintf(text, sizeof text, format, args);
  va_end(args);
  fprintf(stderr, "FAIL: %s: %s\n", current_case, text);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  exit(1);
}

void count_call(int call, int site_path) { ++expected[call][site_path ? 0 : 1]; }

int spans_sites(MPI_Comm comm) {
  MPI_Group group, world_group;
  int size, ranks[kMaxRanks], world[kMaxRanks];
  MPI_Comm_size(comm, &size);
  MPI_Comm_group(comm, &group);
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  for (int r = 0; r < size; ++r) ranks[r] = r;
  MPI_Group_translate_ranks(group, size, ranks, world_group, world);
  MPI_Group_free(&group);
  MPI_Group_free(&world_group);
  for (int r = 1; r < size; ++r) {
    if (g_world_site[world[r]] != g_world_site[world[0]]) return 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_world_size);
  if (argc != 3 || g_world_size > kMaxRanks || g_world_size < 4) {
    if (g_world_rank == 0) fprintf(stderr, "usage: collectives_neighbor SITES DIR (4 to %d ranks)\n", kMaxRanks);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int given = 0;
  for (char* p = argv[1]; *p && given < kMaxRanks; ++given) {
    g_world_site[given] = (int)strtol(p, &p, 10);
    if (*p == ',') ++p;
  }
  if (given != g_world_size) {
    fprintf(stderr, "collectives_neighbor: SITES names %d ranks, the job has %d\n", given, g_world_size);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  signal(SIGALRM, on_alarm);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN); /* inherited: fail() names the case */

  run_topologies();

  /* No topology: Open MPI's error, returned (MPI_ERRORS_RETURN), on both paths alike. */
  begin_case("no topology");
  MPI_Comm plain;
  MPI_Comm_dup(MPI_COMM_WORLD, &plain);
  int one = 1, got[kMaxRanks];
  const int rc = MPI_Neighbor_allgather(&one, 1, MPI_INT, got, 1, MPI_INT, plain);
  int error_class = MPI_SUCCESS;
  MPI_Error_class(rc, &error_class);
  say("no topology: %s\n", rc == MPI_SUCCESS ? "success" : error_class == MPI_ERR_TOPOLOGY ? "MPI_ERR_TOPOLOGY" : "error");
  count_call(kAllgather, 0);
  MPI_Comm_free(&plain);
  alarm(0);

  char path[1024];
  snprintf(path, sizeof path, "%s/expected-paths.%d", argv[2], g_world_rank);
  FILE* f = fopen(path, "w");
  if (!f) {
    perror(path);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (int k = 0; k < kCalls; ++k) fprintf(f, "%s %d %d\n", names[k], expected[k][0], expected[k][1]);
  fclose(f);

  static char all[kMaxRanks * kTranscriptBytes / 2];
  const int piece = (int)(sizeof all / kMaxRanks);
  if (transcript_used >= (size_t)piece) fail("transcript too long (%zu bytes)", transcript_used);
  MPI_Gather(transcript, piece, MPI_CHAR, all, piece, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (g_world_rank == 0) {
    for (int r = 0; r < g_world_size; ++r) printf("== rank %d\n%s", r, all + (size_t)r * (size_t)piece);
  }
  MPI_Finalize();
  return 0;
}
