// mpi.h for the Fortran entry points: C declarations only (no C++ bindings), no libmpi link. The
// libmpi functions and objects they use themselves (handle and status conversions, Get_count and
// Get_elements, communicator sizes, the Fortran sentinels) are found at run time, as the C front end's are
// (../libmpi_symbols.h). The MPI_* functions the C front end interposes (MPI_Send, MPI_Request_f2c...)
// are liblongpipe.so's own and are called directly.
#pragma once

#include "libmpi_symbols.h"

// The Fortran sentinels: common blocks that libmpi defines (and a Fortran program's own copy, where
// it has one, which the global-scope lookup finds first).
extern "C" {
extern MPI_Fint mpi_fortran_bottom_;
extern MPI_Fint mpi_fortran_in_place_;
extern MPI_Fint mpi_fortran_status_ignore_;
extern MPI_Fint mpi_fortran_statuses_ignore_;
extern MPI_Fint mpi_fortran_unweighted_;
extern MPI_Fint mpi_fortran_weights_empty_;
}

#define mpi_fortran_bottom_ LP_LIBMPI_OBJECT(mpi_fortran_bottom_)
#define mpi_fortran_in_place_ LP_LIBMPI_OBJECT(mpi_fortran_in_place_)
#define mpi_fortran_status_ignore_ LP_LIBMPI_OBJECT(mpi_fortran_status_ignore_)
#define mpi_fortran_statuses_ignore_ LP_LIBMPI_OBJECT(mpi_fortran_statuses_ignore_)
#define mpi_fortran_unweighted_ LP_LIBMPI_OBJECT(mpi_fortran_unweighted_)
#define mpi_fortran_weights_empty_ LP_LIBMPI_OBJECT(mpi_fortran_weights_empty_)

#define MPI_Comm_f2c LP_LIBMPI_FUNCTION(MPI_Comm_f2c)
#define MPI_Comm_c2f LP_LIBMPI_FUNCTION(MPI_Comm_c2f)
#define MPI_Type_f2c LP_LIBMPI_FUNCTION(MPI_Type_f2c)
#define MPI_Type_c2f LP_LIBMPI_FUNCTION(MPI_Type_c2f)
#define MPI_Group_f2c LP_LIBMPI_FUNCTION(MPI_Group_f2c)
#define MPI_Group_c2f LP_LIBMPI_FUNCTION(MPI_Group_c2f)
#define MPI_Info_f2c LP_LIBMPI_FUNCTION(MPI_Info_f2c)
#define MPI_Info_c2f LP_LIBMPI_FUNCTION(MPI_Info_c2f)
#define MPI_Op_f2c LP_LIBMPI_FUNCTION(MPI_Op_f2c)
#define MPI_Op_c2f LP_LIBMPI_FUNCTION(MPI_Op_c2f)
#define MPI_Status_f2c LP_LIBMPI_FUNCTION(MPI_Status_f2c)
#define MPI_Status_c2f LP_LIBMPI_FUNCTION(MPI_Status_c2f)
#define MPI_Comm_test_inter LP_LIBMPI_FUNCTION(MPI_Comm_test_inter)
#define MPI_Comm_size LP_LIBMPI_FUNCTION(MPI_Comm_size)
#define MPI_Comm_remote_size LP_LIBMPI_FUNCTION(MPI_Comm_remote_size)
#define MPI_Get_count LP_LIBMPI_FUNCTION(MPI_Get_count)
#define MPI_Get_elements LP_LIBMPI_FUNCTION(MPI_Get_elements)
