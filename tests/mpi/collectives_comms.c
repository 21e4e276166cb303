/* collectives_comms.c: every collective on every kind of communicator. Plain MPI (mpi.h only): run
 * with and without LD_PRELOAD=liblongpipe.so; every result is checked here against values
 * computed locally, so a wrong one fails naming the collective, the communicator and the rank.
 *
 * Usage: collectives_comms SITES DIR MODE
 *   SITES  the site of each world rank, as LONGPIPE_MPI_SITES (what the statistics should show)
 *   DIR    each rank writes DIR/expected-paths.RANK: per collective LongPipe counts, how many of
 *          its calls should take the site path and how many Open MPI's (run_collectives.sh
 *          compares them with the statistics)
 *   MODE   full   MPI_COMM_WORLD, a dup, a split in two colours with keys that interleave the
 *                 sites, a split with reversed keys (one of its colours inside one site), a 2-D
 *                 periodic Cartesian communicator with reorder, a graph, a distributed graph
 *                 (adjacent), an intercommunicator (Barrier, Bcast both ways, Allreduce,
 *                 Allgather, Alltoall) and its merge: the suite blocking and nonblocking, every
 *                 root, neighbourhood collectives on the three topologies
 *          quick  the same communicators, rooted collectives from three roots, the nonblocking
 *                 suite on MPI_COMM_WORLD, the interleaving split and the Cartesian one only
 *          link   for runs across the link, where every call costs round trips: one call of most
 *                 collectives (compact_suite) and several nonblocking ones at once on
 *                 MPI_COMM_WORLD, the interleaving split and the Cartesian communicator, MPI_Allreduce
 *                 and MPI_Ibcast on the others, the intercommunicator's blocking collectives,
 *                 neighbourhood collectives on the Cartesian communicator
 *          idup   communicators from MPI_Comm_idup (of MPI_COMM_WORLD and of the interleaving
 *                 split): the suite blocking and nonblocking, rooted collectives from three roots
 * Every case has an alarm of kCaseSeconds: a rank stuck in one prints "HANG: ..." and exits 3.
 * Rank 0 prints one line per communicator; exit status 0 only if every check passed. */
#include "collectives_comms.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int g_world_rank;
int g_nonblocking;
int g_all_roots;
int g_compact;
MPI_Datatype g_matrix_type;
MPI_Op g_matrix_product;

static int world_site[kMaxRanks];
static int expected[kCounted][2]; /* [collective][0: site, 1: native] */
static char current_case[256];
static char hang_message[320];
static const char* const counted_names[kCounted] = {
    "MPI_Barrier", "MPI_Bcast", "MPI_Reduce", "MPI_Allreduce", "MPI_Gather", "MPI_Gatherv", "MPI_Scatter",
    "MPI_Scatterv", "MPI_Allgather", "MPI_Allgatherv", "MPI_Alltoall", "MPI_Alltoallv", "MPI_Alltoallw",
    "MPI_Reduce_scatter", "MPI_Reduce_scatter_block", "MPI_Scan", "MPI_Exscan", "MPI_Ibarrier", "MPI_Ibcast",
    "MPI_Iallreduce", "MPI_Ireduce", "MPI_Igather", "MPI_Iscatter", "MPI_Iscatterv", "MPI_Iallgather",
    "MPI_Iallgatherv", "MPI_Ialltoall", "MPI_Ireduce_scatter", "MPI_Ireduce_scatter_block", "MPI_Igatherv",
    "MPI_Ialltoallv", "MPI_Ialltoallw", "MPI_Iscan", "MPI_Iexscan"};

static void on_alarm(int signal_number) {
  (void)signal_number;
  ssize_t ignored = write(2, hang_message, strlen(hang_message));
  (void)ignored;
  _exit(3);
}

void begin_case(const Comm* c, const char* collective) {
  snprintf(current_case, sizeof current_case, "%s on %s (rank %d of %d, world rank %d)", collective, c->name,
           c->rank, c->size, g_world_rank);
  snprintf(hang_message, sizeof hang_message, "HANG: %s did not finish within %d s\n", current_case, kCaseSeconds);
  alarm(kCaseSeconds);
}

void fail(const char* format, ...) {
  char text[512];
  va_list args;
  va_start(args, format);
  vsnprintf(text, sizeof text, format, args);
  va_end(args);
  fprintf(stderr, "FAIL: %s: %s\n", current_case, text);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  _exit(1);
}

void fail_rc(int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  fail("returned %d (%s)", rc, text);
}

void expect_int(const char* what, int index, int got, int want) {
  if (got != want) fail("%s: element %d is %d, expected %d", what, index, got, want);
}

