/* A plain MPI program (no LongPipe header): communicators of every kind, messages with one tag on
 * all of them at once (each must reach its own communicator), a communicator freed with a receive
 * pending while a new one is made, collectives on the new ones. Run with 4 ranks, sites {0,1} {2,3}
 * (tests/mpi/run_communicators.sh: with and without the preload, identical transcripts).
 *
 * It also counts what crosses the sites while a communicator is made: this program defines
 * PMPI_Allreduce, PMPI_Comm_split... itself (exported: linked with -rdynamic), and LongPipe looks its
 * PMPI_* functions up in the global scope first, so LongPipe's calls come here. Open MPI's own
 * calls do not (its MPI_* are the PMPI_* code itself). A collective whose communicator has ranks at
 * both sites, issued while the program is inside a call that makes a communicator (or completes an
 * MPI_Comm_idup), is a round trip over the long link that LongPipe's registration added: the
 * transcript says how many there were, and must say 0. Communicators LongPipe makes meanwhile over
 * both sites are counted apart, on stderr, and must be none (its site sub-communicators are made by
 * each site's ranks alone). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char transcript[1 << 16];
static size_t used;
static int rank, size;

static void say(const char* format, ...) {
  va_list args;
  va_start(args, format);
  used += (size_t)snprintf(transcript + used, sizeof transcript - used, "rank %d: ", rank);
  used += (size_t)vsnprintf(transcript + used, sizeof transcript - used, format, args);
  used += (size_t)snprintf(transcript + used, sizeof transcript - used, "\n");
  va_end(args);
}

static void check(int ok, const char* what) {
  if (ok) return;
  fprintf(stderr, "rank %d: FAILED: %s\n", rank, what);
  MPI_Abort(MPI_COMM_WORLD, 2);
}

/* ---- counting LongPipe's collectives across the sites ---- */

static int creating;       /* inside a call that makes a communicator */
static int user_call;      /* the next PMPI_<creation> call is the program's own, passed on by LongPipe */
static int link_crossings; /* collectives over both sites issued meanwhile */
static int constructions;  /* communicators made over both sites meanwhile */

static int site_of_world(int world) { return world < size / 2 ? 0 : 1; }

static int group_spans_sites(MPI_Group group) {
  MPI_Group world_group;
  int n, spans = 0, first = -1;
  PMPI_Group_size(group, &n);
  PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
  for (int i = 0; i < n; ++i) {
    int world;
    PMPI_Group_translate_ranks(group, 1, &i, world_group, &world);
    if (world == MPI_UNDEFINED) continue;
    if (first < 0) first = site_of_world(world);
    if (site_of_world(world) != first) spans = 1;
  }
  PMPI_Group_free(&world_group);
  return spans;
}

static int comm_spans_sites(MPI_Comm comm) {
  MPI_Group group;
  int inter = 0, spans;
  PMPI_Comm_test_inter(comm, &inter);
  if (inter) return 1; /* both sides: this program's intercommunicator spans them */
  PMPI_Comm_group(comm, &group);
  spans = group_spans_sites(group);
  PMPI_Group_free(&group);
  return spans;
}

static void note(MPI_Comm comm, const char* function) {
  if (!creating || !comm_spans_sites(comm)) return;
  ++link_crossings;
  fprintf(stderr, "rank %d: %s over both sites while making a communicator\n", rank, function);
}

static void note_construction(MPI_Comm comm) {
  if (creating && comm_spans_sites(comm)) ++constructions;
}

static int own_call(void) {
  const int own = user_call;
  user_call = 0;
  return own;
}

#define NEXT(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

