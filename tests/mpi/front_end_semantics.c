/* A plain MPI program (no LongPipe header) that exercises the point-to-point rules LongPipe's MPI
 * front end must keep. Run with 4 ranks; tests/mpi/run_front_end.sh runs it with and without
 * LD_PRELOAD=liblongpipe.so, sites forced to {0,1} and {2,3}, and requires identical transcripts.
 * Every rank collects its lines; rank 0 prints them all at the end, in rank order, so the transcript
 * does not depend on timing. */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char transcript[65536];
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

static int compare_ints(const void* a, const void* b) { return *(const int*)a - *(const int*)b; }

static void basic(void) {
  int data[10], i, sum = 0;
  if (rank == 0) {
    for (i = 0; i < 10; ++i) data[i] = i * i;
    MPI_Send(data, 10, MPI_INT, 2, 1, MPI_COMM_WORLD);
    MPI_Recv(&sum, 1, MPI_INT, 2, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    say("basic: sum of squares back from rank 2 = %d", sum);
  } else if (rank == 2) {
    MPI_Status status;
    int count;
    MPI_Recv(data, 10, MPI_INT, 0, 1, MPI_COMM_WORLD, &status);
    MPI_Get_count(&status, MPI_INT, &count);
    for (i = 0; i < 10; ++i) sum += data[i];
    say("basic: got %d ints from %d tag %d", count, status.MPI_SOURCE, status.MPI_TAG);
    MPI_Send(&sum, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
  }
}

/* 200 messages 0 -> 3 with Isend + Waitall, received one by one: order and content. */
static void ordering(void) {
  enum { N = 200 };
  int i;
  if (rank == 0) {
    static int values[N];
    MPI_Request requests[N];
    for (i = 0; i < N; ++i) {
      values[i] = 1000 + i;
      MPI_Isend(&values[i], 1, MPI_INT, 3, 5, MPI_COMM_WORLD, &requests[i]);
    }
    MPI_Waitall(N, requests, MPI_STATUSES_IGNORE);
  } else if (rank == 3) {
    int in_order = 1, value;
    for (i = 0; i < N; ++i) {
      MPI_Recv(&value, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (value != 1000 + i) in_order = 0;
    }
    say("order: %d messages from rank 0, in order: %s", N, in_order ? "yes" : "no");
  }
}

/* Wildcards across both paths: rank 1 (same site as 0) and rank 2 (other site) send to rank 0. */
static void wildcards(void) {
  int i;
  if (rank == 1 || rank == 2) {
    for (i = 0; i < 3; ++i) {
      int value = rank * 100 + i;
      MPI_Send(&value, 1, MPI_INT, 0, 10 + i, MPI_COMM_WORLD);
    }
  } else if (rank == 0) {
    int got[6], last_tag[3] = {-1, -1, -1}, per_source_order = 1;
    for (i = 0; i < 6; ++i) {
      MPI_Status status;
      MPI_Recv(&got[i], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
      if (got[i] != status.MPI_SOURCE * 100 + status.MPI_TAG - 10) per_source_order = 0;
      if (status.MPI_TAG <= last_tag[status.MPI_SOURCE]) per_source_order = 0;
      last_tag[status.MPI_SOURCE] = status.MPI_TAG;
    }
    qsort(got, 6, sizeof got[0], compare_ints);
    say("wildcards: %d %d %d %d %d %d, per-source order and status right: %s", got[0], got[1], got[2], got[3],
        got[4], got[5], per_source_order ? "yes" : "no");
  }
}

/* A selective receive takes a later message first; the earlier one waits. */
static void selective(void) {
  if (rank == 2) {
    int a = 7, b = 8;
    MPI_Send(&a, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    MPI_Send(&b, 1, MPI_INT, 0, 8, MPI_COMM_WORLD);
  } else if (rank == 0) {
    int a, b;
    MPI_Recv(&b, 1, MPI_INT, 2, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&a, 1, MPI_INT, 2, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    say("selective: tag 8 first = %d, then tag 7 = %d", b, a);
  }
}

/* MPI_Issend completes only once the receive matched. */
static void synchronous(void) {
  if (rank == 0) {
    int value = 42, go = 1, flag = 0, i;
    MPI_Request request;
    MPI_Issend(&value, 1, MPI_INT, 2, 20, MPI_COMM_WORLD, &request);
    for (i = 0; i < 50 && !flag; ++i) MPI_Test(&request, &flag, MPI_STATUS_IGNORE);
    say("ssend: complete before the receiver matched: %s", flag ? "yes (wrong)" : "no");
    MPI_Send(&go, 1, MPI_INT, 2, 21, MPI_COMM_WORLD);
    if (!flag) MPI_Wait(&request, MPI_STATUS_IGNORE);
    MPI_Ssend(&value, 1, MPI_INT, 2, 22, MPI_COMM_WORLD);
    say("ssend: both synchronous sends completed");
  } else if (rank == 2) {
    int value, go;
    MPI_Recv(&go, 1, MPI_INT, 0, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&value, 1, MPI_INT, 0, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&value, 1, MPI_INT, 0, 22, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    say("ssend: received %d after the go signal", value);
  }
}

static void probes(void) {
  if (rank == 2) {
    double d[5] = {1.5, 2.5, 3.5, 4.5, 5.5};
    MPI_Send(d, 5, MPI_DOUBLE, 0, 30, MPI_COMM_WORLD);
  } else if (rank == 3) {
    short s[3] = {1, 2, 3};
    MPI_Send(s, 3, MPI_SHORT, 0, 31, MPI_COMM_WORLD);
    MPI_Send(s, 2, MPI_SHORT, 0, 32, MPI_COMM_WORLD);
  } else if (rank == 0) {
    MPI_Status status;
    MPI_Message message;
    int count, elements, flag = 0;
    double d[5];
    short s[3];
    MPI_Probe(2, 30, MPI_COMM_WORLD, &status);
    MPI_Get_count(&status, MPI_DOUBLE, &count);
    MPI_Get_elements(&status, MPI_DOUBLE, &elements);
    say("probe: %d doubles (%d elements) from %d tag %d", count, elements, status.MPI_SOURCE, status.MPI_TAG);
    MPI_Recv(d, 5, MPI_DOUBLE, 2, 30, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    say("probe: then received %.1f .. %.1f", d[0], d[4]);
    MPI_Mprobe(MPI_ANY_SOURCE, 31, MPI_COMM_WORLD, &message, &status);
    MPI_Get_count(&status, MPI_SHORT, &count);
    MPI_Mrecv(s, 3, MPI_SHORT, &message, &status);
    say("mprobe: %d shorts from %d: %d %d %d, message now null: %s", count, status.MPI_SOURCE, s[0], s[1], s[2],
        message == MPI_MESSAGE_NULL ? "yes" : "no");
    while (!flag) MPI_Improbe(3, 32, MPI_COMM_WORLD, &flag, &message, &status);
    MPI_Request request;
    MPI_Imrecv(s, 3, MPI_SHORT, &message, &request);
    MPI_Wait(&request, &status);
    MPI_Get_count(&status, MPI_SHORT, &count);
    say("improbe + imrecv: %d shorts from %d tag %d", count, status.MPI_SOURCE, status.MPI_TAG);
    MPI_Iprobe(2, 33, MPI_COMM_WORLD, &flag, &status);
    say("iprobe for a message nobody sent: %d", flag);
  }
}

static void persistent(void) {
  int i, value = 0;
  MPI_Request request;
  if (rank == 0) {
    MPI_Send_init(&value, 1, MPI_INT, 2, 40, MPI_COMM_WORLD, &request);
    for (i = 0; i < 5; ++i) {
      value = 500 + i;
      MPI_Start(&request);
      MPI_Wait(&request, MPI_STATUS_IGNORE);
    }
    MPI_Request_free(&request);
  } else if (rank == 2) {
    int total = 0;
    MPI_Status status;
    MPI_Recv_init(&value, 1, MPI_INT, 0, 40, MPI_COMM_WORLD, &request);
    for (i = 0; i < 5; ++i) {
      MPI_Start(&request);
      MPI_Wait(&request, &status);
      total += value;
    }
    MPI_Request_free(&request);
    say("persistent: 5 values summing to %d, last from %d, handle freed: %s", total, status.MPI_SOURCE,
        request == MPI_REQUEST_NULL ? "yes" : "no");
  }
}

static void cancelling(void) {
  if (rank == 0) {
    int value, cancelled = 0;
    MPI_Request request;
    MPI_Status status;
    MPI_Irecv(&value, 1, MPI_INT, 2, 99, MPI_COMM_WORLD, &request);
    MPI_Cancel(&request);
    MPI_Wait(&request, &status);
    MPI_Test_cancelled(&status, &cancelled);
    say("cancel: unmatched receive from rank 2 cancelled: %d", cancelled);
  }
}

/* One Waitall / Waitany / Testsome over Open MPI's and LongPipe's requests. */
static void mixed(void) {
  if (rank == 1 || rank == 2 || rank == 3) {
    int value = rank * 11, i;
    for (i = 0; i < 3; ++i) MPI_Send(&value, 1, MPI_INT, 0, 50 + i, MPI_COMM_WORLD);
  } else if (rank == 0) {
    int values[3], index, i, outcount, indices[3], seen[3] = {0, 0, 0}, right = 1;
    MPI_Request requests[3];
    MPI_Status statuses[3];
    for (i = 0; i < 3; ++i) MPI_Irecv(&values[i], 1, MPI_INT, i + 1, 50, MPI_COMM_WORLD, &requests[i]);
    MPI_Waitall(3, requests, statuses);
    say("waitall: %d %d %d from %d %d %d", values[0], values[1], values[2], statuses[0].MPI_SOURCE,
        statuses[1].MPI_SOURCE, statuses[2].MPI_SOURCE);
    for (i = 0; i < 3; ++i) MPI_Irecv(&values[i], 1, MPI_INT, i + 1, 51, MPI_COMM_WORLD, &requests[i]);
    for (i = 0; i < 3; ++i) {
      MPI_Status status;
      MPI_Waitany(3, requests, &index, &status);
      seen[index]++;
      if (status.MPI_SOURCE != index + 1 || values[index] != (index + 1) * 11) right = 0;
    }
    MPI_Waitany(3, requests, &index, MPI_STATUS_IGNORE);
    say("waitany: each index once: %s, values and sources match indices: %s, then MPI_UNDEFINED: %s",
        seen[0] == 1 && seen[1] == 1 && seen[2] == 1 ? "yes" : "no", right ? "yes" : "no",
        index == MPI_UNDEFINED ? "yes" : "no");
    for (i = 0; i < 3; ++i) MPI_Irecv(&values[i], 1, MPI_INT, i + 1, 52, MPI_COMM_WORLD, &requests[i]);
    seen[0] = seen[1] = seen[2] = 0;
    right = 1;
    for (;;) {
      MPI_Testsome(3, requests, &outcount, indices, statuses);
      if (outcount == MPI_UNDEFINED) break;
      for (i = 0; i < outcount; ++i) {
        seen[indices[i]]++;
        if (statuses[i].MPI_SOURCE != indices[i] + 1 || values[indices[i]] != (indices[i] + 1) * 11) right = 0;
      }
    }
    say("testsome: each index once: %s, sources match indices: %s",
        seen[0] == 1 && seen[1] == 1 && seen[2] == 1 ? "yes" : "no", right ? "yes" : "no");
  }
}

static void datatypes(void) {
  int matrix[4][4], i, j;
  struct pair { char c; double d; } pairs[3];
  MPI_Datatype column, pair_type;
  int lengths[2] = {1, 1};
  MPI_Aint displacements[2] = {offsetof(struct pair, c), offsetof(struct pair, d)};
  MPI_Datatype types[2] = {MPI_CHAR, MPI_DOUBLE};
  MPI_Type_vector(4, 1, 4, MPI_INT, &column);
  MPI_Type_commit(&column);
  MPI_Type_create_struct(2, lengths, displacements, types, &pair_type);
  MPI_Type_commit(&pair_type);
  if (rank == 0) {
    for (i = 0; i < 4; ++i)
      for (j = 0; j < 4; ++j) matrix[i][j] = 10 * i + j;
    for (i = 0; i < 3; ++i) {
      pairs[i].c = (char)('a' + i);
      pairs[i].d = i + 0.25;
    }
    MPI_Send(&matrix[0][1], 1, column, 2, 70, MPI_COMM_WORLD);
    MPI_Send(pairs, 3, pair_type, 2, 71, MPI_COMM_WORLD);
    MPI_Send(matrix, 4, MPI_INT, 2, 72, MPI_COMM_WORLD);
    MPI_Send(matrix, 7, MPI_INT, 2, 73, MPI_COMM_WORLD);
  } else if (rank == 2) {
    int col[4], count;
    MPI_Status status;
    MPI_Recv(col, 4, MPI_INT, 0, 70, MPI_COMM_WORLD, &status);
    MPI_Get_count(&status, MPI_INT, &count);
    say("vector type: column 1 = %d %d %d %d (%d ints)", col[0], col[1], col[2], col[3], count);
    memset(pairs, 0, sizeof pairs);
    MPI_Recv(pairs, 3, pair_type, 0, 71, MPI_COMM_WORLD, &status);
    MPI_Get_count(&status, pair_type, &count);
    say("struct type: %c%.2f %c%.2f %c%.2f (%d pairs)", pairs[0].c, pairs[0].d, pairs[1].c, pairs[1].d, pairs[2].c,
        pairs[2].d, count);
    memset(matrix, 0, sizeof matrix);
    MPI_Recv(&matrix[0][0], 1, column, 0, 72, MPI_COMM_WORLD, &status);
    MPI_Get_elements(&status, MPI_INT, &count);
    say("into a vector type: %d %d %d %d (%d elements)", matrix[0][0], matrix[1][0], matrix[2][0], matrix[3][0], count);
    {
      /* 7 ints into pairs of ints: the 4th pair is half filled, its other half left alone. */
      int pairs_of_ints[8], elements;
      MPI_Datatype int_pair;
      MPI_Type_contiguous(2, MPI_INT, &int_pair);
      MPI_Type_commit(&int_pair);
      for (i = 0; i < 8; ++i) pairs_of_ints[i] = -1;
      MPI_Recv(pairs_of_ints, 4, int_pair, 0, 73, MPI_COMM_WORLD, &status);
      MPI_Get_count(&status, int_pair, &count);
      MPI_Get_elements(&status, int_pair, &elements);
      say("partial element: Get_count %s, Get_elements %d, ints %d .. %d, untouched %d",
          count == MPI_UNDEFINED ? "MPI_UNDEFINED" : "defined", elements, pairs_of_ints[0], pairs_of_ints[6],
          pairs_of_ints[7]);
      MPI_Type_free(&int_pair);
    }
  }
  MPI_Type_free(&column);
  MPI_Type_free(&pair_type);
}

/* The same tag on two communicators never crosses. */
static void communicators(void) {
  MPI_Comm dup, halves;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &halves); /* {0,2} and {1,3}: each spans both sites */
  if (rank == 0) {
    int a = 1, b = 2;
    MPI_Send(&a, 1, MPI_INT, 2, 60, dup);
    MPI_Send(&b, 1, MPI_INT, 2, 60, MPI_COMM_WORLD);
  } else if (rank == 2) {
    int a, b;
    MPI_Recv(&b, 1, MPI_INT, 0, 60, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&a, 1, MPI_INT, 0, 60, dup, MPI_STATUS_IGNORE);
    say("communicators: world got %d, dup got %d", b, a);
  }
  {
    int half_rank, value = rank, got;
    MPI_Status status;
    MPI_Comm_rank(halves, &half_rank);
    MPI_Sendrecv(&value, 1, MPI_INT, 1 - half_rank, 61, &got, 1, MPI_INT, MPI_ANY_SOURCE, 61, halves, &status);
    say("split: half rank %d got world rank %d from half rank %d", half_rank, got, status.MPI_SOURCE);
  }
  MPI_Comm_free(&halves);
  MPI_Comm_free(&dup);
}

static void exchanges(void) {
  int right = (rank + 1) % size, left = (rank + size - 1) % size, value = rank * 3, got = -1;
  MPI_Status status;
  MPI_Sendrecv(&value, 1, MPI_INT, right, 80, &got, 1, MPI_INT, left, 80, MPI_COMM_WORLD, &status);
  say("sendrecv ring: got %d from %d", got, status.MPI_SOURCE);
  value = rank * 5;
  MPI_Sendrecv_replace(&value, 1, MPI_INT, left, 81, right, 81, MPI_COMM_WORLD, &status);
  say("sendrecv_replace: now %d from %d", value, status.MPI_SOURCE);
}

static void modes(void) {
  if (rank == 0) {
    int value = 9, size_needed;
    char* attached;
    MPI_Pack_size(1, MPI_INT, MPI_COMM_WORLD, &size_needed);
    size_needed += MPI_BSEND_OVERHEAD;
    attached = malloc((size_t)size_needed);
    MPI_Buffer_attach(attached, size_needed);
    MPI_Bsend(&value, 1, MPI_INT, 3, 90, MPI_COMM_WORLD);
    MPI_Buffer_detach(&attached, &size_needed);
    free(attached);
    MPI_Barrier(MPI_COMM_WORLD); /* rank 3 has posted its receive for the ready send */
    value = 10;
    MPI_Rsend(&value, 1, MPI_INT, 3, 91, MPI_COMM_WORLD);
  } else if (rank == 3) {
    int a, b;
    MPI_Request request;
    MPI_Recv(&a, 1, MPI_INT, 0, 90, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Irecv(&b, 1, MPI_INT, 0, 91, MPI_COMM_WORLD, &request);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    say("modes: bsend %d, rsend %d", a, b);
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

static void collectives(void) {
  int sum = 0, root_value = rank == 0 ? 77 : 0;
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Bcast(&root_value, 1, MPI_INT, 0, MPI_COMM_WORLD);
  say("collectives: allreduce %d, bcast %d", sum, root_value);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 4) {
    if (rank == 0) fprintf(stderr, "run with 4 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  basic();
  MPI_Barrier(MPI_COMM_WORLD); /* stages never share messages */
  ordering();
  MPI_Barrier(MPI_COMM_WORLD); /* stages never share messages */
  wildcards();
  MPI_Barrier(MPI_COMM_WORLD); /* stages never share messages */
  selective();
  MPI_Barrier(MPI_COMM_WORLD); /* stages never share messages */
  synchronous();
  MPI_Barrier(MPI_COMM_WORLD); /* stages never share messages */
  probes();
  MPI_Barrier(MPI_COMM_WORLD); /* stages never share messages */
  persistent();
  MPI_Barrier(MPI_COMM_WORLD); /* stages never share messages */
  cancelling();
  MPI_Barrier(MPI_COMM_WORLD); /* stages never share messages */
  mixed();
  MPI_Barrier(MPI_COMM_WORLD); /* stages never share messages */
  datatypes();
  MPI_Barrier(MPI_COMM_WORLD); /* stages never share messages */
  communicators();
  MPI_Barrier(MPI_COMM_WORLD); /* stages never share messages */
  exchanges();
  MPI_Barrier(MPI_COMM_WORLD); /* stages never share messages */
  modes();
  MPI_Barrier(MPI_COMM_WORLD); /* stages never share messages */
  collectives();
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
