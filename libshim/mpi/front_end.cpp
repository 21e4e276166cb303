#include "front_end.h"

#include <openssl/rand.h>
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
#include "site_discovery.h"
#include "wire_format.h"

namespace lp::mpi {

static_assert(MPI_ANY_SOURCE == kAnySource && MPI_ANY_TAG == kAnyTag, "envelope.h's wildcards are Open MPI's");

namespace {

// Longest endpoint string exchanged at MPI_Init ("host:port").
constexpr int kEndpointBytes = 256;
// Key made for a job that has none configured: bytes of randomness (hex-encoded in the key).
constexpr int kJobKeyBytes = 32;
// Fortran handles of LongPipe requests and messages start here (Open MPI's are small table indices).
constexpr int kFortranRequestBase = 1 << 30;

template <typename Handle>
MPI_Fint fortran_handle_of(Handle ours) {
  return kFortranRequestBase + static_cast<MPI_Fint>(reinterpret_cast<std::uintptr_t>(ours) >> 1);
}

template <typename Handle>
Handle handle_of_fortran(MPI_Fint fortran) {
  return reinterpret_cast<Handle>((static_cast<std::uintptr_t>(fortran - kFortranRequestBase) << 1) | 1u);
}

std::string hex(const unsigned char* bytes, int count) {
  static const char digits[] = "0123456789abcdef";
  std::string text;
  for (int i = 0; i < count; ++i) {
    text += digits[bytes[i] >> 4];
    text += digits[bytes[i] & 15];
  }
  return text;
}

}  // namespace

std::unique_ptr<FrontEnd> FrontEnd::start() {
  int world_rank = 0, world_size = 1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
  MPI_Comm internal;
  PMPI_Comm_dup(MPI_COMM_WORLD, &internal);
  PMPI_Comm_set_errhandler(internal, MPI_ERRORS_ARE_FATAL);

  // Every LONGPIPE_* name and value is checked first, also in a job whose ranks share one site.
  Config config = Config::from_environment();
  SiteMap sites = discover_sites(internal, world_rank, world_size);
  if (sites.site_count() <= 1) {
    PMPI_Comm_free(&internal);
    return nullptr;
  }
  // The drop policies give up messages by design (a stream's stale samples); MPI may lose none, so
  // a job that sets one is told at once instead of losing a message later.
  if (config.window_full == WindowFullPolicy::kDropOldest || config.window_full == WindowFullPolicy::kKeepLatest) {
    const char* name = config.window_full == WindowFullPolicy::kDropOldest ? "drop-oldest" : "keep-latest";
    throw std::invalid_argument(std::string("LONGPIPE_WINDOW_FULL=") + name +
                                " drops messages, which MPI does not allow: use block (the default) or fail");
  }

  // The job key: none configured -> rank 0 makes one and every rank gets it over MPI.
  char shared_key[1 + 2 * kJobKeyBytes + 1] = {};
  if (world_rank == 0 && config.key.empty()) {
    unsigned char random[kJobKeyBytes];
    if (RAND_bytes(random, sizeof random) != 1) throw std::runtime_error("RAND_bytes failed: cannot make a job key");
    shared_key[0] = 1;
    std::memcpy(shared_key + 1, hex(random, kJobKeyBytes).c_str(), 2 * kJobKeyBytes);
  }
  PMPI_Bcast(shared_key, sizeof shared_key, MPI_CHAR, 0, internal);
  if (shared_key[0] == 1 && config.key.empty()) config.key = shared_key + 1;

  // One statistics file per rank.
  if (!config.stats_path.empty()) {
    const auto at = config.stats_path.find("%r");
    if (at != std::string::npos) {
      config.stats_path.replace(at, 2, std::to_string(world_rank));
    } else {
      config.stats_path += "." + std::to_string(world_rank);
    }
  }

  std::unique_ptr<FrontEnd> front_end(new FrontEnd(std::move(sites), world_rank, world_size, internal));
  front_end->statistics_path_ = config.stats_path;
  front_end->segment_bytes_ =
      std::min(transfer_segment_bytes(config.streams, config.small_message), config.max_message);
  front_end->max_message_ = config.max_message;
  front_end->window_full_fails_ = config.window_full == WindowFullPolicy::kFail;
  front_end->engine_ = std::make_unique<Engine>(std::move(config));
  const std::string endpoint = front_end->engine_->local_endpoint();
  if (endpoint.size() >= kEndpointBytes) throw std::runtime_error("endpoint name too long: " + endpoint);
  std::vector<char> mine(kEndpointBytes, 0), all(static_cast<std::size_t>(kEndpointBytes) * world_size, 0);
  std::memcpy(mine.data(), endpoint.data(), endpoint.size());
  PMPI_Allgather(mine.data(), kEndpointBytes, MPI_CHAR, all.data(), kEndpointBytes, MPI_CHAR, internal);
  for (int rank = 0; rank < world_size; ++rank) {
    std::string name(all.data() + static_cast<std::size_t>(rank) * kEndpointBytes);
    front_end->world_of_endpoint_[name] = rank;
    front_end->endpoint_of_world_.push_back(std::move(name));
  }
  FrontEnd* self = front_end.get();
  front_end->progress_thread_ = std::make_unique<ProgressThread>(
      self->engine_->receive_event_fd(), self->engine_->room_event_fd(),
      [self](ProgressThread& thread) { return self->background_step(thread); });
  return front_end;
}

FrontEnd::FrontEnd(SiteMap sites, int world_rank, int world_size, MPI_Comm internal)
    : sites_(std::move(sites)),
      world_rank_(world_rank),
      world_size_(world_size),
      my_site_(sites_.site_of(world_rank)),
      internal_(internal) {
  std::vector<int> everyone(static_cast<std::size_t>(world_size));
  for (int rank = 0; rank < world_size; ++rank) everyone[static_cast<std::size_t>(rank)] = rank;
  world_ = CommunicatorInfo(kWorldContext, std::move(everyone), sites_.sites(), my_site_);
  world_.lineage = kWorldLineage;
}

FrontEnd::~FrontEnd() = default;

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
  r->kind = kind;
  r->persistent = persistent;
  r->active = !persistent;  // a persistent request is inactive until MPI_Start
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
  r.active = true;
  r.complete = false;
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
  r.sync_id = synchronous ? next_sync_id_++ : 0;
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
  if (synchronous) awaiting_match_[r.sync_id] = &r;  // before it can go: its match may come at once
  pending_sends_.push(dest_world, std::move(entry));
  pump_locked(true);
  if (r.sent || !window_full_fails_) return MPI_SUCCESS;
  // LONGPIPE_WINDOW_FULL=fail: what the window does not take whole at once fails at once (nothing
  // waits before it: every earlier send went whole or failed the same way).
  pending_sends_.discard(dest_world);
  if (synchronous) awaiting_match_.erase(r.sync_id);
  if (r.listed) std::erase(settled_, &r);
  r.listed = false;
  r.active = false;
  return report_error(r.comm, MPI_ERR_OTHER, r.shared_error != MPI_SUCCESS
                                                 ? "LongPipe cannot send the message"
                                                 : "LongPipe window full (LONGPIPE_WINDOW_FULL=fail)");
}

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
  r.pattern.context = info->context;
  r.pattern.tag = r.tag;
  r.pattern.source_world = kAnySource;
  r.may_match_native = true;
  r.peer_world = -1;
  if (r.peer != MPI_ANY_SOURCE) {
    r.pattern.source_world = info->world_of_peer.at(static_cast<std::size_t>(r.peer));
    r.peer_world = info->remote_world_rank(r.peer);
    r.may_match_native = r.peer_world < 0;
  }
  const TypeShape shape = shape_of(r.type);
  r.flat = shape.flat;
  r.capacity = static_cast<std::size_t>(shape.size) * static_cast<std::size_t>(std::max(r.count, 0));
  progress(false);
  {
    std::unique_lock lock(mutex_);
    r.matched = false;
    r.shared_error = MPI_SUCCESS;
    // Messages already here that no earlier receive wanted (an earlier one would have taken them).
    if (r.peer_world >= 0 || r.peer == MPI_ANY_SOURCE) {
      if (auto found = unexpected_.take(r.pattern)) {
        took_unexpected_locked();
        bind_locked(r, found->first, found->second);
        lock.unlock();
        settle();
        return MPI_SUCCESS;
      }
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
    pending_receives_.push_back(&r);  // the progress thread may match it from now on
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

std::list<FrontEnd::Request*>::iterator FrontEnd::unlist_receive(std::list<Request*>::iterator pending) {
  release_native_order(**pending);
  return pending_receives_.erase(pending);
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
  ReceivePattern pattern{info->context, source == MPI_ANY_SOURCE ? kAnySource : info->world_of_peer.at(source), tag};
  Envelope envelope;
  std::uint64_t bytes = 0;
  bool found = false;
  {
    std::lock_guard lock(mutex_);
    if (const auto* message = unexpected_.find(pattern, &envelope)) {
      found = true;
      bytes = (*message)->size;
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
      if (oldest_native_receive(comm, probed->MPI_SOURCE, probed->MPI_TAG) == pending_receives_.end()) return rc;
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
  int idle_rounds = 0;
  if (!emulated_receive(comm, source, &info)) {
    while (!collectives_in_flight_.empty()) {
      int flag = 0;
      const int rc = PMPI_Iprobe(source, tag, comm, &flag, status);
      if (rc != MPI_SUCCESS || flag) return rc;
      progress(collectives_await_messages());
      idle(&idle_rounds, true);
    }
    return PMPI_Probe(source, tag, comm, status);
  }
  for (;;) {
    int flag = 0;
    const int rc = iprobe(source, tag, comm, &flag, status);
    if (rc != MPI_SUCCESS || flag) return rc;
    if (source != MPI_ANY_SOURCE) {
      const int peer_world = info->remote_world_rank(source);
      if (peer_world >= 0 && failed_world_ranks_.count(peer_world)) {
        return report_error(comm, MPI_ERR_OTHER, unreachable(peer_world));
      }
    }
    idle(&idle_rounds, source == MPI_ANY_SOURCE || info->remote_world_rank(source) < 0);
  }
}

int FrontEnd::improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status) {
  const CommunicatorInfo* info;
  if (!emulated_receive(comm, source, &info)) return PMPI_Improbe(source, tag, comm, flag, message, status);
  if (source != MPI_ANY_SOURCE && info->remote_world_rank(source) < 0) {  // same site, behind a receive of ours
    progress(collectives_await_messages());
    return improbe_native(source, tag, comm, flag, message, status);
  }
  progress(true);
  ReceivePattern pattern{info->context, source == MPI_ANY_SOURCE ? kAnySource : info->world_of_peer.at(source), tag};
  std::unique_lock lock(mutex_);
  auto found = unexpected_.take(pattern);
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
  int idle_rounds = 0;
  for (;;) {
    int flag = 0;
    const int rc = improbe(source, tag, comm, &flag, message, status);
    if (rc != MPI_SUCCESS || flag) return rc;
    idle(&idle_rounds, source == MPI_ANY_SOURCE || info->remote_world_rank(source) < 0);
  }
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
    bind_locked(r, taken->envelope, taken->message);  // complete now, or with its last segment
  }
  settle();
  return MPI_SUCCESS;
}

// ---------------------------------------------------------------------------------------------
// Completion

bool FrontEnd::poll(Request& r) {
  if (r.complete || !r.active) return true;
  settle();  // what the progress thread matched or sent
  if (r.complete) return true;
  if (r.kind == Request::Kind::kCollective) {
    int failed_world = -1;
    if (r.collective->advance(&r.error, &failed_world)) {
      r.complete = true;
      r.peer_world = failed_world;
      r.status.MPI_ERROR = r.error;
    }
    return r.complete;
  }
  if (r.native != MPI_REQUEST_NULL) {
    int flag = 0;
    const int rc = PMPI_Test(&r.native, &flag, &r.status);
    if (flag) {
      r.complete = true;
      r.error = rc != MPI_SUCCESS ? rc : r.status.MPI_ERROR;
      if (r.error == MPI_ERR_PENDING) r.error = MPI_SUCCESS;
    }
  }
  return r.complete;
}

bool FrontEnd::waits_on_open_mpi(const Request& r) {
  if (r.kind == Request::Kind::kCollective) return !r.complete && r.collective->waits_on_open_mpi();
  return r.native != MPI_REQUEST_NULL || r.may_match_native;
}

int FrontEnd::finish(MPI_Request* slot, MPI_Status* status) {
  const auto handle = reinterpret_cast<std::uintptr_t>(*slot);
  Request& r = *requests_.get(handle);
  if (r.kind == Request::Kind::kCollective) collectives_in_flight_.remove(handle);
  if (!r.active) {  // inactive persistent request: empty status
    if (status != MPI_STATUS_IGNORE) set_status(status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, false);
    return MPI_SUCCESS;
  }
  if (status != MPI_STATUS_IGNORE) {
    *status = r.status;
    status->MPI_ERROR = r.error;
  }
  const int error = r.error;
  const MPI_Comm comm = r.comm;
  const int peer_world = r.peer_world;
  if (r.persistent) {
    r.active = false;
    r.complete = false;
  } else {
    remove_request(handle);
    *slot = MPI_REQUEST_NULL;
  }
  if (error == MPI_SUCCESS) return MPI_SUCCESS;
  if (error == MPI_ERR_TRUNCATE) return report_error(comm, error, "message truncated");
  if (peer_world >= 0 && failed_world_ranks_.count(peer_world)) {
    return report_error(comm, error, unreachable(peer_world));
  }
  return report_error(comm, error, "request failed");
}

int FrontEnd::wait(MPI_Request* request, MPI_Status* status) {
  Request* r = ours(*request);
  if (!r) return wait_native(request, status);
  int idle_rounds = 0;
  while (!poll(*r)) {
    // A collective that waits for Open MPI only needs no message from the engine yet.
    progress(r->kind != Request::Kind::kCollective || !waits_on_open_mpi(*r));
    if (poll(*r)) break;
    idle(&idle_rounds, waits_on_open_mpi(*r));
  }
  return finish(request, status);
}

bool FrontEnd::collectives_await_messages() {
  for (std::uintptr_t handle : collectives_in_flight_) {
    if (!waits_on_open_mpi(*requests_.get(handle))) return true;
  }
  return false;
}

int FrontEnd::wait_native(MPI_Request* request, MPI_Status* status) {
  int idle_rounds = 0;
  while (!collectives_in_flight_.empty()) {
    int flag = 0;
    const int rc = PMPI_Test(request, &flag, status);
    if (flag || rc != MPI_SUCCESS) return rc;
    progress(collectives_await_messages());
    idle(&idle_rounds, true);
  }
  return PMPI_Wait(request, status);
}

void FrontEnd::progress_until(const std::function<bool()>& done) {
  int idle_rounds = 0;
  while (!done()) {
    const bool await_messages = collectives_await_messages();
    progress(await_messages);
    if (done()) break;
    idle(&idle_rounds, !await_messages);
  }
}

int FrontEnd::test(MPI_Request* request, int* flag, MPI_Status* status) {
  Request* r = ours(*request);
  if (!r) {
    if (!collectives_in_flight_.empty()) progress(collectives_await_messages());
    return PMPI_Test(request, flag, status);
  }
  if (!poll(*r)) {
    progress(true);
    if (!poll(*r)) {
      *flag = 0;
      return MPI_SUCCESS;
    }
  }
  *flag = 1;
  return finish(request, status);
}

int FrontEnd::testall(int count, MPI_Request* requests, int* flag, MPI_Status* statuses) {
  bool any_ours = false;
  for (int i = 0; i < count && !any_ours; ++i) any_ours = is_ours(requests[i]);
  if (!any_ours && collectives_in_flight_.empty()) return PMPI_Testall(count, requests, flag, statuses);
  progress(true);
  // MPI_Testall completes nothing unless everything is complete.
  for (int i = 0; i < count; ++i) {
    if (Request* r = ours(requests[i])) {
      if (!poll(*r)) {
        *flag = 0;
        return MPI_SUCCESS;
      }
    }
  }
  // Ours are all done; let Open MPI test its own (Testall on a copy keeps them if not all done).
  std::vector<MPI_Request> natives;
  std::vector<int> where;
  for (int i = 0; i < count; ++i) {
    if (!is_ours(requests[i])) {
      natives.push_back(requests[i]);
      where.push_back(i);
    }
  }
  std::vector<MPI_Status> native_statuses(natives.size());
  int native_flag = 1;
  int rc = MPI_SUCCESS;
  if (!natives.empty()) {
    rc = PMPI_Testall(static_cast<int>(natives.size()), natives.data(), &native_flag, native_statuses.data());
  }
  if (!native_flag) {
    *flag = 0;
    return rc;
  }
  *flag = 1;
  bool failed = rc != MPI_SUCCESS;
  for (std::size_t k = 0; k < natives.size(); ++k) {
    requests[where[k]] = natives[k];
    if (statuses != MPI_STATUSES_IGNORE) statuses[where[k]] = native_statuses[k];
  }
  for (int i = 0; i < count; ++i) {
    if (!is_ours(requests[i])) continue;
    MPI_Status own;
    if (finish(&requests[i], &own) != MPI_SUCCESS) failed = true;
    if (statuses != MPI_STATUSES_IGNORE) statuses[i] = own;
  }
  return failed ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}

int FrontEnd::waitall(int count, MPI_Request* requests, MPI_Status* statuses) {
  bool any_ours = false;
  for (int i = 0; i < count && !any_ours; ++i) any_ours = is_ours(requests[i]);
  if (!any_ours && collectives_in_flight_.empty()) return PMPI_Waitall(count, requests, statuses);
  std::vector<char> done(static_cast<std::size_t>(count), 0);
  bool failed = false;
  int remaining = count;
  int idle_rounds = 0;
  while (remaining > 0) {
    progress(true);
    bool advanced = false;
    bool native_pending = false;
    for (int i = 0; i < count; ++i) {
      if (done[i]) continue;
      MPI_Status own;
      MPI_Status* status = statuses == MPI_STATUSES_IGNORE ? &own : &statuses[i];
      if (Request* r = ours(requests[i])) {
        if (!poll(*r)) {
          native_pending = native_pending || waits_on_open_mpi(*r);
          continue;
        }
        if (finish(&requests[i], status) != MPI_SUCCESS) failed = true;
      } else {
        int flag = 0;
        const int rc = PMPI_Test(&requests[i], &flag, status);
        if (!flag) {
          native_pending = true;
          continue;
        }
        if (rc != MPI_SUCCESS) {
          status->MPI_ERROR = rc;
          failed = true;
        } else if (statuses != MPI_STATUSES_IGNORE) {
          status->MPI_ERROR = MPI_SUCCESS;
        }
      }
      done[i] = 1;
      --remaining;
      advanced = true;
    }
    if (advanced) {
      idle_rounds = 0;
    } else if (remaining > 0) {
      idle(&idle_rounds, native_pending);
    }
  }
  return failed ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}

int FrontEnd::testany(int count, MPI_Request* requests, int* index, int* flag, MPI_Status* status) {
  bool any_ours = false;
  for (int i = 0; i < count && !any_ours; ++i) any_ours = is_ours(requests[i]);
  if (!any_ours && collectives_in_flight_.empty()) return PMPI_Testany(count, requests, index, flag, status);
  progress(true);
  bool any_active = false;
  for (int i = 0; i < count; ++i) {
    if (Request* r = ours(requests[i])) {
      if (!r->active) continue;
      any_active = true;
      if (!poll(*r)) continue;
      *index = i;
      *flag = 1;
      return finish(&requests[i], status);
    }
    if (requests[i] == MPI_REQUEST_NULL) continue;
    int done = 0, one_index = 0;
    const int rc = PMPI_Testany(1, &requests[i], &one_index, &done, status);
    if (!done) {
      any_active = true;
      continue;
    }
    if (one_index == MPI_UNDEFINED) continue;  // an inactive persistent request of Open MPI's
    *index = i;
    *flag = 1;
    return rc;
  }
  *index = MPI_UNDEFINED;
  *flag = any_active ? 0 : 1;
  if (!any_active && status != MPI_STATUS_IGNORE) set_status(status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, false);
  return MPI_SUCCESS;
}

int FrontEnd::waitany(int count, MPI_Request* requests, int* index, MPI_Status* status) {
  bool any_ours = false;
  for (int i = 0; i < count && !any_ours; ++i) any_ours = is_ours(requests[i]);
  if (!any_ours && collectives_in_flight_.empty()) return PMPI_Waitany(count, requests, index, status);
  int idle_rounds = 0;
  for (;;) {
    int flag = 0;
    const int rc = testany(count, requests, index, &flag, status);
    if (flag || rc != MPI_SUCCESS) return rc;
    bool native_pending = false;
    for (int i = 0; i < count; ++i) {
      Request* r = ours(requests[i]);
      native_pending = native_pending || !r || waits_on_open_mpi(*r);
    }
    idle(&idle_rounds, native_pending);
  }
}

int FrontEnd::testsome(int count, MPI_Request* requests, int* outcount, int* indices, MPI_Status* statuses) {
  bool any_ours = false;
  for (int i = 0; i < count && !any_ours; ++i) any_ours = is_ours(requests[i]);
  if (!any_ours && collectives_in_flight_.empty()) return PMPI_Testsome(count, requests, outcount, indices, statuses);
  progress(true);
  bool any_active = false;
  bool failed = false;
  *outcount = 0;
  for (int i = 0; i < count; ++i) {
    MPI_Status own;
    MPI_Status* status = statuses == MPI_STATUSES_IGNORE ? &own : &statuses[*outcount];
    if (Request* r = ours(requests[i])) {
      if (!r->active) continue;
      any_active = true;
      if (!poll(*r)) continue;
      if (finish(&requests[i], status) != MPI_SUCCESS) failed = true;
    } else {
      if (requests[i] == MPI_REQUEST_NULL) continue;
      // An inactive persistent request of Open MPI's counts as not active: ask Testsome alone.
      int one_out = 0, one_index = 0;
      const int rc = PMPI_Testsome(1, &requests[i], &one_out, &one_index, status);
      if (one_out == MPI_UNDEFINED) continue;
      any_active = true;
      if (one_out == 0) continue;
      if (rc != MPI_SUCCESS) failed = true;
    }
    indices[(*outcount)++] = i;
  }
  if (!any_active) *outcount = MPI_UNDEFINED;
  return failed ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}

int FrontEnd::waitsome(int count, MPI_Request* requests, int* outcount, int* indices, MPI_Status* statuses) {
  bool any_ours = false;
  for (int i = 0; i < count && !any_ours; ++i) any_ours = is_ours(requests[i]);
  if (!any_ours && collectives_in_flight_.empty()) return PMPI_Waitsome(count, requests, outcount, indices, statuses);
  int idle_rounds = 0;
  for (;;) {
    const int rc = testsome(count, requests, outcount, indices, statuses);
    if (*outcount != 0 || rc != MPI_SUCCESS) return rc;
    idle(&idle_rounds, true);
  }
}

int FrontEnd::start(MPI_Request* request) {
  Request* r = ours(*request);
  if (!r) return PMPI_Start(request);
  return start_request(*r, reinterpret_cast<std::uintptr_t>(*request));
}

int FrontEnd::startall(int count, MPI_Request* requests) {
  for (int i = 0; i < count; ++i) {
    const int rc = start(&requests[i]);
    if (rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}

int FrontEnd::request_free(MPI_Request* request) {
  const auto handle = reinterpret_cast<std::uintptr_t>(*request);
  Request* r = requests_.get(handle);
  if (!r) return PMPI_Request_free(request);
  *request = MPI_REQUEST_NULL;
  if (r->native != MPI_REQUEST_NULL) {
    PMPI_Request_free(&r->native);  // Open MPI finishes that receive on its own
    remove_request(handle);
    return MPI_SUCCESS;
  }
  if (r->active && !r->complete) {
    // A posted receive still takes its message, a synchronous send still waits for its match, a
    // collective goes on (progress advances it): removed when that happens.
    r->freed = true;
    return MPI_SUCCESS;
  }
  if (r->kind == Request::Kind::kCollective) collectives_in_flight_.remove(handle);
  remove_request(handle);
  return MPI_SUCCESS;
}

int FrontEnd::cancel(MPI_Request* request) {
  const auto handle = reinterpret_cast<std::uintptr_t>(*request);
  Request* r = requests_.get(handle);
  if (!r) return PMPI_Cancel(request);
  if (r->kind != Request::Kind::kReceive || r->complete || !r->active) return MPI_SUCCESS;  // as Open MPI: sends are not cancelled
  if (r->native != MPI_REQUEST_NULL) return PMPI_Cancel(&r->native);
  std::lock_guard lock(mutex_);
  auto it = std::find(pending_receives_.begin(), pending_receives_.end(), r);
  if (it == pending_receives_.end()) return MPI_SUCCESS;  // matched already: it completes
  unlist_receive(it);
  r->complete = true;
  set_status(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, true);
  return MPI_SUCCESS;
}

int FrontEnd::request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  Request* r = ours(request);
  if (!r) {
    if (!collectives_in_flight_.empty()) progress(collectives_await_messages());
    return PMPI_Request_get_status(request, flag, status);
  }
  if (!poll(*r)) {
    progress(true);
    poll(*r);
  }
  *flag = r->complete || !r->active;
  if (*flag && status != MPI_STATUS_IGNORE) {
    if (r->active) {
      *status = r->status;
      status->MPI_ERROR = r->error;
    } else {
      set_status(status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, false);
    }
  }
  return MPI_SUCCESS;
}

int FrontEnd::request_c2f(MPI_Request request) {
  return is_ours(request) ? fortran_handle_of(request) : PMPI_Request_c2f(request);
}

MPI_Request FrontEnd::request_f2c(int handle) {
  return handle < kFortranRequestBase ? PMPI_Request_f2c(handle) : handle_of_fortran<MPI_Request>(handle);
}

MPI_Fint FrontEnd::message_c2f(MPI_Message message) {
  return is_ours(message) ? fortran_handle_of(message) : PMPI_Message_c2f(message);
}

MPI_Message FrontEnd::message_f2c(MPI_Fint handle) {
  return handle < kFortranRequestBase ? PMPI_Message_f2c(handle) : handle_of_fortran<MPI_Message>(handle);
}

// ---------------------------------------------------------------------------------------------
// Messages of the site-aware collectives (collectives.cpp)

int FrontEnd::send_bytes(int dest_world, int context, int tag, const std::vector<std::byte>& body, MPI_Comm comm) {
  CommunicatorInfo private_context;
  private_context.context = context;
  for (const std::vector<std::byte>& segment : split_transfer(body, segment_bytes_)) {
    const int rc = send_remote(segment.data(), static_cast<int>(segment.size()), MPI_BYTE, dest_world, tag, comm,
                               private_context);
    if (rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}

int FrontEnd::receive_bytes(int source_world, int context, int tag, MPI_Comm comm, std::vector<std::byte>* body) {
  const ReceivePattern pattern{context, source_world, tag};
  TransferAssembler transfer;
  int error = MPI_SUCCESS;
  int idle_rounds = 0;
  while (!try_take_bytes(source_world, context, tag, &transfer, &error)) {
    progress(true);
    std::unique_lock lock(mutex_);
    const bool here = unexpected_.find(pattern) != nullptr;
    lock.unlock();
    if (!here) idle(&idle_rounds, false);
  }
  if (error == MPI_ERR_INTERN) {
    return report_error(comm, MPI_ERR_INTERN, "a malformed collective transfer from MPI rank " +
                                                  std::to_string(source_world));
  }
  if (error != MPI_SUCCESS) return report_error(comm, error, unreachable(source_world));
  *body = transfer.take();
  return MPI_SUCCESS;
}

bool FrontEnd::try_take_bytes(int source_world, int context, int tag, TransferAssembler* transfer, int* error) {
  const ReceivePattern pattern{context, source_world, tag};
  *error = MPI_SUCCESS;
  while (!transfer->complete()) {
    std::unique_lock lock(mutex_);
    auto found = unexpected_.take(pattern);
    if (found) took_unexpected_locked();
    lock.unlock();
    if (!found) break;
    if (!transfer->add(found->second->body)) {
      *error = MPI_ERR_INTERN;  // a malformed transfer
      return true;
    }
  }
  if (transfer->complete()) return true;
  if (!failed_world_ranks_.count(source_world)) return false;
  *error = MPI_ERR_OTHER;
  return true;
}

int FrontEnd::start_collective(std::unique_ptr<PendingCollective> collective, MPI_Comm comm, MPI_Request* request) {
  auto r = std::make_unique<Request>();
  r->kind = Request::Kind::kCollective;
  r->comm = comm;
  r->collective = std::move(collective);
  set_status(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, false);
  const std::uintptr_t handle = new_request(std::move(r));
  *request = reinterpret_cast<MPI_Request>(handle);
  collectives_in_flight_.push_back(handle);
  progress(false);  // it may be complete already (a root's Ibcast with nothing to wait for)
  return MPI_SUCCESS;
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
  const auto deadline = std::chrono::steady_clock::now() + kFinalizeFlushTimeout;
  int idle_rounds = 0;
  for (;;) {
    {
      std::lock_guard lock(mutex_);
      if (pending_acks_.empty() && pending_sends_.empty()) break;
    }
    if (std::chrono::steady_clock::now() > deadline) break;
    progress(false);
    idle(&idle_rounds, false);
  }
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
