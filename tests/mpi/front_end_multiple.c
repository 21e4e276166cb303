/* MPI_THREAD_MULTIPLE: several threads per rank call MPI at once. Run with and without LongPipe;
 * the transcripts (rank 0's, in a fixed order) must be the same. Every message carries its
 * sender, thread and sequence number; every receiver checks content and per-(source, tag) order.
 * Usage: front_end_multiple p2p|collectives [MESSAGES] (p2p: per peer, thread and kind; 150).
 * A hung run is stopped by a watchdog (SIGALRM) that names the scenario and exits with status 3.
 *
 *   p2p          kThreads threads per rank; thread t talks to every other rank on its own tags:
 *                Isend/Issend received by Irecv + MPI_Waitany (tag A); Send/Isend/Issend received
 *                by MPI_ANY_SOURCE receives (tag B); Isend/Issend received after MPI_Probe or
 *                MPI_Improbe + MPI_Mrecv (tag C); small and large (rendezvous-size) messages.
 *   collectives  thread t runs collectives on its own duplicate of MPI_COMM_WORLD (made in thread
 *                order by the main thread): Barrier, Bcast, Allreduce, Reduce, Allgather, Alltoall,
 *                Gather, Scatter, Iallreduce + Wait, and a Comm_dup of its communicator with an
 *                Allreduce on it, checking every result.
 */
#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { kThreads = 4, kLargeInts = 40000, kRounds = 20, kWatchdogSeconds = 150 };
enum { kTagWaitany = 100, kTagAnySource = 200, kTagProbe = 300 };

static const char* scenario = "?";
static int messages_per_peer = 150;  /* per peer, thread and kind; argv[2] (sanitizer builds: fewer) */
static int rank, size;

static void watchdog(int signal_number) {
  (void)signal_number;
  char text[256];
  const int length = snprintf(text, sizeof text, "TIMEOUT: scenario %s hung for %d s\n", scenario, kWatchdogSeconds);
  if (length > 0) (void)!write(2, text, (size_t)length);
  _exit(3);
}

/* Per-thread result: failures found (0: all good) and the first one described. */
struct ThreadResult {
  int thread;
  int errors;
  long checked;
  char first[200];
};

static void failure(struct ThreadResult* result, const char* what, int source, int tag, int seq) {
  if (result->errors++ == 0) {
    snprintf(result->first, sizeof result->first, "%s (source %d, tag %d, seq %d)", what, source, tag, seq);
  }
}

/* Message k of thread t from `source`: one in 25 large (rendezvous size). Element i is a function of all. */
static int length_of(int k) { return k % 25 == 3 ? kLargeInts : 4 + k % 7; }
static int value_of(int source, int thread, int k, int i) { return source * 1000003 + thread * 10007 + k * 101 + i; }

static void fill(int* buffer, int thread, int k) {
  const int n = length_of(k);
  buffer[0] = rank;
  buffer[1] = thread;
  buffer[2] = k;
  for (int i = 3; i < n; ++i) buffer[i] = value_of(rank, thread, k, i);
}

/* Checks a message's status and content; returns its sequence number (-1 if wrong). */
static int check(struct ThreadResult* result, const int* buffer, const MPI_Status* status, int tag, int thread) {
  const int source = status->MPI_SOURCE, k = buffer[2];
  int count = -1;
  MPI_Get_count(status, MPI_INT, &count);
  if (status->MPI_TAG != tag) failure(result, "wrong tag in status", source, status->MPI_TAG, k);
  if (buffer[0] != source || buffer[1] != thread) failure(result, "wrong sender or thread in body", source, tag, k);
  if (k < 0 || k >= messages_per_peer || count != length_of(k)) {
    failure(result, "wrong sequence number or count", source, tag, k);
    return -1;
  }
  for (int i = 3; i < count; ++i) {
    if (buffer[i] != value_of(source, thread, k, i)) {
      failure(result, "wrong data", source, tag, k);
      break;
    }
  }
  ++result->checked;
  return k;
}

/* Every message of this thread on `tag` to every other rank: Isend, every fourth Issend; with
 * `blocking_small`, the small ones by blocking MPI_Send (eager: no peer waits for them). */
static void send_all(int thread, int tag, MPI_Request* requests, int** buffers, int blocking_small) {
  int r = 0;
  for (int peer = 0; peer < size; ++peer) {
    if (peer == rank) continue;
    for (int k = 0; k < messages_per_peer; ++k, ++r) {
      fill(buffers[r], thread, k);
      if (blocking_small && length_of(k) < kLargeInts) {
        MPI_Send(buffers[r], length_of(k), MPI_INT, peer, tag, MPI_COMM_WORLD);
        requests[r] = MPI_REQUEST_NULL;
      } else if (k % 4 == 1) {
        MPI_Issend(buffers[r], length_of(k), MPI_INT, peer, tag, MPI_COMM_WORLD, &requests[r]);
      } else {
        MPI_Isend(buffers[r], length_of(k), MPI_INT, peer, tag, MPI_COMM_WORLD, &requests[r]);
      }
    }
  }
}

