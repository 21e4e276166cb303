// The MPI API as the front end uses it: Open MPI's mpi.h (C only), with every PMPI_* function and
// ompi_* object it uses found in the process at run time (libmpi_names.h, libmpi_symbols.h).
//
// liblongpipe.so does not link libmpi: it is also preloaded into programs without MPI (PVM
// programs, /bin/true), where nothing is looked up because MPI_Init is never called, and into
// programs that load libmpi only later with dlopen (Python's mpi4py), where symbols bound when the
// library loaded would be null. tests/mpi checks that the library has no undefined libmpi symbol
// (`mpi.front-end.loads-without-mpi`) and runs mpi4py under the preload (`mpi.front-end.mpi4py`).
#pragma once

#include "libmpi_names.h"