int PMPI_Allreduce(const void* s, void* r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c) {
  note(c, "PMPI_Allreduce");
  return NEXT(PMPI_Allreduce)(s, r, n, t, o, c);
}
int PMPI_Allgather(const void* s, int sn, MPI_Datatype st, void* r, int rn, MPI_Datatype rt, MPI_Comm c) {
  note(c, "PMPI_Allgather");
  return NEXT(PMPI_Allgather)(s, sn, st, r, rn, rt, c);
}
int PMPI_Bcast(void* b, int n, MPI_Datatype t, int root, MPI_Comm c) {
  note(c, "PMPI_Bcast");
  return NEXT(PMPI_Bcast)(b, n, t, root, c);
}
int PMPI_Barrier(MPI_Comm c) {
  note(c, "PMPI_Barrier");
  return NEXT(PMPI_Barrier)(c);
}
int PMPI_Reduce(const void* s, void* r, int n, MPI_Datatype t, MPI_Op o, int root, MPI_Comm c) {
  note(c, "PMPI_Reduce");
  return NEXT(PMPI_Reduce)(s, r, n, t, o, root, c);
}
int PMPI_Iallreduce(const void* s, void* r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c, MPI_Request* q) {
  note(c, "PMPI_Iallreduce");
  return NEXT(PMPI_Iallreduce)(s, r, n, t, o, c, q);
}
int PMPI_Comm_split(MPI_Comm c, int color, int key, MPI_Comm* out) {
  if (!own_call()) note_construction(c);
  return NEXT(PMPI_Comm_split)(c, color, key, out);
}
int PMPI_Comm_dup(MPI_Comm c, MPI_Comm* out) {
  if (!own_call()) note_construction(c);
  return NEXT(PMPI_Comm_dup)(c, out);
}
int PMPI_Comm_create(MPI_Comm c, MPI_Group g, MPI_Comm* out) {
  if (!own_call()) note_construction(c);
  return NEXT(PMPI_Comm_create)(c, g, out);
}
int PMPI_Comm_create_group(MPI_Comm c, MPI_Group g, int tag, MPI_Comm* out) {
  if (!own_call() && creating && group_spans_sites(g)) ++constructions;
  return NEXT(PMPI_Comm_create_group)(c, g, tag, out);
}