static void* p2p_thread(void* argument) {
  struct ThreadResult* result = argument;
  const int t = result->thread, peers = size - 1, total = peers * messages_per_peer;
  int* receive = malloc(sizeof(int) * kLargeInts);
  int** send_buffers = malloc(sizeof(int*) * (size_t)total);
  int** receive_buffers = malloc(sizeof(int*) * (size_t)total);
  for (int i = 0; i < total; ++i) {  /* buffer i holds message i % messages_per_peer of a peer */
    send_buffers[i] = malloc(sizeof(int) * (size_t)length_of(i % messages_per_peer));
    receive_buffers[i] = malloc(sizeof(int) * (size_t)length_of(i % messages_per_peer));
  }
  MPI_Request* sends = malloc(sizeof(MPI_Request) * (size_t)total);
  MPI_Request* receives = malloc(sizeof(MPI_Request) * (size_t)total);
  int* next = calloc((size_t)size, sizeof(int));

  /* A: Irecv from each peer in order, completed with MPI_Waitany (any order across requests;
   * per source, the k-th posted receive must hold message k). */
  const int tag_a = kTagWaitany + t;
  int r = 0;
  for (int peer = 0; peer < size; ++peer) {
    if (peer == rank) continue;
    for (int k = 0; k < messages_per_peer; ++k, ++r) {
      MPI_Irecv(receive_buffers[r], length_of(k), MPI_INT, peer, tag_a, MPI_COMM_WORLD, &receives[r]);
    }
  }
  send_all(t, tag_a, sends, send_buffers, 0);
  for (int done = 0; done < total; ++done) {
    int index = MPI_UNDEFINED;
    MPI_Status status;
    MPI_Waitany(total, receives, &index, &status);
    if (index == MPI_UNDEFINED) {
      failure(result, "Waitany found nothing", -1, tag_a, -1);
      break;
    }
    const int k = check(result, receive_buffers[index], &status, tag_a, t);
    if (k >= 0 && k != index % messages_per_peer) failure(result, "Waitany: message in the wrong receive", status.MPI_SOURCE, tag_a, k);
  }
  MPI_Waitall(total, sends, MPI_STATUSES_IGNORE);

  /* B: MPI_ANY_SOURCE receives; per source the sequence numbers must come in order. */
  const int tag_b = kTagAnySource + t;
  send_all(t, tag_b, sends, send_buffers, 1);
  memset(next, 0, sizeof(int) * (size_t)size);
  for (int done = 0; done < total; ++done) {
    MPI_Status status;
    MPI_Recv(receive, kLargeInts, MPI_INT, MPI_ANY_SOURCE, tag_b, MPI_COMM_WORLD, &status);
    const int k = check(result, receive, &status, tag_b, t);
    if (k >= 0 && k != next[status.MPI_SOURCE]++) failure(result, "any-source: out of order", status.MPI_SOURCE, tag_b, k);
  }
  MPI_Waitall(total, sends, MPI_STATUSES_IGNORE);

  /* C: MPI_Probe (any source) then a receive of exactly that message, or MPI_Improbe + MPI_Mrecv. */
  const int tag_c = kTagProbe + t;
  send_all(t, tag_c, sends, send_buffers, 0);
  memset(next, 0, sizeof(int) * (size_t)size);
  for (int done = 0; done < total; ++done) {
    MPI_Status status;
    int count = 0;
    if (done % 2 == 0) {
      MPI_Probe(MPI_ANY_SOURCE, tag_c, MPI_COMM_WORLD, &status);
      MPI_Get_count(&status, MPI_INT, &count);
      MPI_Recv(receive, count, MPI_INT, status.MPI_SOURCE, tag_c, MPI_COMM_WORLD, &status);
    } else {
      int flag = 0;
      MPI_Message message;
      while (!flag) MPI_Improbe(MPI_ANY_SOURCE, tag_c, MPI_COMM_WORLD, &flag, &message, &status);
      MPI_Get_count(&status, MPI_INT, &count);
      MPI_Mrecv(receive, count, MPI_INT, &message, &status);
    }
    const int k = check(result, receive, &status, tag_c, t);
    if (k >= 0 && k != next[status.MPI_SOURCE]++) failure(result, "probe: out of order", status.MPI_SOURCE, tag_c, k);
  }
  MPI_Waitall(total, sends, MPI_STATUSES_IGNORE);

  for (int i = 0; i < total; ++i) {
    free(send_buffers[i]);
    free(receive_buffers[i]);
  }
  free(send_buffers);
  free(receive_buffers);
  free(sends);
  free(receives);
  free(next);
  free(receive);
  return NULL;
}

static MPI_Comm thread_comms[kThreads];

static void expect(struct ThreadResult* result, int ok, const char* what, int round) {
  if (!ok) failure(result, what, -1, -1, round);
  ++result->checked;
}

