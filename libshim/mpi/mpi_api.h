// The MPI API as the front end uses it: Open MPI's mpi.h (C only) with every PMPI_* function and
// ompi_* object it references made weak.
//
// liblongpipe.so is also preloaded into programs without libmpi (PVM programs, /bin/true): there
// these references resolve to null instead of failing to load (also with LD_BIND_NOW), and nothing
// uses them because MPI_Init is never called. In an MPI program the dynamic linker binds them to
// libmpi's definitions as usual. tests/mpi checks that the library has no strong undefined MPI
// symbol (`mpi.loads-without-mpi`).
#pragma once

#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include "mpi_weak_symbols.h"
