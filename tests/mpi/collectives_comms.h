/* collectives_comms.h: shared by collectives_comms.c (communicators, intercommunicator and
 * neighbourhood collectives, main) and collectives_comms_suite.c (every collective on one
 * intra-communicator). Plain MPI (mpi.h only). */
#pragma once

#include <mpi.h>

enum { kMaxRanks = 32, kCaseSeconds = 60 };

/* The collectives LongPipe's statistics count (libshim/mpi/collective_statistics.h), in its order;
 * kNotCounted for the ones it leaves to Open MPI without counting. */
enum {
  K_Barrier, K_Bcast, K_Reduce, K_Allreduce, K_Gather, K_Gatherv, K_Scatter, K_Scatterv, K_Allgather,
  K_Allgatherv, K_Alltoall, K_Alltoallv, K_Alltoallw, K_Reduce_scatter, K_Reduce_scatter_block, K_Scan, K_Exscan,
  K_Ibarrier, K_Ibcast, K_Iallreduce, K_Ireduce, K_Igather, K_Iscatter, K_Iscatterv, K_Iallgather, K_Iallgatherv,
  K_Ialltoall, K_Ireduce_scatter, K_Ireduce_scatter_block, K_Igatherv, K_Ialltoallv, K_Ialltoallw, K_Iscan,
  K_Iexscan, kCounted, kNotCounted = -1
};
#define K_Neighbor_allgather kNotCounted
#define K_Neighbor_allgatherv kNotCounted
#define K_Neighbor_alltoall kNotCounted
#define K_Neighbor_alltoallv kNotCounted
#define K_Neighbor_alltoallw kNotCounted
#define K_Ineighbor_allgather kNotCounted
#define K_Ineighbor_allgatherv kNotCounted
#define K_Ineighbor_alltoall kNotCounted
#define K_Ineighbor_alltoallv kNotCounted
#define K_Ineighbor_alltoallw kNotCounted

/* A communicator under test: its members' sites decide which path LongPipe should take. */
typedef struct {
  MPI_Comm comm;
  const char* name;
  int rank, size;
  int inter;   /* an intercommunicator: Open MPI's path */
  int spans;   /* its ranks are at more than one site */
  int blocked; /* each site's ranks are consecutive (rank order is site order) */
} Comm;

extern int g_world_rank;
extern int g_nonblocking; /* RUN takes the nonblocking form (and waits for it) */
extern int g_all_roots;   /* rooted collectives from every root, else from 0, size/2 and size-1 */
extern int g_compact;     /* compact_suite in place of intra_suite */
extern MPI_Datatype g_matrix_type; /* 2x2 unsigned matrix */
extern MPI_Op g_matrix_product;    /* non-commutative */

/* Starts a case: names it for failures and the alarm (kCaseSeconds, then the rank exits naming it). */
void begin_case(const Comm* c, const char* collective);
/* Fails the job naming the case, communicator and rank. */
void fail(const char* format, ...) __attribute__((format(printf, 1, 2), noreturn));
void expect_int(const char* what, int index, int got, int want);
void expect_unsigned(const char* what, int index, unsigned got, unsigned want);
/* Counts one call of `collective` on `c` as LongPipe should take it: site path on a spanning
 * intra-communicator, unless `order_sensitive` (non-commutative operation, Scan, Exscan) and the
 * sites are not consecutive. */
void count_call(const Comm* c, int collective, int order_sensitive);
void fail_rc(int rc);

/* M(r, k): rank r's k-th matrix for the non-commutative reductions; product = x * y. */
void matrix_of(int r, int k, unsigned out[4]);
void matrix_multiply(const unsigned x[4], const unsigned y[4], unsigned out[4]);

/* Every collective of the intra-communicator suite on `c` (collectives_comms_suite.c). */
void intra_suite(const Comm* c);
/* MPI_IN_PLACE in the v-collectives, zero counts, a non-commutative Reduce_scatter_block
 * (collectives_comms_edges.c). */
void edge_suite(const Comm* c);
/* One call of most collectives on `c` (runs across the emulated link). */
void compact_suite(const Comm* c);
/* Several nonblocking collectives outstanding at once on `c`, completed by one MPI_Waitall. */
void overlap_suite(const Comm* c);

/* RUN(c, Blocking, Nonblocking, order_sensitive, args...): MPI_Blocking(args) or, with
 * g_nonblocking, MPI_Nonblocking(args, &request) + MPI_Wait; counted for the statistics check. */
#define RUN(c, B, I, ORD, ...)                                                         \
  do {                                                                               \
    begin_case((c), g_nonblocking ? "MPI_" #I : "MPI_" #B);                          \
    int rc_;                                                                         \
    if (g_nonblocking) {                                                             \
      MPI_Request rq_ = MPI_REQUEST_NULL;                                            \
      rc_ = MPI_##I(__VA_ARGS__, &rq_);                                              \
      if (rc_ == MPI_SUCCESS) rc_ = MPI_Wait(&rq_, MPI_STATUS_IGNORE);               \
    } else {                                                                         \
      rc_ = MPI_##B(__VA_ARGS__);                                                    \
    }                                                                                \
    if (rc_ != MPI_SUCCESS) fail_rc(rc_);                                            \
    count_call((c), g_nonblocking ? K_##I : K_##B, (ORD));                           \
  } while (0)

static inline int val(int r, int i) { return r * 1000 + i; }
