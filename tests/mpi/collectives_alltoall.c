/* collectives_alltoall.c: the MPI_Alltoall, MPI_Alltoallv and MPI_Alltoallw cases of the exchange
 * test program (collectives_exchange.c says how it runs). */
#include <mpi.h>
#include <stddef.h>

#include "collectives_exchange.h"

void alltoall_tests(const char* name, MPI_Comm comm, int rank, int size, struct placement p) {
  /* Two ints per pair of ranks. */
  int send[2 * kMaxRanks] = {0}, receive[2 * kMaxRanks];
  for (int d = 0; d < size; ++d) {
    for (int j = 0; j < 2; ++j) send[2 * d + j] = 1000 * rank + 10 * d + j, receive[2 * d + j] = -1;
  }
  MPI_Alltoall(send, 2, MPI_INT, receive, 2, MPI_INT, comm);
  expect(kAlltoall, p.spans);
  say("%s: alltoall:", name);
  say_ints(receive, 2 * size);
  for (int s = 0; s < size; ++s) {
    check(receive[2 * s] == 1000 * s + 10 * rank && receive[2 * s + 1] == 1000 * s + 10 * rank + 1, name,
          "alltoall: wrong block", rank);
  }

  /* MPI_IN_PLACE. */
  int in_place[3 * kMaxRanks];
  for (int d = 0; d < size; ++d) {
    for (int j = 0; j < 3; ++j) in_place[3 * d + j] = 100 * rank + d - 7 * j;
  }
  MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, in_place, 3, MPI_INT, comm);
  expect(kAlltoall, p.spans);
  say("%s: alltoall in place:", name);
  say_ints(in_place, 3 * size);

  /* Derived types: a vector with holes sent, plain ints received; and the other way round (the
   * holes of the receive buffer keep what was there). */
  MPI_Datatype holes; /* elements 0 and 3 of 4 ints */
  MPI_Type_vector(2, 1, 3, MPI_INT, &holes);
  MPI_Type_commit(&holes);
  int spread[4 * kMaxRanks], packed[2 * kMaxRanks];
  for (int i = 0; i < 4 * size; ++i) spread[i] = rank * 100 + i;
  MPI_Alltoall(spread, 1, holes, packed, 2, MPI_INT, comm);
  expect(kAlltoall, p.spans);
  say("%s: alltoall from a vector type:", name);
  say_ints(packed, 2 * size);
  for (int i = 0; i < 2 * size; ++i) packed[i] = rank * 1000 + i;
  for (int i = 0; i < 4 * size; ++i) spread[i] = -7;
  MPI_Alltoall(packed, 2, MPI_INT, spread, 1, holes, comm);
  expect(kAlltoall, p.spans);
  say("%s: alltoall into a vector type:", name);
  say_ints(spread, 4 * size);
  MPI_Type_free(&holes);

  /* Alltoallv: uneven counts (some zero), blocks out of order with gaps that must stay untouched. */
  int send_counts[kMaxRanks], send_displacements[kMaxRanks], receive_counts[kMaxRanks], receive_displacements[kMaxRanks];
  int position = 0;
  for (int d = size - 1; d >= 0; --d) {
    send_counts[d] = (rank + 2 * d) % 3;
    send_displacements[d] = position;
    position += send_counts[d] + 1;
  }
  int send_v[4 * kMaxRanks], receive_v[4 * kMaxRanks];
  for (int d = 0; d < size; ++d) {
    for (int j = 0; j < send_counts[d]; ++j) send_v[send_displacements[d] + j] = 10000 * rank + 100 * d + j;
  }
  position = 1;
  for (int s = 0; s < size; ++s) {
    receive_counts[s] = (s + 2 * rank) % 3;
    receive_displacements[s] = position;
    position += receive_counts[s] + 2;
  }
  const int receive_used = position;
  for (int i = 0; i < receive_used; ++i) receive_v[i] = -1;
  MPI_Alltoallv(send_v, send_counts, send_displacements, MPI_INT, receive_v, receive_counts, receive_displacements,
                MPI_INT, comm);
  expect(kAlltoallv, p.spans);
  say("%s: alltoallv:", name);
  say_ints(receive_v, receive_used);
  for (int s = 0; s < size; ++s) {
    for (int j = 0; j < receive_counts[s]; ++j) {
      check(receive_v[receive_displacements[s] + j] == 10000 * s + 100 * rank + j, name, "alltoallv: wrong block", rank);
    }
  }

  /* Alltoallv of exact doubles. */
  double send_d[4 * kMaxRanks], receive_d[4 * kMaxRanks];
  for (int d = 0; d < size; ++d) {
    for (int j = 0; j < send_counts[d]; ++j) send_d[send_displacements[d] + j] = rank + d / 8.0 + j / 64.0;
  }
  for (int i = 0; i < receive_used; ++i) receive_d[i] = -0.5;
  MPI_Alltoallv(send_d, send_counts, send_displacements, MPI_DOUBLE, receive_d, receive_counts, receive_displacements,
                MPI_DOUBLE, comm);
  expect(kAlltoallv, p.spans);
  say("%s: alltoallv doubles:", name);
  for (int i = 0; i < receive_used; ++i) say(" %016llx", bits(receive_d[i]));
  say("\n");

  /* Alltoallv of a struct with padding: (rank + peer) % 2 + 1 pairs each way. */
  struct pair send_p[2 * kMaxRanks], receive_p[2 * kMaxRanks];
  int pair_counts[kMaxRanks], pair_displacements[kMaxRanks];
  for (int d = 0; d < size; ++d) {
    pair_counts[d] = (rank + d) % 2 + 1;
    pair_displacements[d] = 2 * d;
    for (int j = 0; j < 2; ++j) {
      send_p[2 * d + j].key = rank * 100 + d * 10 + j;
      send_p[2 * d + j].value = rank - d / 4.0 - j;
      receive_p[2 * d + j].key = -1;
      receive_p[2 * d + j].value = -1.0;
    }
  }
  MPI_Alltoallv(send_p, pair_counts, pair_displacements, pair_type, receive_p, pair_counts, pair_displacements,
                pair_type, comm);
  expect(kAlltoallv, p.spans);
  say("%s: alltoallv struct:", name);
  for (int i = 0; i < 2 * size; ++i) say(" %d/%016llx", receive_p[i].key, bits(receive_p[i].value));
  say("\n");

  /* Alltoallv MPI_IN_PLACE: the counts must be symmetric, (rank + peer) % 3. */
  int in_place_v[4 * kMaxRanks];
  position = 0;
  for (int s = 0; s < size; ++s) {
    receive_counts[s] = (rank + s) % 3;
    receive_displacements[s] = position;
    for (int j = 0; j < receive_counts[s]; ++j) in_place_v[position + j] = 500 * rank + 20 * s + j;
    in_place_v[position + receive_counts[s]] = -3; /* a gap */
    position += receive_counts[s] + 1;
  }
  MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, in_place_v, receive_counts, receive_displacements,
                MPI_INT, comm);
  expect(kAlltoallv, p.spans);
  say("%s: alltoallv in place:", name);
  say_ints(in_place_v, position);
}

