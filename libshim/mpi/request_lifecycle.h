// RequestLifecycle: the states of one LongPipe request and the rules that move it between them,
// MPI-free. FrontEnd's request (front_end_request.h) is one; the front end carries out what a
// transition asks (remove the request, report an empty status); tests/mpi/request_lifecycle_test.cpp
// drives it with fake requests.
//
//   created ──start──▶ pending ──complete_now──▶ complete ──finish──▶ gone (or inactive, persistent)
//   (inactive if persistent)  │                                         ▲
//                             └── cancel (a receive not matched yet) ───┘ complete, status cancelled
//
// A request freed while pending is removed when it completes; one freed otherwise at once. A
// persistent request returns to inactive at finish and may be started again; a wait or test on an
// inactive one returns at once with an empty status.
#pragma once

namespace lp::mpi {

enum class RequestKind { kSend, kReceive, kCollective };

struct RequestLifecycle {
  RequestKind kind = RequestKind::kSend;
  bool persistent = false;
  bool active = true;     // false: an inactive persistent request (or a send that failed to start)
  bool complete = false;
  bool freed = false;     // MPI_Request_free'd while pending: remove when it completes

  // A new request: a persistent one is inactive until started.
  void create(RequestKind what, bool is_persistent) {
    kind = what;
    persistent = is_persistent;
    active = !is_persistent;
    complete = false;
    freed = false;
  }
  // MPI_Start, or the start of a nonpersistent send or receive.
  void start() {
    active = true;
    complete = false;
  }
  bool pending() const { return active && !complete; }

  // It completed: true if it was freed meanwhile and must go now.
  bool complete_now() {
    complete = true;
    return freed;
  }

  // MPI_Request_free: at once, or (pending) once it completes.
  enum class Free { kRemoveNow, kRemoveAtCompletion };
  Free free_request() {
    if (!pending()) return Free::kRemoveNow;
    freed = true;
    return Free::kRemoveAtCompletion;
  }

  // MPI_Cancel: only a receive LongPipe has not matched yet is cancelled (the caller asks the
  // matcher whether it is still posted); a send is not, as in Open MPI: it completes normally.
  bool cancellable() const { return kind == RequestKind::kReceive && pending(); }

  // A wait or test that found it complete (or inactive): what happens to the request.
  enum class Finish {
    kEmptyStatus,  // inactive: nothing to report, the handle stays
    kDeactivate,   // persistent: its status reported, inactive until started again
    kRemove,       // its status reported, the handle becomes MPI_REQUEST_NULL
  };
  Finish finish() {
    if (!active) return Finish::kEmptyStatus;
    if (!persistent) return Finish::kRemove;
    active = false;
    complete = false;
    return Finish::kDeactivate;
  }
};

// Whether a send to another site is complete: it failed, or it is wholly in the engine (which
// holds its own copy) and, if synchronous, the receiver acknowledged its match.
inline bool send_complete(bool sent, bool synchronous, bool acknowledged, bool failed) {
  return failed || (sent && (!synchronous || acknowledged));
}

}  // namespace lp::mpi
