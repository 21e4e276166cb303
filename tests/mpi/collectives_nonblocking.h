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