/* Alltoallw: a datatype per peer and displacements in bytes. Blocks for even peers are plain ints,
 * for odd peers a vector with holes on the sending side and ints on the receiving side (the type
 * signatures match, the layouts differ); counts (rank + peer) % 3, some zero; gaps untouched. */
void alltoallw_tests(const char* name, MPI_Comm comm, int rank, int size, struct placement p) {
  MPI_Datatype holes; /* elements 0 and 2 of 3 ints: two ints */
  MPI_Type_vector(2, 1, 2, MPI_INT, &holes);
  MPI_Type_commit(&holes);
  int send_counts[kMaxRanks], send_displacements[kMaxRanks], receive_counts[kMaxRanks], receive_displacements[kMaxRanks];
  MPI_Datatype send_types[kMaxRanks], receive_types[kMaxRanks];
  int send[8 * kMaxRanks], receive[8 * kMaxRanks];
  int position = 0, receive_position = 0;
  for (int peer = 0; peer < size; ++peer) {
    const int blocks = (rank + peer) % 3;
    const int odd = peer % 2;
    send_types[peer] = odd ? holes : MPI_INT;
    send_counts[peer] = odd ? blocks : 2 * blocks; /* two ints per block either way */
    send_displacements[peer] = position * (int)sizeof(int);
    for (int b = 0; b < blocks; ++b) {
      for (int j = 0; j < 2; ++j) send[position + (odd ? 3 * b + 2 * j : 2 * b + j)] = 10000 * rank + 100 * peer + 2 * b + j;
      if (odd) send[position + 3 * b + 1] = -99; /* a hole: never sent */
    }
    position += (odd ? 3 : 2) * blocks + 1;
    receive_types[peer] = MPI_INT;
    receive_counts[peer] = 2 * ((peer + rank) % 3);
    receive_displacements[peer] = (receive_position + 1) * (int)sizeof(int);
    receive_position += receive_counts[peer] + 2;
  }
  for (int i = 0; i < receive_position; ++i) receive[i] = -1;
  MPI_Alltoallw(send, send_counts, send_displacements, send_types, receive, receive_counts, receive_displacements,
                receive_types, comm);
  expect(kAlltoallw, p.spans);
  say("%s: alltoallw:", name);
  say_ints(receive, receive_position);
  for (int source = 0; source < size; ++source) {
    const int* block = receive + receive_displacements[source] / (int)sizeof(int);
    for (int k = 0; k < receive_counts[source]; ++k) {
      check(block[k] == 10000 * source + 100 * rank + k, name, "alltoallw: wrong element", rank);
    }
    check(block[-1] == -1, name, "alltoallw: a gap was written", rank);
  }

  /* MPI_IN_PLACE: the receive side describes both; counts must then be symmetric ((rank + peer) % 3). */
  int in_place[4 * kMaxRanks];
  position = 0;
  for (int peer = 0; peer < size; ++peer) {
    receive_counts[peer] = (rank + peer) % 3;
    receive_displacements[peer] = position * (int)sizeof(int);
    receive_types[peer] = MPI_INT;
    for (int j = 0; j < receive_counts[peer]; ++j) in_place[position + j] = 700 * rank + 30 * peer + j;
    in_place[position + receive_counts[peer]] = -3;
    position += receive_counts[peer] + 1;
  }
  MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, in_place, receive_counts, receive_displacements, receive_types, comm);
  expect(kAlltoallw, p.spans);
  say("%s: alltoallw in place:", name);
  say_ints(in_place, position);
  for (int peer = 0; peer < size; ++peer) {
    const int* block = in_place + receive_displacements[peer] / (int)sizeof(int);
    for (int j = 0; j < receive_counts[peer]; ++j) {
      check(block[j] == 700 * peer + 30 * rank + j, name, "alltoallw in place: wrong element", rank);
    }
  }
  MPI_Type_free(&holes);
}
