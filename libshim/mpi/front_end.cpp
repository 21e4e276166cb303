// FrontEnd (front_end.h): routing, sends, the request table, Fortran handles, errors and the end.
#include "front_end.h"

#include <poll.h>
#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "datatype_io.h"
#include "front_end_request.h"
#include "outgoing_message.h"
#include "wire_format.h"

namespace lp::mpi {

static_assert(MPI_ANY_SOURCE == kAnySource && MPI_ANY_TAG == kAnyTag, "envelope.h's wildcards are Open MPI's");
static_assert(MPI_SUCCESS == kNoError, "message_matching.h's success code is Open MPI's");

// ---------------------------------------------------------------------------------------------
// Routing

CommunicatorInfo* FrontEnd::lookup(MPI_Comm comm) {
  if (comm == MPI_COMM_WORLD) return &world_;
  auto it = communicators_.find(comm);
  return it == communicators_.end() ? nullptr : &it->second;  // unknown: stays on Open MPI
}

int FrontEnd::remote_world(MPI_Comm comm, int peer, const CommunicatorInfo** info) {
  *info = lookup(comm);
  return *info ? (*info)->remote_world_rank(peer) : -1;
}

bool FrontEnd::emulated_receive(MPI_Comm comm, int source, const CommunicatorInfo** info) {
  *info = lookup(comm);
  if (!*info || !(*info)->spans_sites || source == MPI_PROC_NULL) return false;
  if (source == MPI_ANY_SOURCE) return true;
  if ((*info)->remote_world_rank(source) >= 0) return true;
  // A same-site source, but an earlier receive of ours that its messages may match is still open
  // on this communicator: this one must queue behind it (posting order decides who matches first).
  return (*info)->native_receives.holds_back(source);
}

std::string FrontEnd::unreachable(int world, const std::string& reason) {
  return "MPI rank " + std::to_string(world) + " (" + endpoint_of_world_[static_cast<std::size_t>(world)] +
         ") is unreachable: " + (reason.empty() ? failure_reasons_[world] : reason);
}

// ---------------------------------------------------------------------------------------------
// Sends

int FrontEnd::send_remote(const void* buffer, int count, MPI_Datatype type, int dest_world, int tag, MPI_Comm comm,
                          const CommunicatorInfo& info) {
  if (failed_world_ranks_.count(dest_world)) {
    return report_error(comm, MPI_ERR_OTHER, unreachable(dest_world));
  }
  wait_for_send_queue(dest_world);  // earlier sends to that peer go first, and whole
  const std::string& endpoint = endpoint_of_world_[static_cast<std::size_t>(dest_world)];
  try {
    const OutgoingEnvelope envelope{world_rank_, dest_world, tag, info.context, false, 0};
    OutgoingMessage message(buffer, count, type, comm, envelope, max_message_);
    while (!message.done()) engine_->send(endpoint, message.next());  // a message's segments back to back
  } catch (const PeerFailed& e) {
    failed_world_ranks_.insert(dest_world);
    failure_reasons_[dest_world] = e.what();
    return report_error(comm, MPI_ERR_OTHER, unreachable(dest_world, e.what()));
  } catch (const WindowFull& e) {
    return report_error(comm, MPI_ERR_OTHER, std::string("LongPipe window full (LONGPIPE_WINDOW_FULL=fail): ") + e.what());
  } catch (const SendError& e) {
    return report_error(comm, e.error_class(), e.what());
  } catch (const std::exception& e) {  // the engine refused the message (std::invalid_argument), no memory
    return report_error(comm, MPI_ERR_OTHER, std::string("LongPipe cannot send the message: ") + e.what());
  }
  return MPI_SUCCESS;
}

int FrontEnd::send(const void* buffer, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, SendMode mode) {
  const CommunicatorInfo* info;
  const int dest_world = remote_world(comm, dest, &info);
  if (dest_world < 0 && !collectives_in_flight_.empty()) {
    MPI_Request native;  // a send to a same-site rank may wait for its receiver, which may wait for them
    const int rc = isend(buffer, count, type, dest, tag, comm, mode, &native);
    return rc != MPI_SUCCESS ? rc : wait_native(&native, MPI_STATUS_IGNORE);
  }
  if (dest_world < 0) {
    switch (mode) {
      case SendMode::kStandard: return PMPI_Send(buffer, count, type, dest, tag, comm);
      case SendMode::kBuffered: return PMPI_Bsend(buffer, count, type, dest, tag, comm);
      case SendMode::kReady: return PMPI_Rsend(buffer, count, type, dest, tag, comm);
      case SendMode::kSynchronous: return PMPI_Ssend(buffer, count, type, dest, tag, comm);
    }
  }
  if (mode != SendMode::kSynchronous) {
    bool queued_before;  // earlier nonblocking sends to that peer still wait for its window
    {
      std::lock_guard lock(mutex_);
      queued_before = !pending_sends_.empty(dest_world);
    }
    if (!queued_before) return send_remote(buffer, count, type, dest_world, tag, comm, *info);
  }
  MPI_Request request;
  const int rc = isend(buffer, count, type, dest, tag, comm, mode, &request);
  if (rc != MPI_SUCCESS) return rc;
  return wait(&request, MPI_STATUS_IGNORE);
}

std::unique_ptr<FrontEnd::Request> FrontEnd::make_request(RequestKind kind, bool persistent, const void* buffer,
                                                          int count, MPI_Datatype type, int peer, int tag,
                                                          MPI_Comm comm, SendMode mode) {
  auto r = std::make_unique<Request>();
  r->create(kind, persistent);  // a persistent request is inactive until MPI_Start
  if (kind == Request::Kind::kSend) {
    r->send_buffer = buffer;
  } else {
    r->receive_buffer = const_cast<void*>(buffer);
  }
  r->count = count;
  r->type = type;
  r->peer = peer;
  r->tag = tag;
  r->comm = comm;
  r->mode = mode;
  return r;
}

std::uintptr_t FrontEnd::new_request(std::unique_ptr<Request> request) {
  hold_communicator(request->comm);
  Request* r = request.get();
  r->handle = requests_.add(std::move(request));
  return r->handle;
}

void FrontEnd::remove_request(std::uintptr_t handle) {
  const MPI_Comm comm = requests_.get(handle)->comm;
  requests_.remove(handle);
  release_communicator(comm);
}

FrontEnd::Request* FrontEnd::ours(MPI_Request request) const {
  return requests_.get(reinterpret_cast<std::uintptr_t>(request));
}

int FrontEnd::isend(const void* buffer, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, SendMode mode,
                    MPI_Request* request) {
  const CommunicatorInfo* info;
  const int dest_world = remote_world(comm, dest, &info);
  if (dest_world < 0) {
    switch (mode) {
      case SendMode::kStandard: return PMPI_Isend(buffer, count, type, dest, tag, comm, request);
      case SendMode::kBuffered: return PMPI_Ibsend(buffer, count, type, dest, tag, comm, request);
      case SendMode::kReady: return PMPI_Irsend(buffer, count, type, dest, tag, comm, request);
      case SendMode::kSynchronous: return PMPI_Issend(buffer, count, type, dest, tag, comm, request);
    }
  }
  auto owned = make_request(Request::Kind::kSend, false, buffer, count, type, dest, tag, comm, mode);
  Request& r = *owned;
  const std::uintptr_t handle = new_request(std::move(owned));
  const int rc = start_request(r, handle);
  if (rc != MPI_SUCCESS) {  // reported already; nothing is left behind
    remove_request(handle);
    *request = MPI_REQUEST_NULL;
    return rc;
  }
  *request = reinterpret_cast<MPI_Request>(handle);
  return MPI_SUCCESS;
}

int FrontEnd::send_init(const void* buffer, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                        SendMode mode, MPI_Request* request) {
  const CommunicatorInfo* info;
  if (remote_world(comm, dest, &info) < 0) {
    switch (mode) {
      case SendMode::kStandard: return PMPI_Send_init(buffer, count, type, dest, tag, comm, request);
      case SendMode::kBuffered: return PMPI_Bsend_init(buffer, count, type, dest, tag, comm, request);
      case SendMode::kReady: return PMPI_Rsend_init(buffer, count, type, dest, tag, comm, request);
      case SendMode::kSynchronous: return PMPI_Ssend_init(buffer, count, type, dest, tag, comm, request);
    }
  }
  auto owned = make_request(Request::Kind::kSend, true, buffer, count, type, dest, tag, comm, mode);
  *request = reinterpret_cast<MPI_Request>(new_request(std::move(owned)));
  return MPI_SUCCESS;
}

// Starts a send or receive request of ours (new, or a persistent one being started).
int FrontEnd::start_request(Request& r, std::uintptr_t handle) {
  r.start();
  r.error = MPI_SUCCESS;
  r.native = MPI_REQUEST_NULL;
  set_status(&r.status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, false);
  if (r.kind == Request::Kind::kReceive) return post_receive(r, handle);
  const CommunicatorInfo* info;
  const int dest_world = remote_world(r.comm, r.peer, &info);
  r.peer_world = dest_world;
  r.active = false;  // until it is under way: a persistent send that failed to start stays inactive
  if (failed_world_ranks_.count(dest_world)) return report_error(r.comm, MPI_ERR_OTHER, unreachable(dest_world));
  const bool synchronous = r.mode == SendMode::kSynchronous;
  r.sync_id = synchronous ? matching_.next_sync_id() : 0;
  // Complete once wholly in the engine (which holds its own copy) and, if synchronous, matched.
  // Meanwhile it waits in pending_sends_ (never blocking the caller), referencing the buffer.
  PendingSends<Request>::Entry entry;
  try {
    const OutgoingEnvelope envelope{world_rank_, dest_world, r.tag, info->context, synchronous, r.sync_id};
    entry.message = std::make_unique<OutgoingMessage>(r.send_buffer, r.count, r.type, r.comm, envelope, max_message_);
  } catch (const SendError& e) {
    return report_error(r.comm, e.error_class(), e.what());
  }
  entry.needs_application_thread = !entry.message->flat();
  entry.owner = &r;
  r.active = true;
  std::lock_guard lock(mutex_);
  r.sent = false;
  r.acknowledged = false;
  r.shared_error = MPI_SUCCESS;
  if (synchronous) matching_.await_acknowledgement(r);  // before it can go: its match may come at once
  pending_sends_.push(dest_world, std::move(entry));
  pump_locked(true);
  if (r.sent || !window_full_fails_) return MPI_SUCCESS;
  // LONGPIPE_WINDOW_FULL=fail: what the window does not take whole at once fails at once (nothing
  // waits before it: every earlier send went whole or failed the same way).
  pending_sends_.discard(dest_world);
  if (synchronous) matching_.forget_acknowledgement(r);
  matching_.unlist(r);
  r.active = false;
  return report_error(r.comm, MPI_ERR_OTHER, r.shared_error != MPI_SUCCESS
                                                 ? "LongPipe cannot send the message"
                                                 : "LongPipe window full (LONGPIPE_WINDOW_FULL=fail)");
}

// ---------------------------------------------------------------------------------------------
// Errors, status, end

int FrontEnd::report_error(MPI_Comm comm, int error_class, const std::string& what) {
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  PMPI_Comm_get_errhandler(comm, &handler);
  const bool fatal = handler == MPI_ERRORS_ARE_FATAL;
  if (handler != MPI_ERRHANDLER_NULL) PMPI_Errhandler_free(&handler);
  if (fatal) {
    std::fprintf(stderr, "liblongpipe: MPI rank %d: %s; aborting (MPI_ERRORS_ARE_FATAL)\n", world_rank_, what.c_str());
    std::fflush(stderr);
    PMPI_Abort(comm, error_class);
  }
  PMPI_Comm_call_errhandler(comm, error_class);
  return error_class;
}

void FrontEnd::set_status(MPI_Status* status, int source, int tag, int error, MPI_Count bytes, bool cancelled) {
  status->MPI_SOURCE = source;
  status->MPI_TAG = tag;
  status->MPI_ERROR = error;
  PMPI_Status_set_elements_x(status, MPI_BYTE, bytes);
  PMPI_Status_set_cancelled(status, cancelled ? 1 : 0);
}

void FrontEnd::finalize() {
  // Acknowledgements (and sends, in an erroneous program) still waiting for a window go first.
  wait_rounds(
      [&] {
        {
          std::lock_guard lock(mutex_);
          if (pending_acks_.empty() && pending_sends_.empty()) return WaitRound::kDone;
        }
        progress(false);
        return WaitRound::kWaiting;
      },
      std::chrono::steady_clock::now() + kFinalizeFlushTimeout);  // then the engine's flush reports it
  progress_thread_.reset();
  if (!engine_->flush(kFinalizeFlushTimeout)) {
    std::fprintf(stderr, "liblongpipe: MPI rank %d: messages not acknowledged after %lld s at MPI_Finalize\n",
                 world_rank_, static_cast<long long>(kFinalizeFlushTimeout.count() / 1000));
  }
  // Nobody stops its engine before every rank's messages are acknowledged (flushed above).
  PMPI_Barrier(internal_);
  engine_.reset();
  release_keep_alives();
  PMPI_Comm_free(&internal_);
}

void FrontEnd::abandon_after_fork() {
  if (progress_thread_) ProgressThread::abandon_after_fork(progress_thread_.release());
  if (engine_) {
    engine_->abandon_after_fork();
    (void)engine_.release();
  }
}

}  // namespace lp::mpi
