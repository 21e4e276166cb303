/* collectives_neighbor_cases.c: the topologies of collectives_neighbor.c and the five calls on each,
 * blocking, then nonblocking all outstanding at once and waited for in reverse order. Element e of
 * the block a process of rank r sends to its neighbour s is value(r, s, e); MPI_Neighbor_allgather
 * sends value(r, 90, e) to all. Every receive buffer starts at -1: the blocks of MPI_PROC_NULL
 * neighbours and the holes of the receive types must stay so. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "collectives_neighbor.h"

enum { kMaxSlots = 8, kBlockInts = 4, kBufferInts = kMaxSlots * kBlockInts };
enum Kind { kCartesian, kGraph, kDistGraph };

typedef struct {
  MPI_Comm comm;
  const char* name;
  enum Kind kind;
  int rank, size;
  int in, out;
  int sources[kMaxSlots], destinations[kMaxSlots];
  int blocking_only; /* see cartesian() */
} Topology;

static int value(int rank, int slot, int element) { return rank * 1000 + slot * 10 + element + 1; }

/* The distributed graph's edges, by formula (so that any process knows any other's): rank r sends
 * to r+1 twice, to r+2 and to itself, and lists its sources in an order of its own. */
static int dist_destinations(int r, int n, int* out) {
  out[0] = (r + 1) % n, out[1] = (r + 1) % n, out[2] = (r + 2) % n, out[3] = r;
  return 4;
}
static int dist_sources(int r, int n, int* in) {
  in[0] = r, in[1] = (r + n - 2) % n, in[2] = (r + n - 1) % n, in[3] = (r + n - 1) % n;
  return 4;
}
/* The graph's: previous and next on a ring, and a partner (r xor 1) twice, if there is one. */
static int graph_neighbours(int r, int n, int* out) {
  int k = 0;
  out[k++] = (r + n - 1) % n;
  out[k++] = (r + 1) % n;
  if ((r ^ 1) < n) out[k++] = r ^ 1, out[k++] = r ^ 1;
  return k;
}

/* Which send block of its source fills receive block k: Cartesian, the opposite side of the same
 * dimension; graphs, the n-th edge from the source to this process fills the n-th block from it. */
static int partner_slot(const Topology* t, int k) {
  const int source = t->sources[k];
  if (t->kind == kCartesian) return k ^ 1;
  int nth = 0;
  for (int j = 0; j < k; ++j) nth += t->sources[j] == source;
  int theirs[kMaxSlots];
  const int count = t->kind == kGraph ? graph_neighbours(source, t->size, theirs)
                                      : dist_destinations(source, t->size, theirs);
  for (int s = 0; s < count; ++s) {
    if (theirs[s] == t->rank && nth-- == 0) return s;
  }
  fail("%s: no edge from %d pairs with receive block %d", t->name, source, k);
}

static void expect(const Topology* t, const char* call, const int* buffer, int at, int want) {
  if (buffer[at] != want) fail("%s %s: element %d is %d, expected %d", t->name, call, at, buffer[at], want);
}

/* The buffers of one call of each kind. */
typedef struct {
  int send[kBufferInts], receive[kBufferInts];
  int send_counts[kMaxSlots], send_displacements[kMaxSlots], receive_counts[kMaxSlots], receive_displacements[kMaxSlots];
  MPI_Aint send_bytes[kMaxSlots], receive_bytes[kMaxSlots];
  MPI_Datatype send_types[kMaxSlots], receive_types[kMaxSlots];
} Buffers; /* (a nonblocking call's arrays too must stay until it completes) */

static MPI_Datatype g_holey; /* two ints with a hole between, extent 4 ints */
static MPI_Datatype g_pair;  /* MPI_Type_contiguous(2, MPI_INT) */

