// The front end's request and message records (front_end*.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "front_end.h"
#include "message_matching.h"

namespace lp::mpi {

// A LongPipe request: a send to another site, a receive matched by LongPipe's rules, or a
// nonblocking collective across sites. Its kind and states (persistent, active, complete, freed)
// and the rules that change them: request_lifecycle.h; what matching reads and writes of it
// (buffer, match, acknowledgement, failure; guarded by FrontEnd::mutex_): message_matching.h.
struct FrontEnd::Request : RequestLifecycle, MatchSlot {
  using Kind = RequestKind;
  const void* send_buffer = nullptr;
  int count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  int peer = 0;  // destination or source rank in `comm` (or MPI_ANY_SOURCE)
  int tag = 0;
  MPI_Comm comm = MPI_COMM_NULL;
  SendMode mode = SendMode::kStandard;
  bool may_match_native = false; // receives: Open MPI messages may match too (claimed at progress steps)
  bool in_native_order = false;  // counted in its communicator's native_receives (application thread)
  MPI_Request native = MPI_REQUEST_NULL;  // the Open MPI receive that took over (PMPI_Imrecv)
  std::unique_ptr<PendingCollective> collective;  // kind kCollective: its state
  MPI_Status status{};
  int error = MPI_SUCCESS;
  std::uintptr_t handle = 0;     // its handle in requests_
};

// What MPI_Mprobe / MPI_Improbe took out of the unexpected queue for MPI_Mrecv.
struct FrontEnd::MatchedMessage {
  Envelope envelope;
  std::shared_ptr<ArrivedMessage> message;
  MPI_Comm comm = MPI_COMM_NULL;
};

}  // namespace lp::mpi
