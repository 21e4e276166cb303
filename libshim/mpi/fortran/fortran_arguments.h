// How one argument of a Fortran MPI call becomes the argument of the C call, and back.
//
// Every argument of an mpif.h / `use mpi` / `use mpi_f08` call arrives by reference. Argument<C>
// is built from that reference for the C parameter type C: integers are read, handles converted with
// MPI_*_f2c, Fortran sentinels (MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE) mapped to C's, and
// output parameters (handles, statuses) point at a C temporary that write_back() converts into the
// Fortran variable once the call has succeeded. FortranCall<&MPI_Xxx> does this for a whole call,
// from the C function's own signature: the table in fortran_entry_points.cpp needs no per-call code.
#pragma once

#include "mpi_for_fortran.h"

#include <array>
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

namespace lp::mpi_fortran {

// True if `address` is the Fortran sentinel `sentinel` (mpi_for_fortran.h).
inline bool is_sentinel(const void* address, const MPI_Fint* sentinel) { return address == sentinel; }

// Fortran handle <-> C handle: one pair of functions per handle type, Open MPI's (found at run time,
// mpi_for_fortran.h) except for requests and messages, whose conversions the C front end interposes
// (its own handles).
template <class Handle>
struct HandleConversion;  // not defined: not a handle

#define LP_FORTRAN_HANDLE(Type, Name)                                       \
  template <>                                                               \
  struct HandleConversion<Type> {                                           \
    static Type f2c(MPI_Fint fortran) { return MPI_##Name##_f2c(fortran); } \
    static MPI_Fint c2f(Type handle) { return MPI_##Name##_c2f(handle); }   \
  };
LP_FORTRAN_HANDLE(MPI_Comm, Comm)
LP_FORTRAN_HANDLE(MPI_Datatype, Type)
LP_FORTRAN_HANDLE(MPI_Group, Group)
LP_FORTRAN_HANDLE(MPI_Request, Request)
LP_FORTRAN_HANDLE(MPI_Message, Message)
LP_FORTRAN_HANDLE(MPI_Info, Info)
LP_FORTRAN_HANDLE(MPI_Op, Op)
#undef LP_FORTRAN_HANDLE

template <class Handle>
concept FortranHandle = requires(MPI_Fint fortran) { HandleConversion<Handle>::f2c(fortran); };

template <FortranHandle Handle>
Handle handle_f2c(MPI_Fint fortran) {
  return HandleConversion<Handle>::f2c(fortran);
}
template <FortranHandle Handle>
MPI_Fint handle_c2f(Handle handle) {
  return HandleConversion<Handle>::c2f(handle);
}

// The general case: a C parameter of type C from the Fortran reference `fortran`.
template <class C>
class Argument;

// INTEGER in: read.
template <>
class Argument<int> {
 public:
  explicit Argument(void* fortran) : value_(*static_cast<MPI_Fint*>(fortran)) {}
  int c() const { return value_; }
  void write_back() {}

 private:
  int value_;
};

// INTEGER or LOGICAL out (counts, flags, `provided`): the same storage (MPI_Fint is int; Open MPI's
// gfortran LOGICAL is a 4-byte integer with .TRUE. = 1, which is what C's flags hold).
static_assert(std::is_same_v<MPI_Fint, int>, "MPI_Fint must be C int for pass-through outputs");
template <>
class Argument<int*> {
 public:
  explicit Argument(void* fortran) : fortran_(static_cast<MPI_Fint*>(fortran)) {}
  int* c() const { return fortran_; }
  void write_back() {}

 private:
  MPI_Fint* fortran_;
};

// INTEGER or LOGICAL array in (dims, periods, graph edges): the same storage.
template <>
class Argument<const int*> {
 public:
  explicit Argument(void* fortran) : fortran_(static_cast<const MPI_Fint*>(fortran)) {}
  const int* c() const { return fortran_; }
  void write_back() {}

 private:
  const MPI_Fint* fortran_;
};

// The weights of a distributed graph: an INTEGER array, or the sentinels MPI_UNWEIGHTED and
// MPI_WEIGHTS_EMPTY. (Its own type, so that the adapters can tell it from other INTEGER arrays.)
struct GraphWeights {
  const int* c;
};
template <>
class Argument<GraphWeights> {
 public:
  explicit Argument(void* fortran)
      : weights_{is_sentinel(fortran, &mpi_fortran_unweighted_)       ? MPI_UNWEIGHTED
                 : is_sentinel(fortran, &mpi_fortran_weights_empty_) ? MPI_WEIGHTS_EMPTY
                                                                      : static_cast<const int*>(fortran)} {}
  GraphWeights c() const { return weights_; }
  void write_back() {}

 private:
  GraphWeights weights_;
};

// An array of datatype handles (Alltoallw): INTEGER handles, converted by the adapter, which knows
// how many there are. (Its own type, so that the adapters can tell it from INTEGER arrays.)
struct FortranTypes {
  const MPI_Fint* handles;
};
template <>
class Argument<FortranTypes> {
 public:
  explicit Argument(void* fortran) : types_{static_cast<const MPI_Fint*>(fortran)} {}
  FortranTypes c() const { return types_; }
  void write_back() {}

 private:
  FortranTypes types_;
};

// Choice buffer: the address itself, except the sentinels MPI_BOTTOM and MPI_IN_PLACE.
template <class Pointer>
  requires std::is_same_v<Pointer, void*> || std::is_same_v<Pointer, const void*>
class Argument<Pointer> {
 public:
  explicit Argument(void* fortran)
      : buffer_(is_sentinel(fortran, &mpi_fortran_bottom_)     ? MPI_BOTTOM
                : is_sentinel(fortran, &mpi_fortran_in_place_) ? MPI_IN_PLACE
                                                              : fortran) {}
  void* c() const { return buffer_; }
  void write_back() {}

 private:
  void* buffer_;
};

// Handle in: converted.
template <FortranHandle Handle>
class Argument<Handle> {
 public:
  explicit Argument(void* fortran) : handle_(handle_f2c<Handle>(*static_cast<MPI_Fint*>(fortran))) {}
  Handle c() const { return handle_; }
  void write_back() {}

 private:
  Handle handle_;
};

// Handle in and out (a request to wait on, a communicator to free, a new communicator).
template <FortranHandle Handle>
class Argument<Handle*> {
 public:
  explicit Argument(void* fortran)
      : fortran_(static_cast<MPI_Fint*>(fortran)), handle_(handle_f2c<Handle>(*fortran_)) {}
  Handle* c() { return &handle_; }
  void write_back() { *fortran_ = handle_c2f(handle_); }

 private:
  MPI_Fint* fortran_;
  Handle handle_;
};

// Status out: MPI_STATUS_IGNORE, or a C status converted into the Fortran array afterwards.
template <>
class Argument<MPI_Status*> {
 public:
  explicit Argument(void* fortran)
      : fortran_(is_sentinel(fortran, &mpi_fortran_status_ignore_) ? nullptr : static_cast<MPI_Fint*>(fortran)) {}
  MPI_Status* c() { return fortran_ ? &status_ : MPI_STATUS_IGNORE; }
  void write_back() {
    if (fortran_) MPI_Status_c2f(&status_, fortran_);
  }

 private:
  MPI_Fint* fortran_;
  MPI_Status status_{};
};

// Status in (Get_count, Get_elements, Test_cancelled).
template <>
class Argument<const MPI_Status*> {
 public:
  explicit Argument(void* fortran) { MPI_Status_f2c(static_cast<const MPI_Fint*>(fortran), &status_); }
  const MPI_Status* c() const { return &status_; }
  void write_back() {}

 private:
  MPI_Status status_{};
};

// Stores a C return code into the Fortran `ierror`, which `use mpi_f08` lets a program omit.
inline void set_error(void* ierror, int code) {
  if (ierror) *static_cast<MPI_Fint*>(ierror) = code;
}

// A whole call: the C function Function, called with the converted Fortran references.
template <auto Function>
struct FortranCall;

template <class... C, int (*Function)(C...)>
struct FortranCall<Function> {
  static constexpr std::size_t arity = sizeof...(C);

  static void run(const std::array<void*, arity>& fortran, void* ierror) {
    run(fortran, ierror, std::index_sequence_for<C...>{});
  }

 private:
  template <std::size_t... I>
  static void run(const std::array<void*, arity>& fortran, void* ierror, std::index_sequence<I...>) {
    std::tuple<Argument<C>...> arguments{fortran[I]...};
    const int code = Function(std::get<I>(arguments).c()...);
    // Out-parameters keep their Fortran value when the call fails, as in Open MPI's own bindings.
    if (code == MPI_SUCCESS) (std::get<I>(arguments).write_back(), ...);
    set_error(ierror, code);
  }
};

}  // namespace lp::mpi_fortran