static void prepare(const Topology* t, int call, Buffers* b) {
  for (int i = 0; i < kBufferInts; ++i) b->send[i] = b->receive[i] = -1;
  const int me = t->rank;
  for (int s = 0; s < t->out; ++s) {
    for (int e = 0; e < kBlockInts; ++e) b->send[s * kBlockInts + e] = value(me, s, e);
    b->send_counts[s] = 2;
    b->send_displacements[s] = s * kBlockInts;
    /* Alltoallw: even blocks two ints, odd blocks one pair (a contiguous type) */
    b->send_bytes[s] = (MPI_Aint)(s * kBlockInts * sizeof(int));
    b->send_types[s] = MPI_INT;
    if (call % kNonblocking == kAlltoallw && s % 2) b->send_counts[s] = 1, b->send_types[s] = g_pair;
  }
  if (call % kNonblocking <= kAllgatherv) {
    for (int e = 0; e < kBlockInts; ++e) b->send[e] = value(me, 90, e);
  }
  for (int k = 0; k < t->in; ++k) {
    b->receive_counts[k] = call % kNonblocking == kAllgatherv ? (t->sources[k] < 0 ? 1 : t->sources[k] % 3 + 1) : 1;
    b->receive_displacements[k] = call % kNonblocking == kAlltoallv ? k : k * kBlockInts; /* in extents */
    b->receive_bytes[k] = (MPI_Aint)(k * kBlockInts * sizeof(int));
    b->receive_types[k] = k % 2 ? g_holey : MPI_INT; /* Alltoallw: two ints, or one holey pair */
    if (call % kNonblocking == kAlltoallw) b->receive_counts[k] = k % 2 ? 1 : 2;
  }
}

static int start(const Topology* t, int call, Buffers* b, MPI_Request* request) {
  const int nonblocking = call >= kNonblocking;
  const int me = t->rank;
  switch (call % kNonblocking) {
    case kAllgather:
      return nonblocking ? MPI_Ineighbor_allgather(b->send, kBlockInts, MPI_INT, b->receive, kBlockInts, MPI_INT,
                                                   t->comm, request)
                         : MPI_Neighbor_allgather(b->send, kBlockInts, MPI_INT, b->receive, kBlockInts, MPI_INT,
                                                  t->comm);
    case kAllgatherv:
      return nonblocking ? MPI_Ineighbor_allgatherv(b->send, me % 3 + 1, MPI_INT, b->receive, b->receive_counts,
                                                    b->receive_displacements, MPI_INT, t->comm, request)
                         : MPI_Neighbor_allgatherv(b->send, me % 3 + 1, MPI_INT, b->receive, b->receive_counts,
                                                   b->receive_displacements, MPI_INT, t->comm);
    case kAlltoall: /* whole blocks of four ints */
      return nonblocking ? MPI_Ineighbor_alltoall(b->send, kBlockInts, MPI_INT, b->receive, kBlockInts, MPI_INT,
                                                  t->comm, request)
                         : MPI_Neighbor_alltoall(b->send, kBlockInts, MPI_INT, b->receive, kBlockInts, MPI_INT,
                                                 t->comm);
    case kAlltoallv: /* two ints sent, one holey pair received */
      return nonblocking ? MPI_Ineighbor_alltoallv(b->send, b->send_counts, b->send_displacements, MPI_INT, b->receive,
                                                   b->receive_counts, b->receive_displacements, g_holey, t->comm,
                                                   request)
                         : MPI_Neighbor_alltoallv(b->send, b->send_counts, b->send_displacements, MPI_INT, b->receive,
                                                  b->receive_counts, b->receive_displacements, g_holey, t->comm);
    default:
      return nonblocking ? MPI_Ineighbor_alltoallw(b->send, b->send_counts, b->send_bytes, b->send_types, b->receive,
                                                   b->receive_counts, b->receive_bytes, b->receive_types, t->comm,
                                                   request)
                         : MPI_Neighbor_alltoallw(b->send, b->send_counts, b->send_bytes, b->send_types, b->receive,
                                                  b->receive_counts, b->receive_bytes, b->receive_types, t->comm);
  }
}

static const char* const call_names[kNonblocking] = {"allgather", "allgatherv", "alltoall", "alltoallv", "alltoallw"};

