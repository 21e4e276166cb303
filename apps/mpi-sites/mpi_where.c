// lp-mpi-where: a plain MPI program (mpi.h only) that says where each rank runs. Tests of mpi-sites
// and of `longpipe mpirun` compare its lines with where the ranks should be.
//
// Every rank passes a token once around the ring (rank 0 -> 1 -> ... -> 0, each adding one, so a
// message crosses between the sites), then prints, in rank order:
//   rank R size N host H netns I ring T [NAME=VALUE|NAME unset]...
// where H is the host name (each site has its own), I the inode of its network namespace
// (/proc/self/ns/net: equal to that of /var/run/netns/<site's namespace>), T the token the rank saw
// (rank 0: N after the full ring, rank r: r), and one word per environment variable named in ARGS.
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

enum { HOST_NAME_BYTES = 256, LINE_BYTES = 4096, RING_TAG = 17 };

static void check(int mpi_error, const char* what) {
  if (mpi_error != MPI_SUCCESS) {
    fprintf(stderr, "lp-mpi-where: %s failed (error %d)\n", what, mpi_error);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

// The token that went around the ring: rank 0 sends 0 and gets size back, rank r receives r.
static int pass_ring_token(int rank, int size) {
  int token = 0;
  if (size == 1) return 1;
  if (rank == 0) {
    check(MPI_Send(&token, 1, MPI_INT, 1, RING_TAG, MPI_COMM_WORLD), "MPI_Send");
    check(MPI_Recv(&token, 1, MPI_INT, size - 1, RING_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
    return token + 1;
  }
  check(MPI_Recv(&token, 1, MPI_INT, rank - 1, RING_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
  ++token;
  check(MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, RING_TAG, MPI_COMM_WORLD), "MPI_Send");
  return token;
}

int main(int argc, char** argv) {
  check(MPI_Init(&argc, &argv), "MPI_Init");
  int rank = 0, size = 0;
  check(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &size), "MPI_Comm_size");

  char host[HOST_NAME_BYTES] = "";
  if (gethostname(host, sizeof host) != 0) perror("lp-mpi-where: gethostname");
  struct stat netns;
  if (stat("/proc/self/ns/net", &netns) != 0) {
    perror("lp-mpi-where: /proc/self/ns/net");
    netns.st_ino = 0;
  }
  int ring = pass_ring_token(rank, size);

  char line[LINE_BYTES] = "";
  int used = snprintf(line, sizeof line, "rank %d size %d host %s netns %lu ring %d", rank, size, host,
                      (unsigned long)netns.st_ino, ring);
  for (int i = 1; i < argc && used < (int)sizeof line; ++i) {
    const char* value = getenv(argv[i]);
    used += value ? snprintf(line + used, sizeof line - used, " %s=%s", argv[i], value)
                  : snprintf(line + used, sizeof line - used, " %s unset", argv[i]);
  }

  // Lines in rank order: rank 0 gathers and prints them all.
  char* lines = rank == 0 ? malloc((size_t)size * LINE_BYTES) : NULL;
  check(MPI_Gather(line, LINE_BYTES, MPI_CHAR, lines, LINE_BYTES, MPI_CHAR, 0, MPI_COMM_WORLD), "MPI_Gather");
  if (rank == 0) {
    for (int r = 0; r < size; ++r) printf("%s\n", lines + (size_t)r * LINE_BYTES);
    fflush(stdout);
    free(lines);
  }
  check(MPI_Finalize(), "MPI_Finalize");
  return 0;
}
