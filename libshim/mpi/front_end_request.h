// The front end's request and message records (front_end*.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "front_end.h"
#include "segment_arrivals.h"

namespace lp::mpi {

// A LongPipe request: a send to another site, a receive matched by LongPipe's rules, or a
// nonblocking collective across sites. Its kind and states (persistent, active, complete, freed)
// and the rules that change them: request_lifecycle.h.
struct FrontEnd::Request : RequestLifecycle {
  using Kind = RequestKind;
  const void* send_buffer = nullptr;
  void* receive_buffer = nullptr;
  int count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  int peer = 0;  // destination or source rank in `comm` (or MPI_ANY_SOURCE)
  int tag = 0;
  MPI_Comm comm = MPI_COMM_NULL;
  SendMode mode = SendMode::kStandard;
  ReceivePattern pattern;        // receives: what LongPipe messages it takes
  bool may_match_native = false; // receives: Open MPI messages may match too (claimed at progress steps)
  bool in_native_order = false;  // counted in its communicator's native_receives (application thread)
  bool flat = false;             // receives: the type's data is contiguous (segments may go in place)
  std::size_t capacity = 0;      // receives: data bytes the buffer holds
  int peer_world = -1;           // the remote peer, for failures (-1: any)
  std::uint64_t sync_id = 0;     // synchronous send waiting for its match
  MPI_Request native = MPI_REQUEST_NULL;  // the Open MPI receive that took over (PMPI_Imrecv)
  std::unique_ptr<PendingCollective> collective;  // kind kCollective: its state
  MPI_Status status{};
  int error = MPI_SUCCESS;
  std::uintptr_t handle = 0;     // its handle in requests_

  // Shared with the progress thread: guarded by FrontEnd::mutex_. Whichever thread matched or
  // sent it sets these and lists it in settled_; the application thread then completes it.
  bool matched = false;                            // receives: a LongPipe message is bound to it
  Envelope matched_envelope;
  std::shared_ptr<ArrivedMessage> matched_message;
  bool sent = false;                               // sends: wholly in the engine
  bool acknowledged = false;                       // synchronous sends: the receiver matched it
  int shared_error = MPI_SUCCESS;                  // failed before completing (peer gone, message cut short)
  bool listed = false;                             // in settled_
};

// What MPI_Mprobe / MPI_Improbe took out of the unexpected queue for MPI_Mrecv.
struct FrontEnd::MatchedMessage {
  Envelope envelope;
  std::shared_ptr<ArrivedMessage> message;
  MPI_Comm comm = MPI_COMM_NULL;
};

}  // namespace lp::mpi