/* Brackets a call that makes a communicator; `own`: it is one of the functions above. */
#define MAKING(own, call)     \
  do {                        \
    creating = 1;             \
    user_call = (own);        \
    check((call) == MPI_SUCCESS, #call); \
    user_call = 0;            \
    creating = 0;             \
  } while (0)

/* ---- the communicators ---- */

enum { kMaxComms = 24, kTag = 5 };
static MPI_Comm comms[kMaxComms];
static const char* names[kMaxComms];
static int ids[kMaxComms]; /* the same on every rank (keep()'s call order, members or not) */
static int count, calls;

static void keep(MPI_Comm comm, const char* name) {
  const int id = calls++;
  if (comm == MPI_COMM_NULL) {
    say("%s: not a member", name);
    return;
  }
  int inter = 0, n = 0, r = 0;
  MPI_Comm_test_inter(comm, &inter);
  MPI_Comm_rank(comm, &r);
  if (inter) {
    MPI_Comm_remote_size(comm, &n);
  } else {
    MPI_Comm_size(comm, &n);
  }
  say("%s: rank %d of %d%s", name, r, n, inter ? " (remote group)" : "");
  comms[count] = comm;
  ids[count] = id;
  names[count++] = name;
}

/* Every rank sends one message with tag kTag to every peer on every communicator, all receives
 * posted first (half with MPI_ANY_SOURCE), in reverse order of the sends. Each message carries its
 * communicator's index and its sender's rank there: it must arrive on that communicator. */
static void isolation(const char* stage) {
  enum { kMaxPeers = 8 };
  static int in[kMaxComms][kMaxPeers][2], out[kMaxComms][kMaxPeers][2];
  MPI_Request requests[2 * kMaxComms * kMaxPeers];
  int posted = 0, messages = 0;
  for (int c = 0; c < count; ++c) {
    int inter = 0, peers = 0;
    MPI_Comm_test_inter(comms[c], &inter);
    if (inter) MPI_Comm_remote_size(comms[c], &peers); else MPI_Comm_size(comms[c], &peers);
    for (int p = 0; p < peers; ++p) {
      const int source = (c % 2) ? MPI_ANY_SOURCE : p;
      MPI_Irecv(in[c][p], 2, MPI_INT, source, kTag, comms[c], &requests[posted++]);
    }
  }
  for (int c = count - 1; c >= 0; --c) {
    int inter = 0, peers = 0, me = 0;
    MPI_Comm_test_inter(comms[c], &inter);
    if (inter) MPI_Comm_remote_size(comms[c], &peers); else MPI_Comm_size(comms[c], &peers);
    MPI_Comm_rank(comms[c], &me);
    for (int p = peers - 1; p >= 0; --p) {
      out[c][p][0] = ids[c];
      out[c][p][1] = me;
      MPI_Isend(out[c][p], 2, MPI_INT, p, kTag, comms[c], &requests[posted++]);
    }
  }
  check(MPI_Waitall(posted, requests, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "isolation Waitall");
  for (int c = 0; c < count; ++c) {
    int inter = 0, peers = 0, seen = 0;
    MPI_Comm_test_inter(comms[c], &inter);
    if (inter) MPI_Comm_remote_size(comms[c], &peers); else MPI_Comm_size(comms[c], &peers);
    for (int p = 0; p < peers; ++p) {
      char what[160];
      snprintf(what, sizeof what, "%s: message on %s came from communicator %d", stage, names[c], in[c][p][0]);
      check(in[c][p][0] == ids[c], what);
      seen |= 1 << in[c][p][1];
      ++messages;
    }
    check(seen == (1 << peers) - 1, "isolation: one message from every peer");
  }
  say("%s: %d messages with tag %d on %d communicators, each on its own", stage, messages, kTag, count);
}

static void collectives(void) {
  for (int c = 0; c < count; ++c) {
    int inter = 0, sum = 0, one = 1;
    MPI_Comm_test_inter(comms[c], &inter);
    if (inter) continue;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comms[c]);
    int mine = rank * 10, root_value = -1;
    root_value = mine;
    MPI_Bcast(&root_value, 1, MPI_INT, 0, comms[c]);
    MPI_Barrier(comms[c]);
    say("%s: Allreduce of ones = %d, Bcast from its rank 0 = %d", names[c], sum, root_value);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 4) {
    if (rank == 0) fprintf(stderr, "run with 4 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Comm dup, dup_info, split2, split3, split_type, created, created_group = MPI_COMM_NULL, cart, graph, dist,
      adjacent, idup, site, inter, merged;
  MPI_Group world_group, some;
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "mpi_assert_no_any_tag", "false");
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);

  MAKING(1, MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  MAKING(0, MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &dup_info));
  MAKING(1, MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &split2));      /* {2,0} {3,1}: both span */
  MAKING(1, MPI_Comm_split(MPI_COMM_WORLD, rank % 3, rank, &split3));             /* {0,3} {1} {2} */
  /* Argument "two-site" (across the emulated link): no MPI_Comm_split_type. There Open MPI alone
   * hangs in the MPI_Dist_graph_create below after it, though not on one host. */
  const int two_site = argc > 1 && strcmp(argv[1], "two-site") == 0;
  split_type = dist = MPI_COMM_NULL;
  if (!two_site) {
    MAKING(0, MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, info, &split_type));
  }
  const int first_three[] = {0, 1, 2}, last_three[] = {1, 2, 3};
  MPI_Group_incl(world_group, 3, first_three, &some);
  MAKING(1, MPI_Comm_create(MPI_COMM_WORLD, some, &created));                     /* rank 3: MPI_COMM_NULL */
  MPI_Group_free(&some);
  MPI_Group_incl(world_group, 3, last_three, &some);
  if (rank != 0) MAKING(1, MPI_Comm_create_group(MPI_COMM_WORLD, some, 7, &created_group));
  MPI_Group_free(&some);
  const int dims[] = {2, 2}, periods[] = {1, 0};
  MAKING(0, MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
  const int index[] = {2, 4, 6, 8}, edges[] = {1, 3, 0, 2, 1, 3, 2, 0};              /* a ring */
  MAKING(0, MPI_Graph_create(MPI_COMM_WORLD, 4, index, edges, 0, &graph));
  const int next = (rank + 1) % size, previous = (rank + size - 1) % size, one = 1;
  /* Through a volatile pointer: GCC takes MPI_UNWEIGHTED for an array of size 0 and warns. */
  const int* volatile unweighted = MPI_UNWEIGHTED;
  MAKING(0, MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &rank, &one, &next, unweighted, MPI_INFO_NULL, 0, &dist));
  MAKING(0, MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &previous, unweighted, 1, &next, unweighted,
                                           MPI_INFO_NULL, 0, &adjacent));
  MPI_Request request;
  MAKING(0, MPI_Comm_idup(MPI_COMM_WORLD, &idup, &request));
  /* A message on MPI_COMM_WORLD with the same tag while the idup is under way. */
  int token = rank, got = -1;
  MPI_Sendrecv(&token, 1, MPI_INT, (rank + 2) % size, kTag, &got, 1, MPI_INT, (rank + 2) % size, kTag, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  MAKING(0, MPI_Wait(&request, MPI_STATUS_IGNORE));
  say("world during idup: got %d", got);
  MAKING(1, MPI_Comm_split(MPI_COMM_WORLD, rank < size / 2, rank, &site));     /* {0,1} {2,3}: one per site */
  MAKING(0, MPI_Intercomm_create(site, 0, MPI_COMM_WORLD, rank < size / 2 ? size / 2 : 0, 11, &inter));
  MAKING(0, MPI_Intercomm_merge(inter, rank >= size / 2, &merged));

  keep(dup, "dup");
  keep(dup_info, "dup_with_info");
  keep(split2, "split by rank % 2");
  keep(split3, "split by rank % 3");
  keep(split_type, "split_type shared");
  keep(created, "create {0,1,2}");
  keep(created_group, "create_group {1,2,3}");
  keep(cart, "cart 2x2");
  keep(graph, "graph ring");
  keep(dist, "dist_graph ring");
  keep(adjacent, "dist_graph_adjacent ring");
  keep(idup, "idup");
  keep(site, "split by site");
  keep(inter, "intercomm_create");
  keep(merged, "intercomm_merge");
  keep(MPI_COMM_WORLD, "world");

  isolation("all at once");
  collectives();

  /* The first collective on the idup'd communicator nonblocking, then a blocking one. */
  int sum = 0, ones = 1;
  MPI_Iallreduce(&ones, &sum, 1, MPI_INT, MPI_SUM, idup, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  say("idup: Iallreduce of ones = %d", sum);

  /* A receive pending on a communicator being freed while another is made: each message reaches
   * its own (rank 2 sends on the new one first). */
  int old_value = -1, new_value = -1;
  MPI_Comm again;
  if (rank == 0) {
    MPI_Request old_request, new_request;
    MPI_Irecv(&old_value, 1, MPI_INT, 2, 9, dup, &old_request);
    MPI_Comm_free(&dup);
    MAKING(1, MPI_Comm_dup(MPI_COMM_WORLD, &again));
    MPI_Irecv(&new_value, 1, MPI_INT, 2, 9, again, &new_request);
    MPI_Wait(&new_request, MPI_STATUS_IGNORE);
    MPI_Wait(&old_request, MPI_STATUS_IGNORE);
    say("freed with a receive pending: old communicator got %d, new one %d", old_value, new_value);
    check(old_value == 100 && new_value == 200, "messages of a freed and a new communicator kept apart");
  } else {
    MAKING(1, MPI_Comm_dup(MPI_COMM_WORLD, &again));
    if (rank == 2) {
      const int old_message = 100, new_message = 200;
      MPI_Send(&new_message, 1, MPI_INT, 0, 9, again);
      MPI_Send(&old_message, 1, MPI_INT, 0, 9, dup);
    }
    MPI_Comm_free(&dup);
  }
  comms[0] = again;
  names[0] = "dup made after a free";
  /* Freed and made again with nothing pending (Open MPI may hand out the same handle). */
  MPI_Comm_free(&dup_info);
  MAKING(1, MPI_Comm_dup(MPI_COMM_WORLD, &dup_info));
  comms[1] = dup_info;
  names[1] = "dup_with_info made again";
  isolation("after frees");
  collectives();

  say("communicator registration crossed the sites %d times", link_crossings);
  fprintf(stderr, "rank %d: LongPipe made %d communicators over both sites\n", rank, constructions);
  MPI_Info_free(&info);
  MPI_Group_free(&world_group);

  /* Every rank's lines to rank 0, printed in rank order. */
  if (rank == 0) {
    fputs(transcript, stdout);
    for (int r = 1; r < size; ++r) {
      MPI_Status status;
      int length;
      MPI_Probe(r, 99, MPI_COMM_WORLD, &status);
      MPI_Get_count(&status, MPI_CHAR, &length);
      char* text = malloc((size_t)length + 1);
      MPI_Recv(text, length, MPI_CHAR, r, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      text[length] = 0;
      fputs(text, stdout);
      free(text);
    }
  } else {
    MPI_Send(transcript, (int)used, MPI_CHAR, 0, 99, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
