// The interposed PVM functions: what an unmodified PVM program calls once liblongpipe.so is
// preloaded. Each one serialises on one mutex (libpvm3 is not thread-safe either), starts the
// front end on first use, and never lets an exception cross into C: failures become PVM error
// codes, reported on stderr.
//
// pvm_psend and pvm_precv are not interposed: libpvm3 implements them with calls to pvm_send and
// pvm_recv through its PLT, which reach the functions below (PLATFORM.md; tests/pvm checks it).
#include <pthread.h>
#include <pvm3.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "front_end.h"
#include "lib_pvm.h"

namespace lp::pvm {
namespace {

enum class State {
  kNotStarted,  // before the first PVM call, and again after pvm_exit
  kRunning,
  kLeaving,     // inside libpvm3's pvm_exit, which calls pvm_nrecv itself
  kFailed,      // LongPipe could not start (bad LONGPIPE_* value, ...): PVM calls fail
  kDisabled,    // forked child: plain PVM
};

std::recursive_mutex call_mutex;
State state = State::kNotStarted;
std::unique_ptr<FrontEnd> front_end;
std::string failure_reason;

// In a forked child the task's PVM state (tid, pvmd socket) is the parent's, and the engine's
// thread is gone: the child uses libpvm3 directly (a child calling PVM is unusual anyway).
void after_fork_in_child() {
  if (front_end) {
    front_end->abandon_after_fork();
    (void)front_end.release();  // its engine belongs to the parent; leak rather than tear down
  }
  state = State::kDisabled;
}

void report_failure(const char* function, const std::string& reason) {
  std::fprintf(stderr, "liblongpipe: %s: %s\n", function, reason.c_str());
  std::fflush(stderr);
}

// The front end to use, starting it if needed; nullptr means "call libpvm3 directly". Returns
// nullptr and sets *error to a PVM error code if LongPipe failed to start.
FrontEnd* active_front_end(const char* function, int* error) {
  *error = 0;
  switch (state) {
    case State::kRunning:
      return front_end.get();
    case State::kLeaving:
    case State::kDisabled:
      return nullptr;
    case State::kFailed:
      *error = PvmSysErr;
      return nullptr;
    case State::kNotStarted:
      break;
  }
  static std::once_flag fork_handler;
  std::call_once(fork_handler, [] { pthread_atfork(nullptr, nullptr, after_fork_in_child); });
  const LibPvm& lib = LibPvm::get();
  const int tid = lib.mytid();
  if (tid < 0) {
    *error = tid;  // not enrolled (no pvmd): libpvm3 already said so
    return nullptr;
  }
  try {
    front_end = std::make_unique<FrontEnd>(lib, tid);
    state = State::kRunning;
    return front_end.get();
  } catch (const std::exception& e) {
    failure_reason = e.what();
  } catch (...) {
    failure_reason = "unknown error";
  }
  state = State::kFailed;
  report_failure(function, "LongPipe cannot start: " + failure_reason +
                               "; PVM calls of this task fail with PvmSysErr instead of bypassing LongPipe");
  *error = PvmSysErr;
  return nullptr;
}

// Runs `with_front_end(FrontEnd&)` if LongPipe is active, `plain()` if LongPipe is off here.
template <typename WithFrontEnd, typename Plain>
int interpose(const char* function, WithFrontEnd with_front_end, Plain plain) {
  std::lock_guard lock(call_mutex);
  try {
    int error = 0;
    FrontEnd* fe = active_front_end(function, &error);
    if (error < 0) return error;
    return fe ? with_front_end(*fe) : plain(LibPvm::get());
  } catch (const std::exception& e) {
    report_failure(function, e.what());
  } catch (...) {
    report_failure(function, "unknown error");
  }
  return PvmSysErr;
}

}  // namespace
}  // namespace lp::pvm

using lp::pvm::FrontEnd;
using lp::pvm::interpose;
using lp::pvm::LibPvm;

extern "C" {

__attribute__((visibility("default"))) int pvm_mytid() {
  return interpose("pvm_mytid", [](FrontEnd& fe) { return fe.tid(); }, [](const LibPvm& lib) { return lib.mytid(); });
}

__attribute__((visibility("default"))) int pvm_send(int tid, int tag) {
  return interpose("pvm_send", [&](FrontEnd& fe) { return fe.send(tid, tag); },
                   [&](const LibPvm& lib) { return lib.send(tid, tag); });
}

__attribute__((visibility("default"))) int pvm_mcast(int* tids, int count, int tag) {
  return interpose("pvm_mcast", [&](FrontEnd& fe) { return fe.mcast(tids, count, tag); },
                   [&](const LibPvm& lib) { return lib.mcast(tids, count, tag); });
}

__attribute__((visibility("default"))) int pvm_recv(int tid, int tag) {
  return interpose("pvm_recv", [&](FrontEnd& fe) { return fe.receive(tid, tag, nullptr); },
                   [&](const LibPvm& lib) { return lib.recv(tid, tag); });
}

__attribute__((visibility("default"))) int pvm_trecv(int tid, int tag, struct timeval* timeout) {
  return interpose("pvm_trecv", [&](FrontEnd& fe) { return fe.receive(tid, tag, timeout); },
                   [&](const LibPvm& lib) { return lib.trecv(tid, tag, timeout); });
}

__attribute__((visibility("default"))) int pvm_nrecv(int tid, int tag) {
  return interpose("pvm_nrecv", [&](FrontEnd& fe) { return fe.nrecv(tid, tag); },
                   [&](const LibPvm& lib) { return lib.nrecv(tid, tag); });
}

__attribute__((visibility("default"))) int pvm_probe(int tid, int tag) {
  return interpose("pvm_probe", [&](FrontEnd& fe) { return fe.probe(tid, tag); },
                   [&](const LibPvm& lib) { return lib.probe(tid, tag); });
}

__attribute__((visibility("default"))) int pvm_spawn(char* file, char** argv, int flags, char* where, int count,
                                                     int* tids) {
  return interpose(
      "pvm_spawn",
      [&](FrontEnd& fe) { return fe.spawn(file, argv, flags, where, count, tids); },
      [&](const LibPvm& lib) { return lib.spawn(file, argv, flags, where, count, tids); });
}

__attribute__((visibility("default"))) int pvm_exit() {
  using lp::pvm::State;
  std::lock_guard lock(lp::pvm::call_mutex);
  const LibPvm& lib = LibPvm::get();
  if (lp::pvm::state != State::kRunning) {
    if (lp::pvm::state == State::kFailed) lp::pvm::state = State::kNotStarted;  // may enrol again
    return lib.exit();
  }
  try {
    lp::pvm::front_end->leave();
  } catch (const std::exception& e) {
    lp::pvm::report_failure("pvm_exit", e.what());
  }
  lp::pvm::front_end.reset();
  lp::pvm::state = State::kLeaving;
  const int cc = lib.exit();
  lp::pvm::state = State::kNotStarted;
  return cc;
}

}  // extern "C"