static void* collectives_thread(void* argument) {
  struct ThreadResult* result = argument;
  const int t = result->thread;
  MPI_Comm comm = thread_comms[t];
  int* all = malloc(sizeof(int) * (size_t)size);
  int* out = malloc(sizeof(int) * (size_t)size);
  for (int round = 0; round < kRounds; ++round) {
    const int root = (round + t) % size, base = round * 1000 + t;
    MPI_Barrier(comm);
    int value = rank == root ? base : -1;
    MPI_Bcast(&value, 1, MPI_INT, root, comm);
    expect(result, value == base, "Bcast", round);
    const int mine = base + rank;
    int sum = 0, expected_sum = 0;
    for (int i = 0; i < size; ++i) expected_sum += base + i;
    MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, comm);
    expect(result, sum == expected_sum, "Allreduce", round);
    int reduced = -1;
    MPI_Reduce(&mine, &reduced, 1, MPI_INT, MPI_MAX, root, comm);
    if (rank == root) expect(result, reduced == base + size - 1, "Reduce", round);
    MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, comm);
    for (int i = 0; i < size; ++i) expect(result, all[i] == base + i, "Allgather", round);
    for (int i = 0; i < size; ++i) out[i] = base * 7 + rank * 100 + i;
    MPI_Alltoall(out, 1, MPI_INT, all, 1, MPI_INT, comm);
    for (int i = 0; i < size; ++i) expect(result, all[i] == base * 7 + i * 100 + rank, "Alltoall", round);
    MPI_Gather(&mine, 1, MPI_INT, all, 1, MPI_INT, root, comm);
    if (rank == root) {
      for (int i = 0; i < size; ++i) expect(result, all[i] == base + i, "Gather", round);
    }
    for (int i = 0; i < size; ++i) out[i] = base * 3 + i;
    int piece = -1;
    MPI_Scatter(out, 1, MPI_INT, &piece, 1, MPI_INT, root, comm);
    expect(result, piece == base * 3 + rank, "Scatter", round);
    MPI_Request request;
    sum = 0;
    MPI_Iallreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, comm, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    expect(result, sum == expected_sum, "Iallreduce", round);
    if (round % 5 == 0) {
      MPI_Comm dup;
      MPI_Comm_dup(comm, &dup);
      sum = 0;
      MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, dup);
      expect(result, sum == expected_sum, "Allreduce on a thread's Comm_dup", round);
      MPI_Comm_free(&dup);
    }
  }
  free(all);
  free(out);
  return NULL;
}

int main(int argc, char** argv) {
  scenario = argc > 1 ? argv[1] : "p2p";
  if (argc > 2) messages_per_peer = atoi(argv[2]);
  signal(SIGALRM, watchdog);
  alarm(kWatchdogSeconds);
  int provided = -1;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (provided != MPI_THREAD_MULTIPLE) {
    if (rank == 0) printf("%s: MPI_THREAD_MULTIPLE not provided (%d)\n", scenario, provided);
    MPI_Finalize();
    return 1;
  }
  void* (*body)(void*) = NULL;
  if (strcmp(scenario, "p2p") == 0) {
    body = p2p_thread;
  } else if (strcmp(scenario, "collectives") == 0) {
    body = collectives_thread;
    for (int t = 0; t < kThreads; ++t) MPI_Comm_dup(MPI_COMM_WORLD, &thread_comms[t]);
  } else {
    if (rank == 0) fprintf(stderr, "unknown scenario %s\n", scenario);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  struct ThreadResult results[kThreads];
  pthread_t threads[kThreads];
  for (int t = 0; t < kThreads; ++t) {
    memset(&results[t], 0, sizeof results[t]);
    results[t].thread = t;
    pthread_create(&threads[t], NULL, body, &results[t]);
  }
  int errors = 0;
  for (int t = 0; t < kThreads; ++t) {
    pthread_join(threads[t], NULL);
    errors += results[t].errors;
  }
  if (strcmp(scenario, "collectives") == 0) {
    for (int t = 0; t < kThreads; ++t) MPI_Comm_free(&thread_comms[t]);
  }
  /* Each rank's verdict, gathered in rank order by rank 0: a fixed transcript. */
  int all_errors = 0;
  MPI_Reduce(&errors, &all_errors, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  for (int t = 0; t < kThreads; ++t) {
    if (results[t].errors) {
      fprintf(stderr, "FAILED: rank %d thread %d: %d error(s), first: %s\n", rank, t, results[t].errors,
              results[t].first);
    }
  }
  if (rank == 0) {
    for (int t = 0; t < kThreads; ++t) {
      printf("%s: rank 0 thread %d checked %ld\n", scenario, t, results[t].checked);
    }
    if (all_errors == 0) printf("%s: complete and intact on every rank\n", scenario);
    else printf("%s: %d error(s)\n", scenario, all_errors);
  }
  alarm(0);
  MPI_Finalize();
  return all_errors == 0 ? 0 : 1;
}
