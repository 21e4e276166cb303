/* mpi_semantics: a plain MPI program (no LongPipe header) that exercises the point-to-point calls
 * and rules LongPipe's MPI front end must keep, and prints a transcript that is the same on every
 * correct MPI: run with and without LD_PRELOAD=liblongpipe.so, the transcripts must be identical.
 *
 * Four ranks; the test runs them as two sites {0,1} and {2,3}, so rank 0 hears from a same-site
 * rank (1, Open MPI's path) and from other-site ranks (2 and 3, LongPipe's path) in one call.
 *
 *   mpi_semantics            every phase below, then MPI_Finalize
 *   mpi_semantics abort      MPI_Init, then rank 0 calls MPI_Abort(MPI_COMM_WORLD, 3)
 *   mpi_semantics unreachable
 *                            rank 0 sets MPI_ERRORS_RETURN and sends to rank 2 after the runner
 *                            has made rank 2 unreachable (it says when on stdin... see transcripts.sh)
 *
 * Every rank writes its lines into its own transcript; rank 0 prints them all, rank by rank, at the
 * end (so the output does not depend on how mpirun interleaves the ranks' streams).
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { RANKS = 4, TRANSCRIPT_BYTES = 1 << 16 };
/* Messages per sender in the order phase; every LARGE_EVERY-th is LARGE_BYTES (above Open MPI's
 * 64 KiB eager limit, so both of its protocols and LongPipe's large path are exercised). */
enum { ORDER_MESSAGES = 30, LARGE_EVERY = 10, LARGE_BYTES = 200 * 1000 };
/* How long the Ssend phase gives an unmatched synchronous send to complete (it must not). */
enum { SSEND_GRACE_US = 300 * 1000 };

static int rank;
static char transcript[TRANSCRIPT_BYTES];
static size_t transcript_used;

