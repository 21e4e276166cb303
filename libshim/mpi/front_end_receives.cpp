// FrontEnd's receives and probes (front_end.h): which path a receive takes, posting on
// LongPipe's side (receive_matcher.h decides who matches what), probes that report what a receive
// posted now would get, matched probes and their receives.
#include <algorithm>
#include <optional>

#include "datatype_io.h"
#include "front_end.h"
#include "front_end_request.h"

namespace lp::mpi {
// ---------------------------------------------------------------------------------------------
// Receives

int FrontEnd::recv(void* buffer, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  const CommunicatorInfo* info;
  if (!emulated_receive(comm, source, &info)) {
    if (collectives_in_flight_.empty()) return PMPI_Recv(buffer, count, type, source, tag, comm, status);
    MPI_Request native;
    const int rc = PMPI_Irecv(buffer, count, type, source, tag, comm, &native);
    return rc != MPI_SUCCESS ? rc : wait_native(&native, status);
  }
  MPI_Request request;
  const int rc = irecv(buffer, count, type, source, tag, comm, &request);
  if (rc != MPI_SUCCESS) return rc;
  return wait(&request, status);
}

int FrontEnd::irecv(void* buffer, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                    MPI_Request* request) {
  const CommunicatorInfo* info;
  if (!emulated_receive(comm, source, &info)) return PMPI_Irecv(buffer, count, type, source, tag, comm, request);
  auto owned = make_request(Request::Kind::kReceive, false, buffer, count, type, source, tag, comm, SendMode::kStandard);
  Request& r = *owned;
  const std::uintptr_t handle = new_request(std::move(owned));
  *request = reinterpret_cast<MPI_Request>(handle);
  return start_request(r, handle);
}

int FrontEnd::recv_init(void* buffer, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                        MPI_Request* request) {
  // On a communicator that spans sites a persistent receive is ours whatever its source: each
  // start decides between Open MPI's matching and LongPipe's by what is pending then (post_receive).
  const CommunicatorInfo* info = lookup(comm);
  if (!info || !info->spans_sites || source == MPI_PROC_NULL) {
    return PMPI_Recv_init(buffer, count, type, source, tag, comm, request);
  }
  auto owned = make_request(Request::Kind::kReceive, true, buffer, count, type, source, tag, comm, SendMode::kStandard);
  *request = reinterpret_cast<MPI_Request>(new_request(std::move(owned)));
  return MPI_SUCCESS;
}

int FrontEnd::post_receive(Request& r, std::uintptr_t) {
  CommunicatorInfo* info = lookup(r.comm);
  if (r.peer != MPI_ANY_SOURCE && info->remote_world_rank(r.peer) < 0 && !info->native_receives.holds_back(r.peer)) {
    return post_native_receive(r);
  }
  const ReceiveRoute route =
      route_receive(*info, r.peer, r.tag, MPI_ANY_SOURCE, reinterpret_cast<std::uintptr_t>(r.comm));
  const PostedReceive& how = route.how;
  r.may_match_native = how.may_match_native;
  r.peer_world = route.peer_world;
  const TypeShape shape = shape_of(r.type);
  r.flat = shape.flat;
  r.capacity = static_cast<std::size_t>(shape.size) * static_cast<std::size_t>(std::max(r.count, 0));
  progress(false);
  {
    std::unique_lock lock(mutex_);
    r.matched = false;
    r.shared_error = MPI_SUCCESS;
    // Messages already here that no earlier receive wanted (an earlier one would have taken them).
    if (matching_.take_unexpected(r, how)) {
      took_unexpected_locked();
      lock.unlock();
      settle();
      return MPI_SUCCESS;
    }
    if (r.peer_world >= 0 && failed_world_ranks_.count(r.peer_world)) {
      r.complete = true;
      r.error = MPI_ERR_OTHER;
      r.status.MPI_ERROR = MPI_ERR_OTHER;
      return MPI_SUCCESS;
    }
    if (r.may_match_native) {
      info->native_receives.add(r.peer);
      r.in_native_order = true;
    }
    matching_.enqueue(r, how);  // the progress thread may match it from now on
  }
  progress(false);  // Open MPI messages: earlier receives had their turn above
  return MPI_SUCCESS;
}

// A persistent receive from a same-site rank, started while no earlier receive of ours could take
// that rank's messages: Open MPI matches it among its own receives.
int FrontEnd::post_native_receive(Request& r) {
  r.may_match_native = false;
  r.peer_world = -1;
  const int rc = PMPI_Irecv(r.receive_buffer, r.count, r.type, r.peer, r.tag, r.comm, &r.native);
  if (rc != MPI_SUCCESS) r.active = false;
  return rc;
}

void FrontEnd::unlist_receive(Request& r) {
  matching_.cancel(r);
  release_native_order(r);
}

void FrontEnd::release_native_order(Request& r) {
  if (!r.in_native_order) return;
  r.in_native_order = false;
  lookup(r.comm)->native_receives.remove(r.peer);
}

int FrontEnd::sendrecv(const void* send_buffer, int send_count, MPI_Datatype send_type, int dest, int send_tag,
                       void* receive_buffer, int receive_count, MPI_Datatype receive_type, int source,
                       int receive_tag, MPI_Comm comm, MPI_Status* status) {
  const CommunicatorInfo* info;
  if (remote_world(comm, dest, &info) < 0 && !emulated_receive(comm, source, &info) &&
      collectives_in_flight_.empty()) {
    return PMPI_Sendrecv(send_buffer, send_count, send_type, dest, send_tag, receive_buffer, receive_count,
                         receive_type, source, receive_tag, comm, status);
  }
  MPI_Request requests[2];
  int rc = irecv(receive_buffer, receive_count, receive_type, source, receive_tag, comm, &requests[0]);
  if (rc != MPI_SUCCESS) return rc;
  rc = isend(send_buffer, send_count, send_type, dest, send_tag, comm, SendMode::kStandard, &requests[1]);
  if (rc != MPI_SUCCESS) {
    cancel(&requests[0]);
    wait(&requests[0], MPI_STATUS_IGNORE);
    return rc;
  }
  MPI_Status statuses[2];
  rc = waitall(2, requests, statuses);
  if (status != MPI_STATUS_IGNORE) *status = statuses[0];
  return rc == MPI_ERR_IN_STATUS ? statuses[0].MPI_ERROR != MPI_SUCCESS ? statuses[0].MPI_ERROR : statuses[1].MPI_ERROR : rc;
}

int FrontEnd::sendrecv_replace(void* buffer, int count, MPI_Datatype type, int dest, int send_tag, int source,
                               int receive_tag, MPI_Comm comm, MPI_Status* status) {
  const CommunicatorInfo* info;
  if (remote_world(comm, dest, &info) < 0 && !emulated_receive(comm, source, &info)) {
    return PMPI_Sendrecv_replace(buffer, count, type, dest, send_tag, source, receive_tag, comm, status);
  }
  const PackedCopy copy(buffer, count, type, comm);  // what to send: the receive overwrites the buffer
  return sendrecv(copy.data(), count, copy.type(), dest, send_tag, buffer, count, type, source, receive_tag, comm,
                  status);
}

// ---------------------------------------------------------------------------------------------
// Probes

int FrontEnd::iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  const CommunicatorInfo* info;
  if (!emulated_receive(comm, source, &info)) return PMPI_Iprobe(source, tag, comm, flag, status);
  if (source != MPI_ANY_SOURCE && info->remote_world_rank(source) < 0) {  // same site, behind a receive of ours
    progress(collectives_await_messages());
    return iprobe_native(source, tag, comm, flag, status);
  }
  progress(true);
  const ReceivePattern pattern = probe_pattern(*info, source, tag, MPI_ANY_SOURCE);
  Envelope envelope;
  std::uint64_t bytes = 0;
  bool found = false;
  {
    std::lock_guard lock(mutex_);
    if (const ArrivedMessage* message = matching_.probe(pattern, &envelope)) {
      found = true;
      bytes = message->size;
    }
  }
  if (found) {
    *flag = 1;
    if (status != MPI_STATUS_IGNORE) {
      set_status(status, info->peer_rank_of(envelope.source_world), envelope.tag, MPI_SUCCESS,
                 static_cast<MPI_Count>(bytes), false);
    }
    return MPI_SUCCESS;
  }
  if (source == MPI_ANY_SOURCE) return iprobe_native(source, tag, comm, flag, status);
  *flag = 0;
  return MPI_SUCCESS;
}