void expect_unsigned(const char* what, int index, unsigned got, unsigned want) {
  if (got != want) fail("%s: element %d is %u, expected %u", what, index, got, want);
}

void count_call(const Comm* c, int collective, int order_sensitive) {
  if (collective == kNotCounted) return;
  const int site = !c->inter && c->spans && (!order_sensitive || c->blocked);
  ++expected[collective][site ? 0 : 1];
}

void matrix_of(int r, int k, unsigned out[4]) {
  out[0] = (unsigned)(r + 2 + k);
  out[1] = 1;
  out[2] = (unsigned)(k + 1);
  out[3] = (unsigned)(r % 3);
}

void matrix_multiply(const unsigned x[4], const unsigned y[4], unsigned out[4]) {
  out[0] = x[0] * y[0] + x[1] * y[2];
  out[1] = x[0] * y[1] + x[1] * y[3];
  out[2] = x[2] * y[0] + x[3] * y[2];
  out[3] = x[2] * y[1] + x[3] * y[3];
}

/* inout = in * inout: `in` holds the lower ranks' product (MPI's order for user operations). */
static void matrix_product(void* in, void* inout, int* length, MPI_Datatype* type) {
  (void)type;
  unsigned* x = in;
  unsigned* y = inout;
  for (int k = 0; k < *length; ++k) {
    unsigned t[4];
    matrix_multiply(x + 4 * k, y + 4 * k, t);
    memcpy(y + 4 * k, t, sizeof t);
  }
}

/* What the sites of `comm`'s members make of it (as libshim/mpi/site_layout.cpp decides). */
static Comm describe(MPI_Comm comm, const char* name) {
  Comm c = {comm, name, 0, 0, 0, 0, 1};
  MPI_Comm_test_inter(comm, &c.inter);
  MPI_Comm_rank(comm, &c.rank);
  MPI_Comm_size(comm, &c.size);
  MPI_Group group, world_group;
  MPI_Comm_group(comm, &group);
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  int ranks[kMaxRanks], world[kMaxRanks];
  for (int r = 0; r < c.size; ++r) ranks[r] = r;
  MPI_Group_translate_ranks(group, c.size, ranks, world_group, world);
  MPI_Group_free(&group);
  MPI_Group_free(&world_group);
  int seen[kMaxRanks] = {0};
  for (int r = 0; r < c.size; ++r) {
    const int site = world_site[world[r]];
    if (site != world_site[world[0]]) c.spans = 1;
    if (r > 0 && site != world_site[world[r - 1]] && seen[site]) c.blocked = 0;
    seen[site] = 1;
  }
  return c;
}

static void say_comm(const Comm* c, const char* what) {
  if (c->rank == 0 && (!c->inter || g_world_rank == 0)) {
    printf("%s: %s size %d%s%s%s\n", c->name, what, c->size, c->inter ? " inter" : "",
           c->spans ? " spanning" : " one-site", c->spans && !c->blocked ? " interleaved" : "");
    fflush(stdout);
  }
}

static void run_intra(MPI_Comm comm, const char* name, int nonblocking_too) {
  if (comm == MPI_COMM_NULL) return;
  const Comm c = describe(comm, name);
  g_nonblocking = 0;
  if (g_compact && !nonblocking_too) { /* across the link: that the site path carries it */
    int a[3], b[3];
    for (int i = 0; i < 3; ++i) a[i] = val(c.rank, i);
    RUN(&c, Allreduce, Iallreduce, 0, a, b, 3, MPI_INT, MPI_SUM, comm);
    for (int i = 0; i < 3; ++i) expect_int("allreduce sum", i, b[i], 1000 * c.size * (c.size - 1) / 2 + c.size * i);
    g_nonblocking = 1;
    if (c.rank == c.size - 1) for (int i = 0; i < 3; ++i) b[i] = val(c.rank, i) + 5;
    RUN(&c, Bcast, Ibcast, 0, b, 3, MPI_INT, c.size - 1, comm);
    for (int i = 0; i < 3; ++i) expect_int("ibcast", i, b[i], val(c.size - 1, i) + 5);
    g_nonblocking = 0;
  } else if (g_compact) {
    compact_suite(&c);
    overlap_suite(&c);
  } else {
    intra_suite(&c);
    if (nonblocking_too) {
      g_nonblocking = 1;
      intra_suite(&c);
      overlap_suite(&c);
      g_nonblocking = 0;
    }
  }
  say_comm(&c, g_compact && !nonblocking_too ? "allreduce and ibcast ok" : nonblocking_too ? "blocking and nonblocking ok" : "blocking ok");
}

