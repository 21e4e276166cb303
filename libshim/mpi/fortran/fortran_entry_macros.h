// The macros that define a Fortran entry point in every name Open MPI's Fortran bindings export
// (fortran_entry_points.cpp, fortran_neighbor.cpp).
#pragma once

#include "fortran_arguments.h"

// Parameter lists by number of Fortran arguments before `ierror`: every one is a reference, so each
// is a pointer whatever its Fortran type (the x86-64 and AArch64 calling conventions pass them alike).
#define LP_F_P0
#define LP_F_P1 void* a1,
#define LP_F_P2 LP_F_P1 void* a2,
#define LP_F_P3 LP_F_P2 void* a3,
#define LP_F_P4 LP_F_P3 void* a4,
#define LP_F_P5 LP_F_P4 void* a5,
#define LP_F_P6 LP_F_P5 void* a6,
#define LP_F_P7 LP_F_P6 void* a7,
#define LP_F_P8 LP_F_P7 void* a8,
#define LP_F_P9 LP_F_P8 void* a9,
#define LP_F_P10 LP_F_P9 void* a10,
#define LP_F_P12 LP_F_P10 void* a11, void* a12,
#define LP_F_A0
#define LP_F_A1 a1
#define LP_F_A2 LP_F_A1, a2
#define LP_F_A3 LP_F_A2, a3
#define LP_F_A4 LP_F_A3, a4
#define LP_F_A5 LP_F_A4, a5
#define LP_F_A6 LP_F_A5, a6
#define LP_F_A7 LP_F_A6, a7
#define LP_F_A8 LP_F_A7, a8
#define LP_F_A9 LP_F_A8, a9
#define LP_F_A10 LP_F_A9, a10
#define LP_F_A12 LP_F_A10, a11, a12

#define LP_F_ALIAS(name, target, n) \
  extern "C" void name(LP_F_P##n void* ierror) __attribute__((alias(#target), visibility("default")));

// One Fortran call: `lower` and `UPPER` name it, `function` is the C function (or adapter) it runs,
// `n` its number of Fortran arguments before ierror (checked against the C signature).
#define LP_FORTRAN_CALL(lower, UPPER, function, n)                                                     \
  extern "C" __attribute__((visibility("default"))) void mpi_##lower##_(LP_F_P##n void* ierror) {      \
    using Call = lp::mpi_fortran::FortranCall<&function>;                                              \
    static_assert(Call::arity == n, #function ": the table's argument count is wrong");                \
    Call::run({LP_F_A##n}, ierror);                                                                    \
  }                                                                                                    \
  LP_F_ALIAS(mpi_##lower, mpi_##lower##_, n)                                                           \
  LP_F_ALIAS(mpi_##lower##__, mpi_##lower##_, n)                                                       \
  LP_F_ALIAS(MPI_##UPPER, mpi_##lower##_, n)                                                           \
  LP_F_ALIAS(mpi_##lower##_f08_, mpi_##lower##_, n)

// The same for a C MPI function the C front end interposes (liblongpipe.so's own).
#define LP_FORTRAN_MPI(lower, UPPER, function, n) LP_FORTRAN_CALL(lower, UPPER, function, n)
