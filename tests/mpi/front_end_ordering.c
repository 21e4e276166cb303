/* A plain MPI program (no LongPipe header) for MPI's receive matching order when receives on one
 * communicator take different paths under LongPipe (Open MPI's for a same-site source, LongPipe's
 * for a wildcard or another site), and for operations still pending when their communicator is
 * freed. Run with 4 ranks; tests/mpi/run_front_end.sh runs it with and without
 * LD_PRELOAD=liblongpipe.so, sites forced to {0,1} and {2,3}, and requires identical transcripts.
 * Every check that fails aborts the job with a message on stderr. Rank 0 prints every rank's lines
 * at the end, in rank order, so the transcript does not depend on timing.
 *
 * The ordering stages share one pattern: rank 0 posts a wildcard receive and, behind it, a receive
 * from rank 1 (same site); the wildcard completes from rank 2 (other site) before rank 1 sends
 * anything; then rank 0 posts a later receive (or probe) from rank 1 and lets rank 1 send. Message
 * k from rank 1 holds k ints of value k, so its size says which one a receive or probe got.
 * An argument names one stage to run alone (recv, sendrecv, persistent, probe, wildcard, comm_free). */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char transcript[16384];
static size_t used;
static int rank, size;

enum { kWildcardTag = 20, kGoTag = 19, kFreedTag = 40, kLargest = 8 };

/* The stage named on the command line, or every stage. */
static const char* only_stage;
static int wanted(const char* stage) { return !only_stage || strcmp(only_stage, stage) == 0; }

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
  fprintf(stderr, "front_end_ordering: rank %d: FAILED: %s\n", rank, what);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Which of rank 1's messages a completed receive got (its size; every value must equal it). */
static int message_number(const int* buffer, const MPI_Status* status) {
  int count = 0, i;
  MPI_Get_count(status, MPI_INT, &count);
  check(status->MPI_SOURCE == 1, "a message of rank 1 reports source 1");
  for (i = 0; i < count; ++i) check(buffer[i] == count, "message k holds k ints of value k");
  return count;
}