/* Neighbourhood collectives on a topology: block (s -> d) holds s * 1000 + d * 10 + i. */
static void neighbours(const Comm* c, int* in, int* ins, int* out, int* outs) {
  int topology = MPI_UNDEFINED;
  MPI_Topo_test(c->comm, &topology);
  if (topology == MPI_CART) {
    int dims = 0;
    MPI_Cartdim_get(c->comm, &dims);
    for (int d = 0; d < dims; ++d) {
      MPI_Cart_shift(c->comm, d, 1, &in[2 * d], &in[2 * d + 1]);
      out[2 * d] = in[2 * d];
      out[2 * d + 1] = in[2 * d + 1];
    }
    *ins = *outs = 2 * dims;
  } else if (topology == MPI_GRAPH) {
    MPI_Graph_neighbors_count(c->comm, c->rank, ins);
    MPI_Graph_neighbors(c->comm, c->rank, *ins, in);
    memcpy(out, in, sizeof(int) * (size_t)*ins);
    *outs = *ins;
  } else {
    int weighted = 0;
    MPI_Dist_graph_neighbors_count(c->comm, ins, outs, &weighted);
    int in_weights[2 * kMaxRanks], out_weights[2 * kMaxRanks]; /* what comes back is ignored */
    MPI_Dist_graph_neighbors(c->comm, *ins, in, in_weights, *outs, out, out_weights);
  }
}

static void neighbourhood(MPI_Comm comm, const char* name) {
  const Comm c = describe(comm, name);
  const int me = c.rank;
  int in[2 * kMaxRanks], out[2 * kMaxRanks], ins = 0, outs = 0;
  neighbours(&c, in, &ins, out, &outs);
  int a[256], b[256], sc[kMaxRanks], sd[kMaxRanks], rc[kMaxRanks], rd[kMaxRanks];
  MPI_Aint sdb[kMaxRanks], rdb[kMaxRanks];
  MPI_Datatype types[kMaxRanks];
  for (int nb = 0; nb < 2; ++nb) {
    g_nonblocking = nb;
    for (int i = 0; i < 3; ++i) a[i] = val(me, i);
    for (int j = 0; j < 2 * ins; ++j) b[j] = -1;
    RUN(&c, Neighbor_allgather, Ineighbor_allgather, 0, a, 2, MPI_INT, b, 2, MPI_INT, comm);
    for (int j = 0; j < 2 * ins; ++j) expect_int("neighbor_allgather", j, b[j], in[j / 2] < 0 ? -1 : val(in[j / 2], j % 2));
    int at = 0;
    for (int k = ins - 1; k >= 0; --k) { /* reversed, with gaps */
      rc[k] = in[k] < 0 ? 0 : in[k] % 3 + 1;
      rd[k] = at;
      rdb[k] = at * (MPI_Aint)sizeof(int);
      types[k] = MPI_INT;
      at += rc[k] + 1;
    }
    for (int j = 0; j < at; ++j) b[j] = -1;
    RUN(&c, Neighbor_allgatherv, Ineighbor_allgatherv, 0, a, me % 3 + 1, MPI_INT, b, rc, rd, MPI_INT, comm);
    for (int k = 0; k < ins; ++k) for (int i = 0; i < rc[k]; ++i) expect_int("neighbor_allgatherv", rd[k] + i, b[rd[k] + i], val(in[k], i));
    for (int k = 0; k < outs; ++k) for (int i = 0; i < 2; ++i) a[2 * k + i] = val(me, (out[k] < 0 ? 0 : out[k]) * 10 + i);
    for (int j = 0; j < 2 * ins; ++j) b[j] = -1;
    RUN(&c, Neighbor_alltoall, Ineighbor_alltoall, 0, a, 2, MPI_INT, b, 2, MPI_INT, comm);
    for (int j = 0; j < 2 * ins; ++j) expect_int("neighbor_alltoall", j, b[j], in[j / 2] < 0 ? -1 : val(in[j / 2], me * 10 + j % 2));
    int sat = 0;
    for (int k = 0; k < outs; ++k) {
      sc[k] = out[k] < 0 ? 0 : (me + out[k]) % 3 + 1;
      sd[k] = sat;
      sdb[k] = sat * (MPI_Aint)sizeof(int);
      for (int i = 0; i < sc[k]; ++i) a[sat + i] = val(me, out[k] * 10 + i);
      sat += sc[k];
    }
    at = 0;
    for (int k = ins - 1; k >= 0; --k) {
      rc[k] = in[k] < 0 ? 0 : (in[k] + me) % 3 + 1;
      rd[k] = at;
      rdb[k] = at * (MPI_Aint)sizeof(int);
      at += rc[k] + 1;
    }
    for (int w = 0; w < 2; ++w) {
      for (int j = 0; j < at; ++j) b[j] = -1;
      if (w == 0) RUN(&c, Neighbor_alltoallv, Ineighbor_alltoallv, 0, a, sc, sd, MPI_INT, b, rc, rd, MPI_INT, comm);
      else RUN(&c, Neighbor_alltoallw, Ineighbor_alltoallw, 0, a, sc, sdb, types, b, rc, rdb, types, comm);
      for (int k = 0; k < ins; ++k) for (int i = 0; i < rc[k]; ++i) expect_int(w ? "neighbor_alltoallw" : "neighbor_alltoallv", rd[k] + i, b[rd[k] + i], val(in[k], me * 10 + i));
    }
  }
  g_nonblocking = 0;
  say_comm(&c, "neighbourhood collectives ok");
}

