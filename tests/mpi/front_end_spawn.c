/* A plain MPI program (no LongPipe header): MPI_Comm_spawn. Started with 2 ranks, it spawns 2 copies
 * of itself (argument "child"); parents and children exchange messages over the intercommunicator
 * (also with MPI_ANY_SOURCE), run a collective over it, merge it (MPI_Intercomm_merge) and use the
 * merged communicator: point-to-point with one tag across the old job's two ranks and the children,
 * an Allreduce, and a dup of it. tests/mpi/run_communicators.sh runs it with and without the
 * preload (parents at two sites) and requires identical transcripts: under LongPipe nothing
 * involving the children may hang (they run on Open MPI alone). Rank 0 of the parents prints the
 * transcript: every process's lines, gathered over the merged communicator. */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum { kLine = 160, kMaxLines = 8 };
static char lines[kMaxLines][kLine];
static int nlines;

static void say(const char* format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(lines[nlines++], kLine, format, args);
  va_end(args);
}

static void check(int ok, const char* what) {
  if (ok) return;
  fprintf(stderr, "FAILED: %s\n", what);
  MPI_Abort(MPI_COMM_WORLD, 2);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, child = argc > 1 && strcmp(argv[1], "child") == 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm inter = MPI_COMM_NULL, merged, merged_dup;
  if (child) {
    MPI_Comm_get_parent(&inter);
    check(inter != MPI_COMM_NULL, "a child has a parent");
  } else {
    char* child_argv[] = {"child", NULL};
    int errors[2];
    check(MPI_Comm_spawn(argv[0], child_argv, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errors) == MPI_SUCCESS,
          "MPI_Comm_spawn");
  }
  const char* who = child ? "child" : "parent";
  int remote_size = 0;
  MPI_Comm_remote_size(inter, &remote_size);
  say("%s %d of %d: %d in the other group", who, rank, size, remote_size);

  /* Point to point over the intercommunicator: rank i to the other group's rank i, tag 3; then
   * from the other group's every rank with MPI_ANY_SOURCE. */
  int out = (child ? 100 : 0) + rank, in = -1;
  MPI_Sendrecv(&out, 1, MPI_INT, rank, 3, &in, 1, MPI_INT, rank, 3, inter, MPI_STATUS_IGNORE);
  say("%s %d: got %d from the other group's rank %d", who, rank, in, rank);
  int total = 0;
  MPI_Request sends[2];
  for (int r = 0; r < remote_size; ++r) MPI_Isend(&out, 1, MPI_INT, r, 4, inter, &sends[r]);
  for (int r = 0; r < remote_size; ++r) {
    MPI_Status status;
    MPI_Recv(&in, 1, MPI_INT, MPI_ANY_SOURCE, 4, inter, &status);
    total += in;
  }
  MPI_Waitall(remote_size, sends, MPI_STATUSES_IGNORE);
  say("%s %d: sum from the other group with MPI_ANY_SOURCE = %d", who, rank, total);

  /* A collective over the intercommunicator: everyone gets the other group's sum. */
  int sum = 0;
  MPI_Allreduce(&out, &sum, 1, MPI_INT, MPI_SUM, inter);
  say("%s %d: Allreduce over the intercommunicator = %d", who, rank, sum);

  /* Merged: parents first. A message with one tag from every rank to every rank, an Allreduce. */
  MPI_Intercomm_merge(inter, child, &merged);
  int mrank, msize;
  MPI_Comm_rank(merged, &mrank);
  MPI_Comm_size(merged, &msize);
  MPI_Comm_dup(merged, &merged_dup);
  int values[8], mine[8], seen = 0;
  MPI_Request requests[16];
  for (int r = 0; r < msize; ++r) MPI_Irecv(&values[r], 1, MPI_INT, r, 5, merged_dup, &requests[r]);
  for (int r = 0; r < msize; ++r) {
    mine[r] = mrank * 10 + r;
    MPI_Isend(&mine[r], 1, MPI_INT, r, 5, merged_dup, &requests[msize + r]);
  }
  MPI_Waitall(2 * msize, requests, MPI_STATUSES_IGNORE);
  for (int r = 0; r < msize; ++r) seen += values[r] == r * 10 + mrank;
  MPI_Allreduce(&mrank, &sum, 1, MPI_INT, MPI_SUM, merged);
  say("%s %d: merged rank %d of %d, %d of %d messages right on its dup, Allreduce of ranks = %d", who, rank, mrank,
      msize, seen, msize, sum);

  /* Every process's lines to merged rank 0, printed in merged rank order. */
  char all[8 * kMaxLines * kLine];
  char mine_text[kMaxLines * kLine] = "";
  for (int i = 0; i < nlines; ++i) {
    strcat(mine_text, lines[i]);
    strcat(mine_text, "\n");
  }
  MPI_Gather(mine_text, sizeof mine_text, MPI_CHAR, all, sizeof mine_text, MPI_CHAR, 0, merged);
  if (mrank == 0) {
    for (int r = 0; r < msize; ++r) fputs(all + (size_t)r * sizeof mine_text, stdout);
    fflush(stdout);
  }
  MPI_Comm_free(&merged_dup);
  MPI_Comm_free(&merged);
  MPI_Comm_disconnect(&inter);
  MPI_Finalize();
  return 0;
}