static void note(const char* format, ...) {
  va_list args;
  va_start(args, format);
  int n = vsnprintf(transcript + transcript_used, sizeof transcript - transcript_used, format, args);
  va_end(args);
  if (n < 0 || (size_t)n >= sizeof transcript - transcript_used - 1) {
    fprintf(stderr, "rank %d: transcript full\n", rank);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  transcript_used += (size_t)n;
  transcript[transcript_used++] = '\n';
  transcript[transcript_used] = '\0';
}

static void must(int code, const char* what) {
  if (code != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(code, text, &length);
    fprintf(stderr, "rank %d: %s failed: %s\n", rank, what, text);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

/* Fills a message with a pattern that names its sender and sequence number. */
static void fill(unsigned char* data, int bytes, int source, int sequence) {
  for (int i = 0; i < bytes; ++i) data[i] = (unsigned char)(source * 31 + sequence * 7 + i);
}
static int intact(const unsigned char* data, int bytes, int source, int sequence) {
  for (int i = 0; i < bytes; ++i)
    if (data[i] != (unsigned char)(source * 31 + sequence * 7 + i)) return 0;
  return 1;
}

/* --- wildcards, order, status fields ---------------------------------------------------------- */

/* Ranks 1, 2, 3 each send ORDER_MESSAGES to rank 0 (sequence in the first bytes, tag = sequence %
 * 3, some large); rank 0 takes them with MPI_ANY_SOURCE / MPI_ANY_TAG: per sender, in order, with
 * the right tag, count and contents. */
static void phase_order(MPI_Comm comm) {
  static unsigned char buffer[LARGE_BYTES];
  if (rank == 0) {
    int next[RANKS] = {0}, bad_tag = 0, bad_count = 0, bad_data = 0, overtaken = 0;
    for (int i = 0; i < (RANKS - 1) * ORDER_MESSAGES; ++i) {
      MPI_Status status;
      must(MPI_Recv(buffer, LARGE_BYTES, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &status), "order recv");
      int source = status.MPI_SOURCE, count = 0, sequence = next[source]++;
      MPI_Get_count(&status, MPI_BYTE, &count);
      int expected = (sequence % LARGE_EVERY == LARGE_EVERY - 1) ? LARGE_BYTES : 16 + sequence;
      if (status.MPI_TAG != sequence % 3) ++bad_tag;
      if (count != expected) ++bad_count;
      if (count >= 1 && buffer[0] != (unsigned char)sequence) ++overtaken;
      else if (!intact(buffer + 1, count - 1, source, sequence)) ++bad_data;
    }
    for (int source = 1; source < RANKS; ++source)
      note("order: from rank %d: %d messages (wildcard source and tag)", source, next[source]);
    note("order: overtaken %d, wrong tag %d, wrong count %d, corrupt %d", overtaken, bad_tag, bad_count, bad_data);
  } else {
    for (int sequence = 0; sequence < ORDER_MESSAGES; ++sequence) {
      int bytes = (sequence % LARGE_EVERY == LARGE_EVERY - 1) ? LARGE_BYTES : 16 + sequence;
      buffer[0] = (unsigned char)sequence;
      fill(buffer + 1, bytes - 1, rank, sequence);
      must(MPI_Send(buffer, bytes, MPI_BYTE, 0, sequence % 3, comm), "order send");
    }
  }
}

/* Rank 2 sends tags 5, 6, 7; rank 0 receives 7, then 6, then 5: a receive skips messages that
 * do not match. Rank 1 sends tag 6 as well: a receive for (ANY_SOURCE, 6) takes one of them. */
static void phase_tags(MPI_Comm comm) {
  if (rank == 2 || rank == 1) {
    for (int tag = (rank == 2 ? 5 : 6); tag <= (rank == 2 ? 7 : 6); ++tag) {
      int value = rank * 100 + tag;
      must(MPI_Send(&value, 1, MPI_INT, 0, tag, comm), "tags send");
    }
  } else if (rank == 0) {
    int value = 0;
    MPI_Status status;
    for (int tag = 7; tag >= 5; --tag) {
      must(MPI_Recv(&value, 1, MPI_INT, 2, tag, comm, &status), "tags recv");
      note("tags: (source 2, tag %d) got %d", tag, value);
    }
    must(MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, 6, comm, &status), "tags recv any");
    note("tags: (any source, tag 6) got %d from rank %d tag %d", value, status.MPI_SOURCE, status.MPI_TAG);
  }
}

/* --- Ssend synchrony ---------------------------------------------------------------------------- */

/* Rank 0 starts MPI_Issend to `peer`, which posts the matching receive only after a go-ahead that
 * rank 0 sends after testing: the synchronous send must not complete before the match. */
static void ssend_to(int peer, MPI_Comm comm) {
  int payload = 4242, go = 1, flag = 1;
  if (rank == 0) {
    MPI_Request request;
    MPI_Status status;
    must(MPI_Issend(&payload, 1, MPI_INT, peer, 40, comm, &request), "issend");
    usleep(SSEND_GRACE_US);
    must(MPI_Test(&request, &flag, &status), "issend test");
    note("ssend: to rank %d complete before the receive was posted: %s", peer, flag ? "yes (WRONG)" : "no");
    must(MPI_Send(&go, 1, MPI_INT, peer, 41, comm), "go");
    must(MPI_Wait(&request, &status), "issend wait");
    note("ssend: to rank %d complete after the match", peer);
    /* Blocking MPI_Ssend returns only once the peer's receive (posted after a pause) matched. */
    must(MPI_Ssend(&payload, 1, MPI_INT, peer, 42, comm), "ssend");
    int matched = 0;
    must(MPI_Recv(&matched, 1, MPI_INT, peer, 43, comm, MPI_STATUS_IGNORE), "ssend ack");
    note("ssend: blocking Ssend to rank %d returned after its receive: %s", peer, matched ? "yes" : "no");
  } else if (rank == peer) {
    int received = 0;
    must(MPI_Recv(&go, 1, MPI_INT, 0, 41, comm, MPI_STATUS_IGNORE), "go recv");
    must(MPI_Recv(&received, 1, MPI_INT, 0, 40, comm, MPI_STATUS_IGNORE), "issend recv");
    usleep(SSEND_GRACE_US / 3);
    /* rank 0 is blocked in Ssend: nothing it could send on tag 43 yet; say "matched" after the recv. */
    must(MPI_Recv(&received, 1, MPI_INT, 0, 42, comm, MPI_STATUS_IGNORE), "ssend recv");
    int matched = 1;
    must(MPI_Send(&matched, 1, MPI_INT, 0, 43, comm), "ssend ack send");
  }
}

static void phase_ssend(MPI_Comm comm) {
  ssend_to(2, comm); /* across the sites */
  ssend_to(1, comm); /* inside a site */
}

/* --- probe and matched probe ----------------------------------------------------------------------- */

static void phase_probe(MPI_Comm comm) {
  enum { PROBE_INTS = 37 };
  int data[PROBE_INTS * 4];
  if (rank == 2) {
    for (int k = 0; k < 4; ++k) {
      for (int i = 0; i < PROBE_INTS + k; ++i) data[i] = k * 1000 + i;
      must(MPI_Send(data, PROBE_INTS + k, MPI_INT, 0, 50 + k, comm), "probe send");
    }
  } else if (rank == 0) {
    MPI_Status status;
    int count = 0, flag = 0;
    must(MPI_Probe(MPI_ANY_SOURCE, 50, comm, &status), "probe");
    MPI_Get_count(&status, MPI_INT, &count);
    note("probe: source %d tag %d count %d", status.MPI_SOURCE, status.MPI_TAG, count);
    must(MPI_Recv(data, count, MPI_INT, status.MPI_SOURCE, 50, comm, &status), "probe recv");
    note("probe: received %d..%d", data[0], data[count - 1]);
    while (!flag) must(MPI_Iprobe(2, 51, comm, &flag, &status), "iprobe");
    MPI_Get_count(&status, MPI_INT, &count);
    note("iprobe: source %d tag %d count %d", status.MPI_SOURCE, status.MPI_TAG, count);
    must(MPI_Recv(data, count, MPI_INT, 2, 51, comm, MPI_STATUS_IGNORE), "iprobe recv");
    MPI_Message message;
    must(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &message, &status), "mprobe");
    MPI_Get_count(&status, MPI_INT, &count);
    note("mprobe: source %d tag %d count %d", status.MPI_SOURCE, status.MPI_TAG, count);
    must(MPI_Mrecv(data, count, MPI_INT, &message, &status), "mrecv");
    note("mrecv: %d..%d, message handle now null: %s", data[0], data[count - 1], message == MPI_MESSAGE_NULL ? "yes" : "no");
    must(MPI_Improbe(2, 99, comm, &flag, &message, &status), "improbe nothing");
    note("improbe: a tag nobody sent: flag %d", flag);
    for (flag = 0; !flag;) must(MPI_Improbe(2, 53, comm, &flag, &message, &status), "improbe");
    MPI_Get_count(&status, MPI_INT, &count);
    MPI_Request request;
    must(MPI_Imrecv(data, count, MPI_INT, &message, &request), "imrecv");
    must(MPI_Wait(&request, &status), "imrecv wait");
    note("improbe+imrecv: source %d tag %d count %d, %d..%d", status.MPI_SOURCE, status.MPI_TAG, count, data[0], data[count - 1]);
  }
}

/* --- persistent requests, buffered and ready sends ------------------------------------------------ */

static void phase_persistent(MPI_Comm comm) {
  int value = 0, got[2] = {0, 0};
  MPI_Request requests[2];
  if (rank == 2 || rank == 1) {
    MPI_Request send;
    must(MPI_Send_init(&value, 1, MPI_INT, 0, 60, comm, &send), "send_init");
    for (int round = 0; round < 3; ++round) {
      value = rank * 10 + round;
      must(MPI_Start(&send), "start");
      must(MPI_Wait(&send, MPI_STATUS_IGNORE), "wait send");
    }
    must(MPI_Request_free(&send), "request_free");
  }
  if (rank == 2) {
    MPI_Request request;
    const int modes = 3;
    for (int mode = 0; mode < modes; ++mode) {
      value = 700 + mode;
      if (mode == 0) must(MPI_Ssend_init(&value, 1, MPI_INT, 0, 61, comm, &request), "ssend_init");
      if (mode == 1) must(MPI_Bsend_init(&value, 1, MPI_INT, 0, 61, comm, &request), "bsend_init");
      if (mode == 2) {
        int ready = 0; /* Rsend needs the receive posted first: rank 0 says when */
        must(MPI_Recv(&ready, 1, MPI_INT, 0, 62, comm, MPI_STATUS_IGNORE), "ready");
        must(MPI_Rsend_init(&value, 1, MPI_INT, 0, 61, comm, &request), "rsend_init");
      }
      must(MPI_Start(&request), "start mode");
      must(MPI_Wait(&request, MPI_STATUS_IGNORE), "wait mode");
      must(MPI_Request_free(&request), "free mode");
    }
  } else if (rank == 0) {
    must(MPI_Recv_init(&got[0], 1, MPI_INT, 1, 60, comm, &requests[0]), "recv_init 1");
    must(MPI_Recv_init(&got[1], 1, MPI_INT, 2, 60, comm, &requests[1]), "recv_init 2");
    for (int round = 0; round < 3; ++round) {
      must(MPI_Startall(2, requests), "startall");
      MPI_Status statuses[2];
      must(MPI_Waitall(2, requests, statuses), "waitall persistent");
      note("persistent: round %d got %d from rank %d and %d from rank %d, requests still live: %s", round, got[0],
           statuses[0].MPI_SOURCE, got[1], statuses[1].MPI_SOURCE,
           requests[0] != MPI_REQUEST_NULL && requests[1] != MPI_REQUEST_NULL ? "yes" : "no");
    }
    must(MPI_Request_free(&requests[0]), "free recv 1");
    must(MPI_Request_free(&requests[1]), "free recv 2");
    for (int mode = 0; mode < 3; ++mode) {
      MPI_Request request;
      must(MPI_Irecv(&value, 1, MPI_INT, 2, 61, comm, &request), "irecv mode");
      if (mode == 2) {
        int ready = 1;
        must(MPI_Send(&ready, 1, MPI_INT, 2, 62, comm), "ready send");
      }
      must(MPI_Wait(&request, MPI_STATUS_IGNORE), "wait irecv mode");
      note("persistent: %s send delivered %d", mode == 0 ? "Ssend_init" : mode == 1 ? "Bsend_init" : "Rsend_init", value);
    }
  }
}

static void phase_buffered_ready(MPI_Comm comm) {
  int value = 0, ready = 1;
  if (rank == 2) {
    MPI_Request request;
    value = 801;
    must(MPI_Bsend(&value, 1, MPI_INT, 0, 70, comm), "bsend");
    value = 802; /* Bsend copied the first value: changing it now must not matter */
    must(MPI_Ibsend(&value, 1, MPI_INT, 0, 71, comm, &request), "ibsend");
    must(MPI_Wait(&request, MPI_STATUS_IGNORE), "ibsend wait");
    must(MPI_Recv(&ready, 1, MPI_INT, 0, 72, comm, MPI_STATUS_IGNORE), "ready 1");
    value = 803;
    must(MPI_Rsend(&value, 1, MPI_INT, 0, 73, comm), "rsend");
    must(MPI_Recv(&ready, 1, MPI_INT, 0, 74, comm, MPI_STATUS_IGNORE), "ready 2");
    value = 804;
    must(MPI_Irsend(&value, 1, MPI_INT, 0, 75, comm, &request), "irsend");
    must(MPI_Wait(&request, MPI_STATUS_IGNORE), "irsend wait");
  } else if (rank == 0) {
    MPI_Request request;
    must(MPI_Recv(&value, 1, MPI_INT, 2, 70, comm, MPI_STATUS_IGNORE), "bsend recv");
    note("bsend: %d", value);
    must(MPI_Recv(&value, 1, MPI_INT, 2, 71, comm, MPI_STATUS_IGNORE), "ibsend recv");
    note("ibsend: %d", value);
    for (int tag = 73; tag <= 75; tag += 2) {
      must(MPI_Irecv(&value, 1, MPI_INT, 2, tag, comm, &request), "irecv ready");
      must(MPI_Send(&ready, 1, MPI_INT, 2, tag - 1, comm), "ready");
      must(MPI_Wait(&request, MPI_STATUS_IGNORE), "wait ready");
      note("%s: %d", tag == 73 ? "rsend" : "irsend", value);
    }
  }
}

/* --- cancel ----------------------------------------------------------------------------------------- */

static void phase_cancel(MPI_Comm comm) {
  if (rank != 0) return;
  int value = 0, cancelled = 0;
  MPI_Request request;
  MPI_Status status;
  /* Nobody sends tag 99: the receives (from another site, same site, anyone) stay unmatched. */
  int sources[3] = {2, 1, MPI_ANY_SOURCE};
  for (int i = 0; i < 3; ++i) {
    must(MPI_Irecv(&value, 1, MPI_INT, sources[i], 99, comm, &request), "irecv to cancel");
    must(MPI_Cancel(&request), "cancel");
    must(MPI_Wait(&request, &status), "wait cancelled");
    must(MPI_Test_cancelled(&status, &cancelled), "test_cancelled");
    note("cancel: unmatched receive from %s cancelled: %s, request null: %s",
         i == 0 ? "rank 2" : i == 1 ? "rank 1" : "any source", cancelled ? "yes" : "no",
         request == MPI_REQUEST_NULL ? "yes" : "no");
  }
}

/* --- LongPipe and Open MPI requests mixed in one completion call ------------------------------------ */

/* Rank 0 receives from ranks 1 (same site), 2 and 3 (other site) with one request each; tag picks
 * the completion call. Indices are checked against the sources they belong to. */
static void phase_mixed(MPI_Comm comm) {
  enum { FIRST_TAG = 80, CALLS = 6 };
  static const char* const calls[CALLS] = {"Waitall", "Waitany", "Waitsome", "Testall", "Testany", "Testsome"};
  if (rank != 0) {
    for (int call = 0; call < CALLS; ++call) {
      int value = rank * 1000 + call;
      must(MPI_Send(&value, 1, MPI_INT, 0, FIRST_TAG + call, comm), "mixed send");
    }
    int echo = 0;
    if (rank <= 2) must(MPI_Recv(&echo, 1, MPI_INT, 0, FIRST_TAG + CALLS, comm, MPI_STATUS_IGNORE), "mixed echo");
    if (rank == 2) { /* the sender for Request_get_status, once poked */
      int poke = 0, value = 2468;
      must(MPI_Recv(&poke, 1, MPI_INT, 0, FIRST_TAG + CALLS + 2, comm, MPI_STATUS_IGNORE), "poke recv");
      must(MPI_Send(&value, 1, MPI_INT, 0, FIRST_TAG + CALLS + 1, comm), "get_status send");
    }
    return;
  }
  for (int call = 0; call < CALLS; ++call) {
    enum { N = RANKS - 1 + 2 };
    int values[N] = {0}, done[N] = {0}, wrong = 0, order_ok = 1, echo = 5;
    MPI_Request requests[N];
    MPI_Status statuses[N];
    /* requests 0..2: receives from ranks 3, 1, 2 (mixed paths, not in rank order) */
    const int sources[3] = {3, 1, 2};
    for (int i = 0; i < 3; ++i)
      must(MPI_Irecv(&values[i], 1, MPI_INT, sources[i], FIRST_TAG + call, comm, &requests[i]), "mixed irecv");
    int n = 3;
    if (call == 0) { /* Waitall also mixes sends on both paths */
      must(MPI_Isend(&echo, 1, MPI_INT, 2, FIRST_TAG + CALLS, comm, &requests[3]), "mixed isend 2");
      must(MPI_Isend(&echo, 1, MPI_INT, 1, FIRST_TAG + CALLS, comm, &requests[4]), "mixed isend 1");
      n = 5;
    }
    int completed = 0;
    while (completed < n) {
      int index = MPI_UNDEFINED, flag = 0, outcount = 0, indices[N];
      switch (call) {
        case 0:
          must(MPI_Waitall(n, requests, statuses), "waitall");
          for (int i = 0; i < n; ++i) done[i] = 1;
          completed = n;
          break;
        case 1:
          must(MPI_Waitany(n, requests, &index, &statuses[0]), "waitany");
          if (index == MPI_UNDEFINED || done[index]) { wrong = 1; completed = n; break; }
          done[index] = 1, statuses[index] = statuses[0], ++completed;
          if (statuses[index].MPI_SOURCE != sources[index]) wrong = 1;
          break;
        case 2:
        case 5: {
          MPI_Status some[N];
          if (call == 2) must(MPI_Waitsome(n, requests, &outcount, indices, some), "waitsome");
          else must(MPI_Testsome(n, requests, &outcount, indices, some), "testsome");
          if (outcount == MPI_UNDEFINED) { wrong = 1; completed = n; break; }
          for (int k = 0; k < outcount; ++k) {
            if (done[indices[k]] || some[k].MPI_SOURCE != sources[indices[k]]) wrong = 1;
            done[indices[k]] = 1, ++completed;
          }
          break;
        }
        case 3:
          must(MPI_Testall(n, requests, &flag, statuses), "testall");
          if (flag) {
            for (int i = 0; i < n; ++i) done[i] = 1;
            completed = n;
          }
          break;
        case 4:
          must(MPI_Testany(n, requests, &index, &flag, &statuses[0]), "testany");
          if (flag && index != MPI_UNDEFINED) {
            if (done[index] || statuses[0].MPI_SOURCE != sources[index]) wrong = 1;
            done[index] = 1, ++completed;
          }
          break;
      }
    }
    for (int i = 0; i < 3; ++i) {
      if (values[i] != sources[i] * 1000 + call) order_ok = 0;
      if ((call == 0 || call == 3) && statuses[i].MPI_SOURCE != sources[i]) wrong = 1;
    }
    int all_null = 1;
    for (int i = 0; i < n; ++i) all_null &= requests[i] == MPI_REQUEST_NULL;
    note("mixed: %s over %d requests (both paths): values right: %s, indices and sources right: %s, all requests null: %s",
         calls[call], n, order_ok ? "yes" : "no", wrong ? "no" : "yes", all_null ? "yes" : "no");
  }
  /* Request_get_status does not free the request. */
  int value = 0, flag = 0;
  MPI_Request request;
  MPI_Status status;
  int poke = 1;
  must(MPI_Irecv(&value, 1, MPI_INT, 2, FIRST_TAG + CALLS + 1, comm, &request), "irecv get_status");
  must(MPI_Send(&poke, 1, MPI_INT, 2, FIRST_TAG + CALLS + 2, comm), "poke");
  while (!flag) must(MPI_Request_get_status(request, &flag, &status), "request_get_status");
  note("request_get_status: source %d tag %d, request still live: %s", status.MPI_SOURCE, status.MPI_TAG,
       request != MPI_REQUEST_NULL ? "yes" : "no");
  must(MPI_Wait(&request, &status), "wait after get_status");
  note("request_get_status: then Wait gave %d", value);
}

/* --- derived datatypes ------------------------------------------------------------------------------ */

struct particle {
  int id;
  double mass;
  char name[3];
};

static void phase_datatypes(MPI_Comm comm) {
  MPI_Datatype column, particle_type, pair, big_column;
  MPI_Type_vector(5, 1, 3, MPI_INT, &column);
  MPI_Type_commit(&column);
  int lengths[3] = {1, 1, 3};
  MPI_Aint displacements[3] = {offsetof(struct particle, id), offsetof(struct particle, mass), offsetof(struct particle, name)};
  MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
  MPI_Datatype raw_particle;
  MPI_Type_create_struct(3, lengths, displacements, types, &raw_particle);
  MPI_Type_create_resized(raw_particle, 0, sizeof(struct particle), &particle_type);
  MPI_Type_commit(&particle_type);
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  enum { BIG_BLOCKS = 30000 }; /* 120 KB of payload in a 240 KB strided layout: large path */
  MPI_Type_vector(BIG_BLOCKS, 1, 2, MPI_INT, &big_column);
  MPI_Type_commit(&big_column);
  static int big[2 * BIG_BLOCKS];

  if (rank == 2) {
    int matrix[15];
    for (int i = 0; i < 15; ++i) matrix[i] = i;
    must(MPI_Send(matrix, 1, column, 0, 90, comm), "vector send");
    struct particle particles[2] = {{7, 1.5, "ab"}, {9, 2.25, "cd"}};
    must(MPI_Send(particles, 2, particle_type, 0, 91, comm), "struct send");
    int seven[7] = {1, 2, 3, 4, 5, 6, 7};
    must(MPI_Send(seven, 7, MPI_INT, 0, 92, comm), "seven send");
    for (int i = 0; i < 2 * BIG_BLOCKS; ++i) big[i] = (i % 2) ? -1 : i / 2;
    must(MPI_Send(big, 1, big_column, 0, 93, comm), "big vector send");
    /* MPI_BOTTOM with absolute addresses */
    int a = 31, b = 32;
    MPI_Aint addresses[2];
    MPI_Get_address(&a, &addresses[0]);
    MPI_Get_address(&b, &addresses[1]);
    int ones[2] = {1, 1};
    MPI_Datatype ints[2] = {MPI_INT, MPI_INT}, absolute;
    MPI_Type_create_struct(2, ones, addresses, ints, &absolute);
    MPI_Type_commit(&absolute);
    must(MPI_Send(MPI_BOTTOM, 1, absolute, 0, 94, comm), "bottom send");
    MPI_Type_free(&absolute);
  } else if (rank == 0) {
    int got[5];
    MPI_Status status;
    int count = 0, elements = 0;
    must(MPI_Recv(got, 5, MPI_INT, 2, 90, comm, &status), "vector recv");
    MPI_Get_count(&status, MPI_INT, &count);
    note("datatypes: vector(5,1,3) arrived as %d ints: %d %d %d %d %d", count, got[0], got[1], got[2], got[3], got[4]);
    struct particle particles[2];
    memset(particles, 0, sizeof particles);
    must(MPI_Recv(particles, 2, particle_type, 2, 91, comm, &status), "struct recv");
    MPI_Get_count(&status, particle_type, &count);
    note("datatypes: %d particles: {%d %.2f %s} {%d %.2f %s}", count, particles[0].id, particles[0].mass, particles[0].name,
         particles[1].id, particles[1].mass, particles[1].name);
    int pairs[8] = {0};
    must(MPI_Recv(pairs, 4, pair, 2, 92, comm, &status), "pairs recv");
    MPI_Get_count(&status, pair, &count);
    MPI_Get_elements(&status, pair, &elements);
    note("datatypes: 7 ints into pairs: Get_count %s, Get_elements %d, last %d",
         count == MPI_UNDEFINED ? "MPI_UNDEFINED" : "defined (WRONG)", elements, pairs[6]);
    MPI_Get_count(&status, MPI_INT, &count);
    note("datatypes: Get_count as MPI_INT %d", count);
    memset(big, 0, sizeof big);
    must(MPI_Recv(big, 1, big_column, 2, 93, comm, &status), "big recv");
    int intact_big = 1;
    for (int i = 0; i < 2 * BIG_BLOCKS; ++i) intact_big &= big[i] == ((i % 2) ? 0 : i / 2);
    MPI_Get_elements(&status, big_column, &elements);
    note("datatypes: strided %d ints into a strided layout: intact and gaps untouched: %s, elements %d", BIG_BLOCKS,
         intact_big ? "yes" : "no", elements);
    int two[2] = {0, 0};
    must(MPI_Recv(two, 2, MPI_INT, 2, 94, comm, &status), "bottom recv");
    note("datatypes: from MPI_BOTTOM: %d %d", two[0], two[1]);
  }
  MPI_Type_free(&column);
  MPI_Type_free(&raw_particle);
  MPI_Type_free(&particle_type);
  MPI_Type_free(&pair);
  MPI_Type_free(&big_column);
}

/* --- communicators with equal tags ------------------------------------------------------------------ */

static void phase_communicators(void) {
  MPI_Comm dup, split, created;
  MPI_Group world_group, pair_group;
  int members[2] = {0, 2};
  must(MPI_Comm_dup(MPI_COMM_WORLD, &dup), "comm_dup");
  must(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &split), "comm_split"); /* key reverses ranks */
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  MPI_Group_incl(world_group, 2, members, &pair_group);
  must(MPI_Comm_create(MPI_COMM_WORLD, pair_group, &created), "comm_create");
  int split_rank = -1, split_size = 0;
  MPI_Comm_rank(split, &split_rank);
  MPI_Comm_size(split, &split_size);
  note("communicators: split rank %d of %d, created: %s", split_rank, split_size, created == MPI_COMM_NULL ? "null" : "member");
  if (rank == 2) {
    /* Same tag, four communicators, sent in this order; received in the opposite order. */
    int world_value = 1, dup_value = 2, split_value = 3, created_value = 4;
    int zero_in_split = 1; /* split of {0, 2} with key -rank: rank 2 is 0, rank 0 is 1 */
    must(MPI_Send(&world_value, 1, MPI_INT, 0, 5, MPI_COMM_WORLD), "world send");
    must(MPI_Send(&dup_value, 1, MPI_INT, 0, 5, dup), "dup send");
    must(MPI_Send(&split_value, 1, MPI_INT, zero_in_split, 5, split), "split send");
    must(MPI_Send(&created_value, 1, MPI_INT, 0, 5, created), "created send");
  } else if (rank == 0) {
    int value = 0;
    MPI_Status status;
    must(MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, 5, created, &status), "created recv");
    note("communicators: tag 5 on the created communicator: %d (from its rank %d)", value, status.MPI_SOURCE);
    must(MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, 5, split, &status), "split recv");
    note("communicators: tag 5 on the split communicator: %d (from its rank %d)", value, status.MPI_SOURCE);
    must(MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &status), "dup recv");
    note("communicators: any tag on the duplicate: %d (from rank %d)", value, status.MPI_SOURCE);
    must(MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &status), "world recv");
    note("communicators: tag 5 on MPI_COMM_WORLD: %d (from rank %d)", value, status.MPI_SOURCE);
  }
  MPI_Group_free(&pair_group);
  MPI_Group_free(&world_group);
  must(MPI_Comm_free(&dup), "comm_free dup");
  must(MPI_Comm_free(&split), "comm_free split");
  if (created != MPI_COMM_NULL) must(MPI_Comm_free(&created), "comm_free created");
  note("communicators: freed: %s", dup == MPI_COMM_NULL && split == MPI_COMM_NULL && created == MPI_COMM_NULL ? "yes" : "no");
}

