// mpi.h for the Fortran entry points: C declarations only (no C++ bindings), no libmpi link.
#pragma once

#define OMPI_SKIP_MPICXX 1
#include <mpi.h>
