/* collectives_nonblocking.h: what the parts of the collectives_nonblocking program share. */
#pragma once

#include <mpi.h>

/* Appends a line to this rank's transcript (collectives_nonblocking.c). */
void say(const char* format, ...);
/* Counts a failed check and reports it on stderr. */
void check(int ok, const char* what);

/* MPI_Ireduce, MPI_Igather, MPI_Iscatter(v), MPI_Iallgather(v), MPI_Ialltoall,
 * MPI_Ireduce_scatter(_block) (collectives_nonblocking_data.c). */
void nonblocking_data(MPI_Comm dup, MPI_Comm half);
/* MPI_Igatherv, MPI_Ialltoallv, MPI_Ialltoallw, MPI_Iscan, MPI_Iexscan (collectives_nonblocking_vector.c);
 * `by_site`: the world's ranks ordered by site. */
void nonblocking_vector(MPI_Comm dup, MPI_Comm half, MPI_Comm by_site);

enum { kRequests = 12 };
/* The ways collectives_nonblocking.c completes requests: complete() uses the one named. */
enum Completion { kWaitall, kTestLoop, kWaitany, kWaitsome, kTestall, kTestany, kTestsome, kGetStatus, kCompletions };
extern const char* const completion_names[kCompletions];
/* Completes `count` requests (at most kRequests) the way `how` names; each must be freed. */
void complete(enum Completion how, int count, MPI_Request* requests);
