// Open MPI's functions and objects as liblongpipe.so reaches them: each looked up in the process
// the first time it is used, wherever libmpi came from.
//
// liblongpipe.so does not link libmpi (it is also preloaded into PVM programs and /bin/true), so
// it cannot bind libmpi's symbols when it is loaded. A program may also bring libmpi in only later,
// with dlopen: Python's mpi4py, Julia, R, plugins. Hence no reference to a libmpi symbol is left to
// the dynamic linker; every use goes through a pointer that starts out at a resolver:
//  - LP_LIBMPI_FUNCTION(PMPI_Send): a function pointer, first pointing at a stub that looks the
//    function up, stores it and calls it; afterwards one indirect call, as through a PLT.
//  - LP_LIBMPI_OBJECT(ompi_mpi_comm_world): a reference to the object (a predefined handle is its
//    address), looked up on first use; afterwards one load and a test.
// The lookup (libmpi_symbols.cpp) asks the global scope first (dlsym(RTLD_DEFAULT): also the
// executable's copy of an object, which is the one libmpi itself uses), then the libmpi.so object
// loaded in the process even if it is not global (a dlopen with RTLD_LOCAL). A symbol found nowhere
// aborts the process with a message naming it. Nothing is looked up before its first use, so
// never while libraries load.
//
// mpi_api.h and fortran/mpi_for_fortran.h map the names the code uses onto these (one #define per
// symbol); tests/mpi checks that liblongpipe.so has no undefined libmpi symbol left.
#pragma once

#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <atomic>
#include <cstddef>

#include "api_lock.h"

namespace lp::libmpi {

// A symbol's name as a template argument.
template <std::size_t N>
struct SymbolName {
  constexpr SymbolName(const char (&text)[N]) {  // NOLINT: implicit, from the string literal
    for (std::size_t i = 0; i < N; ++i) chars[i] = text[i];
  }
  char chars[N];
};

// The address of the symbol `name` in the process (global scope first, then the loaded libmpi).
// Never null: a symbol found nowhere is reported on stderr and the process aborts.
void* find(const char* name) noexcept;

template <SymbolName name, class Pointer>
struct LazyFunction;

template <SymbolName name, class Result, class... Arguments>
struct __attribute__((visibility("hidden"))) LazyFunction<name, Result (*)(Arguments...)> {
  using Pointer = Result (*)(Arguments...);
  static Result first_call(Arguments... arguments) {
    const auto function = reinterpret_cast<Pointer>(find(name.chars));
    pointer.store(function, std::memory_order_relaxed);  // racing threads store the same value
    return function(arguments...);
  }
  static inline std::atomic<Pointer> pointer{&first_call};
};

// A function that can wait for another process or thread: called without the front end's ApiLock
// (api_lock.h), which it takes back before it returns.
template <SymbolName name, class Pointer>
struct LazyBlockingFunction;

template <SymbolName name, class Result, class... Arguments>
struct __attribute__((visibility("hidden"))) LazyBlockingFunction<name, Result (*)(Arguments...)> {
  static Result call(Arguments... arguments) {
    const ::lp::mpi::ApiLock::Unheld others_may_call;
    return LazyFunction<name, Result (*)(Arguments...)>::pointer.load(std::memory_order_relaxed)(arguments...);
  }
};

template <SymbolName name, class Object>
struct __attribute__((visibility("hidden"))) LazyObject {
  static Object& get() {
    Object* object = address.load(std::memory_order_relaxed);
    if (object == nullptr) [[unlikely]] {
      object = static_cast<Object*>(find(name.chars));
      address.store(object, std::memory_order_relaxed);
    }
    return *object;
  }
  static inline std::atomic<Object*> address{nullptr};
};

}  // namespace lp::libmpi

// `#define PMPI_Send LP_LIBMPI_FUNCTION(PMPI_Send)`: the name inside is not expanded again, so it
// names the declaration in mpi.h (for the type) and the symbol (for the lookup).
#define LP_LIBMPI_FUNCTION(symbol) \
  (::lp::libmpi::LazyFunction<#symbol, decltype(&::symbol)>::pointer.load(std::memory_order_relaxed))
#define LP_LIBMPI_BLOCKING_FUNCTION(symbol) (&::lp::libmpi::LazyBlockingFunction<#symbol, decltype(&::symbol)>::call)
#define LP_LIBMPI_OBJECT(symbol) (::lp::libmpi::LazyObject<#symbol, decltype(::symbol)>::get())