/* Rank 1: waits for rank 0's go, then sends `messages` messages with `tag` (message k: k ints). */
static void same_site_sender(int tag, int messages) {
  int go, k, i, values[kLargest];
  MPI_Recv(&go, 1, MPI_INT, 0, kGoTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  for (k = 1; k <= messages; ++k) {
    for (i = 0; i < k; ++i) values[i] = k;
    MPI_Send(values, k, MPI_INT, 0, tag, MPI_COMM_WORLD);
  }
}

static void go(void) {
  int nothing = 0;
  MPI_Send(&nothing, 1, MPI_INT, 1, kGoTag, MPI_COMM_WORLD);
}

/* Rank 2: the message that completes rank 0's wildcard receive. */
static void complete_wildcard(void) {
  int value = 200;
  MPI_Send(&value, 1, MPI_INT, 0, kWildcardTag, MPI_COMM_WORLD);
}

/* Rank 0: the wildcard receive, and behind it a receive from rank 1 with `tag` (returned); the
 * wildcard has completed from rank 2 when this returns. */
static MPI_Request wildcard_then_queued(int tag, int* buffer) {
  int from_remote = 0;
  MPI_Request wildcard, queued;
  MPI_Status status;
  MPI_Irecv(&from_remote, 1, MPI_INT, MPI_ANY_SOURCE, kWildcardTag, MPI_COMM_WORLD, &wildcard);
  MPI_Irecv(buffer, kLargest, MPI_INT, 1, tag, MPI_COMM_WORLD, &queued);
  MPI_Wait(&wildcard, &status);
  check(status.MPI_SOURCE == 2 && from_remote == 200, "the wildcard receive got rank 2's message");
  return queued;
}

/* Waits for the queued receive: it was posted first, so it must get message 1. */
static void expect_first(MPI_Request* queued, const int* buffer, const char* stage) {
  MPI_Status status;
  MPI_Wait(queued, &status);
  const int number = message_number(buffer, &status);
  say("%s: the receive queued behind the wildcard got message %d", stage, number);
  check(number == 1, "the earlier receive gets the first message");
}

/* A later MPI_Recv from rank 1 after the wildcard completed. */
static void later_recv(void) {
  const int tag = 21;
  int first[kLargest], second[kLargest];
  if (rank == 0) {
    MPI_Request queued = wildcard_then_queued(tag, first);
    MPI_Status status;
    go();
    MPI_Recv(second, kLargest, MPI_INT, 1, tag, MPI_COMM_WORLD, &status);
    const int number = message_number(second, &status);
    say("recv: the later MPI_Recv got message %d", number);
    check(number == 2, "the later MPI_Recv gets the second message");
    expect_first(&queued, first, "recv");
  } else if (rank == 1) {
    same_site_sender(tag, 2);
  } else if (rank == 2) {
    complete_wildcard();
  }
}

/* The same with MPI_Sendrecv, whose send half is the go. */
static void later_sendrecv(void) {
  const int tag = 22;
  int first[kLargest], second[kLargest], nothing = 0;
  if (rank == 0) {
    MPI_Request queued = wildcard_then_queued(tag, first);
    MPI_Status status;
    MPI_Sendrecv(&nothing, 1, MPI_INT, 1, kGoTag, second, kLargest, MPI_INT, 1, tag, MPI_COMM_WORLD, &status);
    const int number = message_number(second, &status);
    say("sendrecv: the receive half got message %d", number);
    check(number == 2, "MPI_Sendrecv's receive gets the second message");
    expect_first(&queued, first, "sendrecv");
  } else if (rank == 1) {
    same_site_sender(tag, 2);
  } else if (rank == 2) {
    complete_wildcard();
  }
}

/* A persistent receive from rank 1, started after the wildcard completed; started again once
 * nothing else is pending. */
static void later_persistent(void) {
  const int tag = 23;
  int first[kLargest], later[kLargest];
  if (rank == 0) {
    MPI_Request persistent, queued;
    MPI_Status status;
    MPI_Recv_init(later, kLargest, MPI_INT, 1, tag, MPI_COMM_WORLD, &persistent);
    queued = wildcard_then_queued(tag, first);
    MPI_Start(&persistent);
    go();
    MPI_Wait(&persistent, &status);
    int number = message_number(later, &status);
    say("persistent: the receive started later got message %d", number);
    check(number == 2, "the persistent receive started later gets the second message");
    expect_first(&queued, first, "persistent");
    MPI_Start(&persistent);
    go();
    MPI_Wait(&persistent, &status);
    number = message_number(later, &status);
    say("persistent: started again with nothing pending, it got message %d", number);
    check(number == 1, "the persistent receive started again gets the next message");
    MPI_Request_free(&persistent);
  } else if (rank == 1) {
    same_site_sender(tag, 2);
    same_site_sender(tag, 1);
  } else if (rank == 2) {
    complete_wildcard();
  }
}

/* Probes from rank 1 (MPI_Probe by source, MPI_Iprobe with MPI_ANY_SOURCE, MPI_Mprobe) must not
 * report the message the queued receive takes. */
static void later_probes(void) {
  const int tags[2] = {24, 25};
  int first[kLargest], second[kLargest], round, count;
  for (round = 0; round < 2; ++round) {
    const int tag = tags[round];
    if (rank == 0) {
      MPI_Request queued = wildcard_then_queued(tag, first);
      MPI_Status status;
      go();
      if (round == 0) {
        MPI_Probe(1, tag, MPI_COMM_WORLD, &status);
        MPI_Get_count(&status, MPI_INT, &count);
        say("probe: MPI_Probe(1) reports message %d", count);
        check(count == 2, "MPI_Probe reports the second message");
        MPI_Recv(second, kLargest, MPI_INT, 1, tag, MPI_COMM_WORLD, &status);
      } else {
        int flag = 0;
        MPI_Message message;
        while (!flag) MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &status);
        MPI_Get_count(&status, MPI_INT, &count);
        say("probe: MPI_Iprobe(MPI_ANY_SOURCE) reports message %d from rank %d", count, status.MPI_SOURCE);
        check(count == 2 && status.MPI_SOURCE == 1, "MPI_Iprobe reports the second message");
        MPI_Mprobe(1, tag, MPI_COMM_WORLD, &message, &status);
        MPI_Get_count(&status, MPI_INT, &count);
        say("probe: MPI_Mprobe(1) takes message %d", count);
        check(count == 2, "MPI_Mprobe takes the second message");
        MPI_Mrecv(second, kLargest, MPI_INT, &message, &status);
      }
      count = message_number(second, &status);
      check(count == 2, "the receive after the probe gets the probed message");
      expect_first(&queued, first, "probe");
    } else if (rank == 1) {
      same_site_sender(tag, 2);
    } else if (rank == 2) {
      complete_wildcard();
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

/* A later wildcard receive that Open MPI's messages may match must not take a message from an
 * earlier receive of rank 1 (both LongPipe's: the earlier one is queued behind the first wildcard). */
static void later_wildcard(void) {
  const int tag = 26;
  int first[kLargest], second[kLargest];
  if (rank == 0) {
    MPI_Request requests[2];
    MPI_Status statuses[2];
    requests[0] = wildcard_then_queued(tag, first);
    MPI_Irecv(second, kLargest, MPI_INT, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &requests[1]);
    go();
    MPI_Waitall(2, requests, statuses);
    const int earlier = message_number(first, &statuses[0]), later = message_number(second, &statuses[1]);
    say("wildcard: the queued receive got message %d, the later wildcard message %d", earlier, later);
    check(earlier == 1 && later == 2, "receives from rank 1 and MPI_ANY_SOURCE match in posting order");
  } else if (rank == 1) {
    same_site_sender(tag, 2);
  } else if (rank == 2) {
    complete_wildcard();
  }
}

/* MPI_Comm_free with operations pending on the communicator: they complete normally, with the
 * freed communicator's ranks in MPI_SOURCE. Ranks are reversed in it (world 0 is 3, 1 is 2, 2 is 1),
 * so a world rank reported by mistake shows. Rank 0 frees it with a receive from rank 2 (other site),
 * a synchronous send to rank 2, a wildcard receive that rank 1's message (same site) completes, and
 * a persistent receive from rank 2 pending; rank 2 frees it before starting its persistent send. */
static void pending_on_freed_communicator(void) {
  MPI_Comm reversed;
  int value = 0, wildcard_value = 0, persistent_value = 0, signal = 1, round;
  MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &reversed);
  if (rank == 0) {
    const int synchronous_value = 31;
    MPI_Request receive, synchronous, wildcard, persistent;
    MPI_Status status;
    MPI_Irecv(&value, 1, MPI_INT, 1, 30, reversed, &receive);
    MPI_Issend(&synchronous_value, 1, MPI_INT, 1, 31, reversed, &synchronous);
    MPI_Irecv(&wildcard_value, 1, MPI_INT, MPI_ANY_SOURCE, 33, reversed, &wildcard);
    MPI_Recv_init(&persistent_value, 1, MPI_INT, 1, 32, reversed, &persistent);
    MPI_Comm_free(&reversed);
    check(reversed == MPI_COMM_NULL, "MPI_Comm_free sets the handle to MPI_COMM_NULL");
    MPI_Send(&signal, 1, MPI_INT, 1, kFreedTag, MPI_COMM_WORLD);
    MPI_Send(&signal, 1, MPI_INT, 2, kFreedTag, MPI_COMM_WORLD);
    MPI_Wait(&receive, &status);
    say("comm_free: the pending receive got %d from rank %d", value, status.MPI_SOURCE);
    check(value == 300 && status.MPI_SOURCE == 1, "the pending receive completes with the freed communicator's rank");
    MPI_Wait(&synchronous, MPI_STATUS_IGNORE);
    say("comm_free: the pending synchronous send completed");
    MPI_Wait(&wildcard, &status);
    say("comm_free: the pending wildcard receive got %d from rank %d", wildcard_value, status.MPI_SOURCE);
    check(wildcard_value == 100 && status.MPI_SOURCE == 2, "the wildcard receive gets rank 1's message");
    for (round = 0; round < 2; ++round) {
      MPI_Start(&persistent);
      MPI_Wait(&persistent, &status);
      say("comm_free: the persistent receive got %d from rank %d", persistent_value, status.MPI_SOURCE);
      check(persistent_value == 301 + round && status.MPI_SOURCE == 1, "the persistent receive still works");
    }
    MPI_Request_free(&persistent);
  } else if (rank == 1) {
    value = 100;
    MPI_Recv(&signal, 1, MPI_INT, 0, kFreedTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&value, 1, MPI_INT, 3, 33, reversed);
    MPI_Comm_free(&reversed);
  } else if (rank == 2) {
    MPI_Request persistent;
    MPI_Send_init(&persistent_value, 1, MPI_INT, 3, 32, reversed, &persistent);
    MPI_Recv(&signal, 1, MPI_INT, 0, kFreedTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    value = 300;
    MPI_Send(&value, 1, MPI_INT, 3, 30, reversed);
    MPI_Recv(&value, 1, MPI_INT, 3, 31, reversed, MPI_STATUS_IGNORE);
    say("comm_free: the synchronous message arrived: %d", value);
    MPI_Comm_free(&reversed);
    for (round = 0; round < 2; ++round) {
      persistent_value = 301 + round;
      MPI_Start(&persistent);
      MPI_Wait(&persistent, MPI_STATUS_IGNORE);
    }
    MPI_Request_free(&persistent);
    say("comm_free: the persistent send on the freed communicator went twice");
  } else {
    MPI_Comm_free(&reversed);
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
  only_stage = argc > 1 ? argv[1] : NULL;
  /* Stages never share messages: a barrier after each. */
  if (wanted("recv")) later_recv();
  MPI_Barrier(MPI_COMM_WORLD);
  if (wanted("sendrecv")) later_sendrecv();
  MPI_Barrier(MPI_COMM_WORLD);
  if (wanted("persistent")) later_persistent();
  MPI_Barrier(MPI_COMM_WORLD);
  if (wanted("probe")) later_probes();
  MPI_Barrier(MPI_COMM_WORLD);
  if (wanted("wildcard")) later_wildcard();
  MPI_Barrier(MPI_COMM_WORLD);
  if (wanted("comm_free")) pending_on_freed_communicator();
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    int r;
    fputs(transcript, stdout);
    for (r = 1; r < size; ++r) {
      int length;
      MPI_Recv(&length, 1, MPI_INT, r, 1000, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Recv(transcript, length, MPI_CHAR, r, 1001, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      fwrite(transcript, 1, (size_t)length, stdout);
    }
    fflush(stdout);
  } else {
    int length = (int)used;
    MPI_Send(&length, 1, MPI_INT, 0, 1000, MPI_COMM_WORLD);
    MPI_Send(transcript, length, MPI_CHAR, 0, 1001, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