/* Every element of the receive buffer as the call's rules say, and the buffer in the transcript. */
static void check(const Topology* t, int call, const Buffers* b) {
  const char* name = call_names[call % kNonblocking];
  for (int k = 0; k < t->in; ++k) {
    const int source = t->sources[k], base = k * kBlockInts;
    int want[kBlockInts] = {-1, -1, -1, -1};
    if (source != MPI_PROC_NULL) {
      const int slot = call % kNonblocking <= kAllgatherv ? 90 : partner_slot(t, k);
      switch (call % kNonblocking) {
        case kAllgatherv:
          for (int e = 0; e < source % 3 + 1; ++e) want[e] = value(source, slot, e);
          break;
        case kAllgather:
        case kAlltoall:
          for (int e = 0; e < kBlockInts; ++e) want[e] = value(source, slot, e);
          break;
        case kAlltoallv: want[0] = value(source, slot, 0), want[2] = value(source, slot, 1); break;
        default: /* even receive blocks two ints, odd ones the holey pair */
          want[0] = value(source, slot, 0);
          want[k % 2 ? 2 : 1] = value(source, slot, 1);
      }
    }
    for (int e = 0; e < kBlockInts; ++e) expect(t, name, b->receive, base + e, want[e]);
  }
  say("%s %s%s:", t->name, call >= kNonblocking ? "i" : "", name);
  for (int i = 0; i < t->in * kBlockInts; ++i) say(" %d", b->receive[i]);
  say("\n");
}

static void exercise(Topology* t) {
  alarm(0);
  if (t->comm == MPI_COMM_NULL) return; /* not in this grid */
  MPI_Comm_rank(t->comm, &t->rank);
  MPI_Comm_size(t->comm, &t->size);
  char what[160];
  const int across = spans_sites(t->comm);
  static Buffers buffers[kCalls];
  for (int call = 0; call < kNonblocking; ++call) {
    snprintf(what, sizeof what, "%s MPI_Neighbor_%s", t->name, call_names[call]);
    begin_case(what);
    prepare(t, call, &buffers[call]);
    if (start(t, call, &buffers[call], NULL) != MPI_SUCCESS) fail("the call failed");
    check(t, call, &buffers[call]);
    count_call(call, across);
  }
  if (t->blocking_only) {
    say("%s: nonblocking forms not compared\n", t->name);
    return;
  }
  snprintf(what, sizeof what, "%s: five MPI_Ineighbor_* outstanding, waited for in reverse order", t->name);
  begin_case(what);
  MPI_Request requests[kNonblocking];
  for (int call = kNonblocking; call < kCalls; ++call) {
    prepare(t, call, &buffers[call]);
    if (start(t, call, &buffers[call], &requests[call - kNonblocking]) != MPI_SUCCESS) fail("a call failed");
    count_call(call, across);
  }
  for (int i = kNonblocking - 1; i >= 0; --i) {
    if (MPI_Wait(&requests[i], MPI_STATUS_IGNORE) != MPI_SUCCESS) fail("MPI_Wait of %s failed", call_names[i]);
  }
  for (int call = kNonblocking; call < kCalls; ++call) check(t, call, &buffers[call]);
  alarm(0);
}

static void cartesian(const char* name, int ndims, const int* dims, const int* periods) {
  Topology t = {.name = name, .kind = kCartesian};
  begin_case(name);
  MPI_Cart_create(MPI_COMM_WORLD, ndims, dims, periods, 0, &t.comm);
  if (t.comm != MPI_COMM_NULL) {
    for (int d = 0; d < ndims; ++d) MPI_Cart_shift(t.comm, d, 1, &t.sources[2 * d], &t.sources[2 * d + 1]);
    t.in = t.out = 2 * ndims;
    memcpy(t.destinations, t.sources, sizeof t.sources);
  }
  /* A periodic dimension of size 1 or 2 has one process on both sides. MPI pairs a send to the -1
   * side with the receiver's +1 block (so does Open MPI 4.1's blocking form, and LongPipe's both
   * forms), but Open MPI 4.1's nonblocking form (coll/libnbc) pairs them in call order instead, so
   * the run without LongPipe cannot be compared there: blocking forms only. */
  for (int d = 0; d < ndims; ++d) t.blocking_only |= periods[d] && dims[d] <= 2;
  exercise(&t);
  if (t.comm != MPI_COMM_NULL) MPI_Comm_free(&t.comm);
}

/* Large blocks on a periodic ring (larger than LongPipe's segments when the run makes them small):
 * MPI_Neighbor_alltoall, then MPI_Ineighbor_alltoall, each block checked element by element. */
enum { kLargeInts = 300000 };
static int large_value(int rank, int slot, int element) { return (rank * 7919 + slot * 104729 + element) % 1000003; }

