/* collectives_exchange.h: what the two files of the exchange test program share (see the top of
 * collectives_exchange.c): the transcript, the checks and the expected paths. */
#pragma once

#include <mpi.h>

enum { kMaxRanks = 64 };
enum { kAlltoall, kAlltoallv, kAlltoallw, kReduceScatter, kReduceScatterBlock, kScan, kExscan, kCollectives };

struct placement {
  int spans;   /* ranks at more than one site */
  int blocked; /* each site's ranks consecutive in the communicator */
};

/* A struct with padding between its members (pair_type describes it). */
struct pair {
  int key;
  double value;
};
extern MPI_Datatype pair_type;
extern int failures;

void say(const char* format, ...);
void say_ints(const int* values, int n);
unsigned long long bits(double value);
void check(int ok, const char* name, const char* what, int rank);
/* One call of `collective` that LongPipe should take across sites (site_path) or leave to Open MPI. */
void expect(int collective, int site_path);

/* collectives_alltoall.c */
void alltoall_tests(const char* name, MPI_Comm comm, int rank, int size, struct placement p);
void alltoallw_tests(const char* name, MPI_Comm comm, int rank, int size, struct placement p);