// A probe reports what a receive posted now would get: never an Open MPI message that a pending
// receive of ours matches (it is that receive's; progress claims it, oldest receive first).
int FrontEnd::iprobe_native(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  MPI_Status own;
  MPI_Status* probed = status == MPI_STATUS_IGNORE ? &own : status;
  for (;;) {
    const int rc = PMPI_Iprobe(source, tag, comm, flag, probed);
    if (rc != MPI_SUCCESS || !*flag) return rc;
    {
      std::lock_guard lock(mutex_);
      if (!native_message_claimed(comm, probed->MPI_SOURCE, probed->MPI_TAG)) return rc;
    }
    if (claim_native_messages() == 0) break;  // each round gives one message to its receive
  }
  *flag = 0;
  return MPI_SUCCESS;
}

// The probed message is the oldest from its source with its tag (Open MPI keeps each source's
// messages in order): a matched probe for exactly that source and tag takes that one.
int FrontEnd::improbe_native(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message,
                             MPI_Status* status) {
  MPI_Status probed;
  const int rc = iprobe_native(source, tag, comm, flag, &probed);
  if (rc != MPI_SUCCESS || !*flag) return rc;
  return PMPI_Improbe(probed.MPI_SOURCE, probed.MPI_TAG, comm, flag, message, status);
}