static void large_blocks(void) {
  static int send[2 * kLargeInts], receive[2 * kLargeInts];
  MPI_Comm ring;
  const int dims[1] = {g_world_size}, periods[1] = {1};
  begin_case("cart-1d-periodic, large blocks");
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
  int left, right;
  MPI_Cart_shift(ring, 0, 1, &left, &right);
  const int from[2] = {left, right};
  for (int s = 0; s < 2; ++s) {
    for (int e = 0; e < kLargeInts; ++e) send[s * kLargeInts + e] = large_value(g_world_rank, s, e);
  }
  const int across = spans_sites(ring);
  for (int nonblocking = 0; nonblocking < 2; ++nonblocking) {
    memset(receive, 0xff, sizeof receive);
    int rc;
    if (nonblocking) {
      MPI_Request request;
      rc = MPI_Ineighbor_alltoall(send, kLargeInts, MPI_INT, receive, kLargeInts, MPI_INT, ring, &request);
      if (rc == MPI_SUCCESS) rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
    } else {
      rc = MPI_Neighbor_alltoall(send, kLargeInts, MPI_INT, receive, kLargeInts, MPI_INT, ring);
    }
    if (rc != MPI_SUCCESS) fail("the large %s call failed", nonblocking ? "nonblocking" : "blocking");
    count_call(nonblocking ? kAlltoall + kNonblocking : kAlltoall, across);
    long long sum = 0;
    for (int k = 0; k < 2; ++k) {
      for (int e = 0; e < kLargeInts; ++e) {
        const int want = large_value(from[k], k ^ 1, e);
        if (receive[k * kLargeInts + e] != want) {
          fail("large block %d element %d is %d, expected %d", k, e, receive[k * kLargeInts + e], want);
        }
        sum += want;
      }
    }
    say("cart-1d-periodic large %salltoall: %d ints from each side, sum %lld\n", nonblocking ? "i" : "",
        kLargeInts, sum);
  }
  MPI_Comm_free(&ring);
  alarm(0);
}

void run_topologies(void) {
  const int n = g_world_size;
  MPI_Type_vector(2, 1, 2, MPI_INT, &g_holey);
  MPI_Datatype holey = g_holey;
  MPI_Type_create_resized(holey, 0, (MPI_Aint)(kBlockInts * sizeof(int)), &g_holey);
  MPI_Type_free(&holey);
  MPI_Type_commit(&g_holey);
  MPI_Type_contiguous(2, MPI_INT, &g_pair);
  MPI_Type_commit(&g_pair);

  const int ring[1] = {n}, periodic[3] = {1, 1, 0}, open[2] = {0, 0};
  cartesian("cart-1d-periodic", 1, ring, periodic);
  cartesian("cart-1d-open", 1, ring, open);
  const int square[2] = {2, 2}, half_periodic[2] = {1, 0};
  cartesian("cart-2d-2x2", 2, square, half_periodic); /* ranks 0-3; both sides of dimension 0 one process */
  const int cube[3] = {2, 1, 2};
  cartesian("cart-3d-2x1x2", 3, cube, periodic); /* dimension 1: size 1, periodic: itself on both sides */

  Topology g = {.name = "graph", .kind = kGraph};
  int index[kMaxRanks], edges[kMaxRanks * kMaxSlots], total = 0;
  for (int r = 0; r < n; ++r) {
    total += graph_neighbours(r, n, edges + total);
    index[r] = total;
  }
  begin_case("graph");
  MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &g.comm);
  g.in = g.out = graph_neighbours(g_world_rank, n, g.sources);
  memcpy(g.destinations, g.sources, sizeof g.sources);
  exercise(&g);
  MPI_Comm_free(&g.comm);

  Topology d = {.name = "dist-graph", .kind = kDistGraph};
  d.in = dist_sources(g_world_rank, n, d.sources);
  d.out = dist_destinations(g_world_rank, n, d.destinations);
  begin_case("dist-graph");
  const int weights[kMaxSlots] = {1, 1, 1, 1, 1, 1, 1, 1}; /* (MPI_UNWEIGHTED upsets gcc's bounds checks) */
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, d.in, d.sources, weights, d.out, d.destinations, weights,
                                 MPI_INFO_NULL, 0, &d.comm);
  exercise(&d);
  MPI_Comm_free(&d.comm);
  MPI_Type_free(&g_holey);
  MPI_Type_free(&g_pair);
  large_blocks();
}
