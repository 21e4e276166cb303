// What the interposed MPI C functions (interpose*.cpp) share: the front end while LongPipe is on,
// and the wrappers that keep exceptions out of C. Every interposed function costs a single branch
// while LongPipe is off (a one-site job, before MPI_Init, after MPI_Finalize); otherwise the front
// end routes it. No exception crosses into C: failures are reported on stderr and returned as
// MPI_ERR_INTERN (for sends, receives and Sendrecv also through the communicator's error handler).
//
// Under MPI_THREAD_MULTIPLE every function that reaches front-end state holds the ApiLock
// (`one_caller`, api_lock.h) while it runs, also for the fast-path checks (they read state another
// thread's call may change); the blocking Open MPI calls inside give it up while they wait.
#pragma once

#include <exception>
#include <optional>

#include "api_lock.h"
#include "collectives.h"
#include "front_end.h"

// An interposed function: C linkage, exported from liblongpipe.so (whose code is otherwise hidden).
#define LP_EXPORT extern "C" __attribute__((visibility("default")))

namespace lp::mpi {

// Defined in interpose.cpp: non-null while LongPipe carries this process's inter-site traffic.
extern FrontEnd* front_end;
extern SiteCollectives* collectives;  // with front_end: the collectives across sites (collectives.h)

// "liblongpipe: MPI rank R: <function>: <what>" on stderr.
void report(const char* function, const char* what);
// After PMPI_Init(_thread): starts LongPipe, or aborts the job with the reason (a bad LONGPIPE_*
// value must not silently run without LongPipe).
void start_front_end();

// The front end's answer to `call`, or nothing if it threw (reported on stderr): no exception
// crosses into C.
template <typename Call>
std::optional<int> attempt(const char* function, Call call) {
  try {
    return call(*front_end);
  } catch (const std::exception& e) {
    report(function, e.what());
  } catch (...) {
    report(function, "unknown error");
  }
  return std::nullopt;
}

template <typename Call>
int guarded(const char* function, Call call) {
  return attempt(function, call).value_or(MPI_ERR_INTERN);
}

// guarded() for a call on `comm`: a failure also goes through the communicator's error handler
// (MPI_ERRORS_ARE_FATAL aborts), and a nonblocking call leaves no request behind (*request null).
template <typename Call>
int guarded_on(MPI_Comm comm, const char* function, Call call, MPI_Request* request = nullptr) {
  if (const std::optional<int> rc = attempt(function, call)) return *rc;
  if (request) *request = MPI_REQUEST_NULL;
  PMPI_Comm_call_errhandler(comm, MPI_ERR_INTERN);
  return MPI_ERR_INTERN;
}

}  // namespace lp::mpi