/* Intercommunicator collectives (Open MPI's path): each group's values carry 100 x its colour. */
static void inter_suite(const Comm* c, int colour) {
  const int me = c->rank, other = 1 - colour;
  int local_size = 0, rn = 0, a[256], b[256];
  MPI_Comm_size(c->comm, &local_size);
  MPI_Comm_remote_size(c->comm, &rn);
  RUN(c, Barrier, Ibarrier, 0, c->comm);
  /* Bcast from colour 0's rank 0 to colour 1, then from colour 1's last rank to colour 0. */
  for (int from = 0; from < 2; ++from) {
    const int root_rank = from == 0 ? 0 : (colour == 1 ? local_size - 1 : rn - 1);
    for (int i = 0; i < 4; ++i) a[i] = colour == from && me == root_rank ? val(root_rank, i) + 500 : -1;
    const int root = colour == from ? (me == root_rank ? MPI_ROOT : MPI_PROC_NULL) : root_rank;
    RUN(c, Bcast, Ibcast, 0, a, 4, MPI_INT, root, c->comm);
    if (colour != from) for (int i = 0; i < 4; ++i) expect_int("inter bcast", i, a[i], val(root_rank, i) + 500);
  }
  for (int i = 0; i < 3; ++i) a[i] = val(me, i) + 100 * colour;
  RUN(c, Allreduce, Iallreduce, 0, a, b, 3, MPI_INT, MPI_SUM, c->comm);
  for (int i = 0; i < 3; ++i) expect_int("inter allreduce", i, b[i], 1000 * rn * (rn - 1) / 2 + rn * i + rn * 100 * other);
  for (int i = 0; i < 2; ++i) a[i] = val(me, i) + 100 * colour;
  RUN(c, Allgather, Iallgather, 0, a, 2, MPI_INT, b, 2, MPI_INT, c->comm);
  for (int j = 0; j < 2 * rn; ++j) expect_int("inter allgather", j, b[j], val(j / 2, j % 2) + 100 * other);
  for (int d = 0; d < rn; ++d) for (int i = 0; i < 2; ++i) a[2 * d + i] = val(me, d * 10 + i) + 100 * colour;
  RUN(c, Alltoall, Ialltoall, 0, a, 2, MPI_INT, b, 2, MPI_INT, c->comm);
  for (int j = 0; j < 2 * rn; ++j) expect_int("inter alltoall", j, b[j], val(j / 2, me * 10 + j % 2) + 100 * other);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* mode = argc > 3 ? argv[3] : "";
  const int full = strcmp(mode, "full") == 0, quick = strcmp(mode, "quick") == 0, idup = strcmp(mode, "idup") == 0;
  g_compact = strcmp(mode, "link") == 0;
  if (argc != 4 || !(full || quick || idup || g_compact) || size > kMaxRanks) {
    if (g_world_rank == 0) fprintf(stderr, "usage: collectives_comms SITES DIR full|quick|link|idup (at most %d ranks)\n", kMaxRanks);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int nsites = 0, sites_given = 0;
  for (char* p = argv[1]; *p && sites_given < kMaxRanks; ++sites_given) {
    world_site[sites_given] = (int)strtol(p, &p, 10);
    if (world_site[sites_given] + 1 > nsites) nsites = world_site[sites_given] + 1;
    if (*p == ',') ++p;
  }
  if (sites_given != size) {
    fprintf(stderr, "collectives_comms: SITES names %d ranks, the job has %d\n", sites_given, size);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  signal(SIGALRM, on_alarm);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN); /* inherited: fail() names the case */
  MPI_Type_contiguous(4, MPI_UNSIGNED, &g_matrix_type);
  MPI_Type_commit(&g_matrix_type);
  MPI_Op_create(matrix_product, 0, &g_matrix_product);
  g_all_roots = full;

  /* Keys that interleave the sites: the k-th rank of each site (in this colour) comes k-th. */
  const int colour = g_world_rank % 2;
  int index_in_site = 0;
  for (int r = 0; r < g_world_rank; ++r) index_in_site += r % 2 == colour && world_site[r] == world_site[g_world_rank];
  MPI_Comm interleaved;
  MPI_Comm_split(MPI_COMM_WORLD, colour, index_in_site * kMaxRanks + world_site[g_world_rank], &interleaved);

  if (idup) {
    MPI_Comm world_copy, interleaved_copy;
    MPI_Request requests[2];
    MPI_Comm_idup(MPI_COMM_WORLD, &world_copy, &requests[0]);
    MPI_Comm_idup(interleaved, &interleaved_copy, &requests[1]);
    if (MPI_Waitall(2, requests, MPI_STATUSES_IGNORE) != MPI_SUCCESS) fail("MPI_Comm_idup failed");
    run_intra(world_copy, "idup-world", 1);
    run_intra(interleaved_copy, colour ? "idup-split-interleaved-odd" : "idup-split-interleaved-even", 1);
    MPI_Comm_free(&world_copy);
    MPI_Comm_free(&interleaved_copy);
  } else {
    run_intra(MPI_COMM_WORLD, "world", 1);
    MPI_Comm dup, reversed, cart, graph, dist, local, inter, merged;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    run_intra(dup, "dup", full);
    run_intra(interleaved, colour ? "split-interleaved-odd" : "split-interleaved-even", 1);
    const int reversed_colour = g_world_rank < 3 * size / 4 ? 0 : 1;
    MPI_Comm_split(MPI_COMM_WORLD, reversed_colour, size - g_world_rank, &reversed);
    run_intra(reversed, reversed_colour ? "split-reversed-last-quarter" : "split-reversed-first", full);
    int dims[2] = {0, 0}, periods[2] = {1, 1};
    MPI_Dims_create(size, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &cart);
    run_intra(cart, "cart", 1);
    neighbourhood(cart, "cart");
    int index[kMaxRanks], edges[3 * kMaxRanks];
    for (int r = 0; r < size; ++r) {
      edges[3 * r] = (r + size - 1) % size;
      edges[3 * r + 1] = (r + 1) % size;
      edges[3 * r + 2] = (r + size / 2) % size;
      index[r] = 3 * (r + 1);
    }
    MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 1, &graph);
    run_intra(graph, "graph", full);
    if (!g_compact) neighbourhood(graph, "graph");
    int me = g_world_rank;
    const int sources[2] = {(me + size - 1) % size, (me + size - 3) % size};
    const int destinations[2] = {(me + 1) % size, (me + 3) % size};
    const int weights[2] = {1, 1};
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, sources, weights, 2, destinations, weights, MPI_INFO_NULL, 1,
                                   &dist);
    run_intra(dist, "dist-graph-adjacent", full);
    if (!g_compact) neighbourhood(dist, "dist-graph-adjacent");
    MPI_Comm_split(MPI_COMM_WORLD, colour, g_world_rank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, colour == 0 ? 1 : 0, 77, &inter);
    const Comm ic = describe(inter, "intercomm");
    for (g_nonblocking = 0; g_nonblocking < 2 - g_compact; ++g_nonblocking) inter_suite(&ic, colour);
    g_nonblocking = 0;
    say_comm(&ic, "blocking and nonblocking ok");
    MPI_Intercomm_merge(inter, colour, &merged);
    run_intra(merged, "intercomm-merged", full);
    MPI_Comm* all[] = {&dup, &reversed, &cart, &graph, &dist, &local, &inter, &merged};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; ++k) MPI_Comm_free(all[k]);
  }
  MPI_Comm_free(&interleaved);
  alarm(0);

  char path[1024];
  snprintf(path, sizeof path, "%s/expected-paths.%d", argv[2], g_world_rank);
  FILE* f = fopen(path, "w");
  if (!f) {
    perror(path);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (int k = 0; k < kCounted; ++k) fprintf(f, "%s %d %d\n", counted_names[k], expected[k][0], expected[k][1]);
  fclose(f);
  MPI_Type_free(&g_matrix_type);
  MPI_Op_free(&g_matrix_product);
  if (g_world_rank == 0) printf("all checks passed\n");
  MPI_Finalize();
  return 0;
}