/* --- sendrecv ---------------------------------------------------------------------------------------- */

static void phase_sendrecv(MPI_Comm comm) {
  int next = (rank + 1) % RANKS, previous = (rank + RANKS - 1) % RANKS;
  int out = rank * 11, in = -1;
  MPI_Status status;
  must(MPI_Sendrecv(&out, 1, MPI_INT, next, 100, &in, 1, MPI_INT, MPI_ANY_SOURCE, 100, comm, &status), "sendrecv");
  note("sendrecv: got %d from rank %d", in, status.MPI_SOURCE);
  int value = rank * 111;
  must(MPI_Sendrecv_replace(&value, 1, MPI_INT, previous, 101, next, 101, comm, &status), "sendrecv_replace");
  note("sendrecv_replace: got %d from rank %d", value, status.MPI_SOURCE);
}

/* --- the scripts ------------------------------------------------------------------------------------- */

static void print_transcripts(void) {
  int length = (int)transcript_used, lengths[RANKS], offsets[RANKS];
  MPI_Gather(&length, 1, MPI_INT, lengths, 1, MPI_INT, 0, MPI_COMM_WORLD);
  static char all[RANKS * TRANSCRIPT_BYTES];
  if (rank == 0)
    for (int r = 0, offset = 0; r < RANKS; offset += lengths[r++]) offsets[r] = offset;
  MPI_Gatherv(transcript, length, MPI_CHAR, all, lengths, offsets, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (rank != 0) return;
  for (int r = 0; r < RANKS; ++r) {
    const char* line = all + offsets[r];
    const char* end = line + lengths[r];
    while (line < end) {
      const char* newline = memchr(line, '\n', (size_t)(end - line));
      printf("rank %d: %.*s\n", r, (int)(newline - line), line);
      line = newline + 1;
    }
  }
  fflush(stdout);
}

typedef void (*phase_on_comm)(MPI_Comm);

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "all";
  int provided = MPI_THREAD_SINGLE, size = 0;
  if (strcmp(mode, "abort") == 0) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
      printf("abort: rank 0 calls MPI_Abort(MPI_COMM_WORLD, 3)\n");
      fflush(stdout);
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
    for (;;) pause(); /* the abort ends every rank */
  }
  must(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided), "init_thread");
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != RANKS) {
    if (rank == 0) fprintf(stderr, "mpi_semantics needs %d ranks, not %d\n", RANKS, size);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  note("init: MPI_Init_thread(FUNNELED) provides at least FUNNELED: %s", provided >= MPI_THREAD_FUNNELED ? "yes" : "no");
  static const struct {
    const char* name;
    phase_on_comm run;
  } phases[] = {
      {"order", phase_order},       {"tags", phase_tags},
      {"ssend", phase_ssend},       {"probe", phase_probe},
      {"persistent", phase_persistent}, {"buffered and ready", phase_buffered_ready},
      {"cancel", phase_cancel},     {"mixed", phase_mixed},
      {"datatypes", phase_datatypes},
      {"sendrecv", phase_sendrecv},
  };
  /* Bsend and Bsend_init need an attached buffer. */
  static char bsend_buffer[4 * (MPI_BSEND_OVERHEAD + 64)];
  MPI_Buffer_attach(bsend_buffer, sizeof bsend_buffer);
  for (size_t i = 0; i < sizeof phases / sizeof phases[0]; ++i) {
    /* Each phase on a fresh duplicate: a wildcard receive never takes another phase's message. */
    MPI_Comm comm;
    must(MPI_Comm_dup(MPI_COMM_WORLD, &comm), "phase comm_dup");
    phases[i].run(comm);
    MPI_Barrier(MPI_COMM_WORLD);
    must(MPI_Comm_free(&comm), "phase comm_free");
  }
  phase_communicators();
  void* detached = NULL;
  int detached_size = 0;
  MPI_Buffer_detach(&detached, &detached_size);
  print_transcripts();
  if (rank == 0) printf("done\n");
  MPI_Finalize();
  return 0;
}
