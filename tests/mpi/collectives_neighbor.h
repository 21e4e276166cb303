/* Shared by collectives_neighbor.c (main, transcript, checks) and collectives_neighbor_cases.c
 * (the topologies and the calls on them). */
#ifndef LP_TESTS_COLLECTIVES_NEIGHBOR_H
#define LP_TESTS_COLLECTIVES_NEIGHBOR_H

#include <mpi.h>

enum { kMaxRanks = 16, kCaseSeconds = 60 };
/* The calls, in the order of the statistics; the nonblocking form of call c is c + kNonblocking. */
enum { kAllgather, kAllgatherv, kAlltoall, kAlltoallv, kAlltoallw, kNonblocking, kCalls = 2 * kNonblocking };

extern int g_world_rank, g_world_size;
extern int g_world_site[kMaxRanks];

void say(const char* format, ...) __attribute__((format(printf, 1, 2)));
void begin_case(const char* what);
void fail(const char* format, ...) __attribute__((format(printf, 1, 2), noreturn));
void count_call(int call, int site_path);
int spans_sites(MPI_Comm comm);
void run_topologies(void);

#endif