int FrontEnd::probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  const CommunicatorInfo* info;
  std::optional<int> probed;  // the probe's result once it found a message (or failed)
  if (!emulated_receive(comm, source, &info)) {
    wait_rounds([&] {
      if (collectives_in_flight_.empty()) return WaitRound::kDone;
      int flag = 0;
      const int rc = PMPI_Iprobe(source, tag, comm, &flag, status);
      if (rc != MPI_SUCCESS || flag) {
        probed = rc;
        return WaitRound::kDone;
      }
      progress(collectives_await_messages());
      return WaitRound::kWaitingOnOpenMpi;
    });
    return probed ? *probed : PMPI_Probe(source, tag, comm, status);
  }
  const int peer_world = source == MPI_ANY_SOURCE ? -1 : info->remote_world_rank(source);
  wait_rounds([&] {
    int flag = 0;
    const int rc = iprobe(source, tag, comm, &flag, status);
    if (rc != MPI_SUCCESS || flag) {
      probed = rc;
      return WaitRound::kDone;
    }
    if (peer_world >= 0 && failed_world_ranks_.count(peer_world)) {
      probed = report_error(comm, MPI_ERR_OTHER, unreachable(peer_world));
      return WaitRound::kDone;
    }
    return waiting(peer_world < 0);
  });
  return *probed;
}

int FrontEnd::improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status) {
  const CommunicatorInfo* info;
  if (!emulated_receive(comm, source, &info)) return PMPI_Improbe(source, tag, comm, flag, message, status);
  if (source != MPI_ANY_SOURCE && info->remote_world_rank(source) < 0) {  // same site, behind a receive of ours
    progress(collectives_await_messages());
    return improbe_native(source, tag, comm, flag, message, status);
  }
  progress(true);
  const ReceivePattern pattern = probe_pattern(*info, source, tag, MPI_ANY_SOURCE);
  std::unique_lock lock(mutex_);
  auto found = matching_.take(pattern);
  if (found) took_unexpected_locked();
  lock.unlock();
  if (found) {
    *flag = 1;
    if (status != MPI_STATUS_IGNORE) {
      set_status(status, info->peer_rank_of(found->first.source_world), found->first.tag, MPI_SUCCESS,
                 static_cast<MPI_Count>(found->second->size), false);
    }
    auto matched = std::make_unique<MatchedMessage>();
    matched->envelope = found->first;
    matched->message = std::move(found->second);
    matched->comm = comm;
    hold_communicator(comm);
    *message = reinterpret_cast<MPI_Message>(messages_.add(std::move(matched)));
    return MPI_SUCCESS;
  }
  if (source == MPI_ANY_SOURCE) return improbe_native(source, tag, comm, flag, message, status);
  *flag = 0;
  return MPI_SUCCESS;
}

int FrontEnd::mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  const CommunicatorInfo* info;
  if (!emulated_receive(comm, source, &info)) return PMPI_Mprobe(source, tag, comm, message, status);
  const bool native_pending = source == MPI_ANY_SOURCE || info->remote_world_rank(source) < 0;
  int rc = MPI_SUCCESS;
  wait_rounds([&] {
    int flag = 0;
    rc = improbe(source, tag, comm, &flag, message, status);
    return rc != MPI_SUCCESS || flag ? WaitRound::kDone : waiting(native_pending);
  });
  return rc;
}

int FrontEnd::mrecv(void* buffer, int count, MPI_Datatype type, MPI_Message* message, MPI_Status* status) {
  MPI_Request request;
  if (!is_ours(*message)) return PMPI_Mrecv(buffer, count, type, message, status);
  imrecv(buffer, count, type, message, &request);
  return wait(&request, status);  // errors (truncation) through the communicator's handler
}

int FrontEnd::imrecv(void* buffer, int count, MPI_Datatype type, MPI_Message* message, MPI_Request* request) {
  const auto handle = reinterpret_cast<std::uintptr_t>(*message);
  MatchedMessage* matched = messages_.get(handle);
  if (!matched) return PMPI_Imrecv(buffer, count, type, message, request);
  auto owned = make_request(Request::Kind::kReceive, false, buffer, count, type, MPI_ANY_SOURCE, MPI_ANY_TAG,
                            matched->comm, SendMode::kStandard);
  owned->peer_world = matched->envelope.source_world;
  set_status(&owned->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, false);
  Request& r = *owned;
  const std::uintptr_t request_handle = new_request(std::move(owned));
  *request = reinterpret_cast<MPI_Request>(request_handle);
  const std::unique_ptr<MatchedMessage> taken(new MatchedMessage(std::move(*matched)));
  messages_.remove(handle);
  release_communicator(taken->comm);  // the request holds it now
  *message = MPI_MESSAGE_NULL;
  r.flat = shape_of(type).flat;
  r.capacity = static_cast<std::size_t>(shape_of(type).size) * static_cast<std::size_t>(std::max(count, 0));
  {
    std::lock_guard lock(mutex_);
    matching_.bind(r, taken->envelope, taken->message);  // complete now, or with its last segment
  }
  settle();
  return MPI_SUCCESS;
}

}  // namespace lp::mpi
