#include "front_end.h"

#include <openssl/rand.h>
#include <poll.h>
#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

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

  SiteMap sites = discover_sites(internal, world_rank, world_size);
  if (sites.site_count() <= 1) {
    PMPI_Comm_free(&internal);
    return nullptr;
  }
  Config config = Config::from_environment();

  // The job key (issue 10): none configured -> rank 0 makes one and every rank gets it over MPI.
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
  front_end->segment_bytes_ = transfer_segment_bytes(config.streams, config.small_message);
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
  world_ = CommunicatorInfo(0, std::move(everyone), sites_.sites(), my_site_);
}

FrontEnd::~FrontEnd() = default;

// ---------------------------------------------------------------------------------------------
// Routing

const CommunicatorInfo* FrontEnd::lookup(MPI_Comm comm) {
  if (comm == MPI_COMM_WORLD) return &world_;
  auto it = communicators_.find(comm);
  return it == communicators_.end() ? nullptr : &it->second;  // unknown: stays on Open MPI
}

int FrontEnd::remote_world(MPI_Comm comm, int peer, const CommunicatorInfo** info) {
  *info = lookup(comm);
  return *info ? (*info)->remote_world_rank(peer) : -1;
}

bool FrontEnd::longpipe_source(MPI_Comm comm, int source, const CommunicatorInfo** info) {
  return emulated_receive(comm, source, info) && (source == MPI_ANY_SOURCE || (*info)->remote_world_rank(source) >= 0);
}

bool FrontEnd::emulated_receive(MPI_Comm comm, int source, const CommunicatorInfo** info) {
  *info = lookup(comm);
  if (!*info || !(*info)->spans_sites || source == MPI_PROC_NULL) return false;
  if (source == MPI_ANY_SOURCE) return true;
  if ((*info)->remote_world_rank(source) >= 0) return true;
  // A same-site source, but an earlier wildcard receive of ours is still open on this
  // communicator: this one must queue behind it (posting order decides who matches first).
  return (*info)->pending_wildcard_receives > 0;
}

std::string FrontEnd::unreachable(int world, const std::string& reason) {
  return "MPI rank " + std::to_string(world) + " (" + endpoint_of_world_[static_cast<std::size_t>(world)] +
         ") is unreachable: " + (reason.empty() ? failure_reasons_[world] : reason);
}

// ---------------------------------------------------------------------------------------------
// Sends

Message FrontEnd::message_header(int dest_world, int tag, int context, bool synchronous) const {
  Message message;
  message.source = static_cast<std::uint32_t>(world_rank_);
  message.destination = static_cast<std::uint32_t>(dest_world);
  message.tag = tag;
  message.context = context;
  message.flags = kFlagData | (synchronous ? kFlagSynchronous : 0u);
  return message;
}

int FrontEnd::send_remote(const void* buffer, int count, MPI_Datatype type, int dest_world, int tag, MPI_Comm comm,
                          const CommunicatorInfo& info) {
  if (failed_world_ranks_.count(dest_world)) {
    return report_error(comm, MPI_ERR_OTHER, unreachable(dest_world));
  }
  OutgoingMessage outgoing(buffer, count, type, comm, message_header(dest_world, tag, info.context, false), 0);
  try {
    while (!outgoing.done()) engine_->send(endpoint_of_world_[static_cast<std::size_t>(dest_world)], outgoing.next());
  } catch (const PeerFailed& e) {
    failed_world_ranks_.insert(dest_world);
    failure_reasons_[dest_world] = e.what();
    return report_error(comm, MPI_ERR_OTHER, unreachable(dest_world, e.what()));
  } catch (const WindowFull& e) {
    return report_error(comm, MPI_ERR_OTHER, std::string("LongPipe window full (LONGPIPE_WINDOW_FULL=fail): ") + e.what());
  } catch (const std::runtime_error& e) {
    return report_error(comm, MPI_ERR_OTHER, e.what());
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
  Request* r = request.get();
  r->handle = requests_.add(std::move(request));
  return r->handle;
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
  if (rc != MPI_SUCCESS) {
    requests_.remove(handle);
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
  r.matched = false;
  set_status(&r.status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, false);
  if (r.kind == Request::Kind::kReceive) return post_receive(r, handle);
  const CommunicatorInfo* info;
  const int dest_world = remote_world(r.comm, r.peer, &info);
  r.peer_world = dest_world;
  if (failed_world_ranks_.count(dest_world)) return report_error(r.comm, MPI_ERR_OTHER, unreachable(dest_world));
  const bool synchronous = r.mode == SendMode::kSynchronous;
  if (synchronous) r.sync_id = next_sync_id_++;
  // Complete once wholly in the engine (which holds its own copy) and, if synchronous, matched.
  // Until then it waits in pending_sends_ (never blocking the caller), referencing the buffer.
  PendingSends<Request>::Entry entry;
  entry.message = std::make_unique<OutgoingMessage>(r.send_buffer, r.count, r.type, r.comm,
                                                    message_header(dest_world, r.tag, info->context, synchronous),
                                                    r.sync_id);
  int type_size = 0;
  entry.needs_application_thread = !contiguous_type(r.type, &type_size);
  entry.owner = &r;
  std::lock_guard lock(mutex_);
  r.sent = false;
  r.acknowledged = false;
  r.shared_error = MPI_SUCCESS;
  if (synchronous) awaiting_match_[r.sync_id] = &r;  // before it can go: its match may come at once
  pending_sends_.push(dest_world, std::move(entry));
  pump_locked(true);
  return MPI_SUCCESS;
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
  const CommunicatorInfo* info;
  // A persistent receive from a same-site rank stays Open MPI's, whatever is pending when it starts.
  if (!longpipe_source(comm, source, &info)) {
    return PMPI_Recv_init(buffer, count, type, source, tag, comm, request);
  }
  auto owned = make_request(Request::Kind::kReceive, true, buffer, count, type, source, tag, comm, SendMode::kStandard);
  *request = reinterpret_cast<MPI_Request>(new_request(std::move(owned)));
  return MPI_SUCCESS;
}

int FrontEnd::post_receive(Request& r, std::uintptr_t handle) {
  CommunicatorInfo* info = const_cast<CommunicatorInfo*>(lookup(r.comm));
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
  progress(false);
  std::unique_lock lock(mutex_);
  // Messages already here that no earlier receive wanted (an earlier one would have taken them).
  if (r.peer_world >= 0 || r.peer == MPI_ANY_SOURCE) {
    if (auto found = unexpected_.take(r.pattern)) {
      took_unexpected_locked();
      lock.unlock();
      complete_receive(r, handle, found->first, std::move(*found->second));
      return MPI_SUCCESS;
    }
  }
  if (r.peer_world >= 0 && failed_world_ranks_.count(r.peer_world)) {
    r.complete = true;
    r.error = MPI_ERR_OTHER;
    r.status.MPI_ERROR = MPI_ERR_OTHER;
    return MPI_SUCCESS;
  }
  r.wildcard = r.peer == MPI_ANY_SOURCE;
  if (r.wildcard) ++info->pending_wildcard_receives;
  pending_receives_.push_back(&r);
  lock.unlock();
  progress(false);  // Open MPI messages: earlier receives had their turn above
  return MPI_SUCCESS;
}

void FrontEnd::complete_receive(Request& r, std::uintptr_t handle, const Envelope& envelope, ArrivedMessage message) {
  const CommunicatorInfo* info = lookup(r.comm);
  r.error = deliver(message, envelope, info, r.receive_buffer, r.count, r.type, r.comm, &r.status);
  acknowledge(envelope, message);
  r.complete = true;
  if (r.freed) requests_.remove(handle);
}

int FrontEnd::deliver(const ArrivedMessage& message, const Envelope& envelope, const CommunicatorInfo* info,
                      void* buffer, int count, MPI_Datatype type, MPI_Comm comm, MPI_Status* status) {
  int type_size = 0;
  const bool flat = contiguous_type(type, &type_size);
  const std::size_t capacity = static_cast<std::size_t>(type_size) * static_cast<std::size_t>(std::max(count, 0));
  std::size_t bytes = message.body.size();
  int error = MPI_SUCCESS;
  if (bytes > capacity) {
    error = MPI_ERR_TRUNCATE;
    bytes = capacity;
  }
  if (bytes > 0) {
    if (flat) {
      std::memcpy(buffer, message.body.data(), bytes);
    } else {
      const std::size_t rest = bytes % static_cast<std::size_t>(type_size);
      const int elements = static_cast<int>(bytes / static_cast<std::size_t>(type_size));
      int position = 0;
      int rc = PMPI_Unpack(message.body.data(), static_cast<int>(bytes - rest), &position, buffer, elements, type, comm);
      if (rest > 0 && rc == MPI_SUCCESS) {
        // A partial last element: its received bytes land, the rest of it keeps what was there
        // (as Open MPI does): pack the element as it is, overwrite the received prefix, unpack.
        MPI_Aint lower, extent;
        PMPI_Type_get_extent(type, &lower, &extent);
        void* element = static_cast<char*>(buffer) + static_cast<MPI_Aint>(elements) * extent;
        int packed_size = 0;
        PMPI_Pack_size(1, type, comm, &packed_size);
        std::vector<std::byte> scratch(static_cast<std::size_t>(packed_size));
        position = 0;
        PMPI_Pack(element, 1, type, scratch.data(), packed_size, &position, comm);
        std::memcpy(scratch.data(), message.body.data() + (bytes - rest), rest);
        position = 0;
        rc = PMPI_Unpack(scratch.data(), packed_size, &position, element, 1, type, comm);
      }
      if (rc != MPI_SUCCESS && error == MPI_SUCCESS) error = rc;
    }
  }
  const int source = info ? info->peer_rank_of(envelope.source_world) : envelope.source_world;
  if (status != MPI_STATUS_IGNORE) set_status(status, source, envelope.tag, error, static_cast<MPI_Count>(bytes), false);
  return error;
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
  int packed_size = 0;
  PMPI_Pack_size(count, type, comm, &packed_size);
  std::vector<std::byte> packed(static_cast<std::size_t>(packed_size));
  int position = 0;
  PMPI_Pack(buffer, count, type, packed.data(), packed_size, &position, comm);
  return sendrecv(packed.data(), position, MPI_PACKED, dest, send_tag, buffer, count, type, source, receive_tag, comm,
                  status);
}

// ---------------------------------------------------------------------------------------------
// Probes

int FrontEnd::iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  const CommunicatorInfo* info;
  if (!longpipe_source(comm, source, &info)) {
    return PMPI_Iprobe(source, tag, comm, flag, status);
  }
  progress(true);
  ReceivePattern pattern{info->context, source == MPI_ANY_SOURCE ? kAnySource : info->world_of_peer.at(source), tag};
  Envelope envelope;
  MPI_Count bytes = 0;
  bool found = false;
  {
    std::lock_guard lock(mutex_);
    if (const auto* message = unexpected_.find(pattern, &envelope)) {
      found = true;
      bytes = static_cast<MPI_Count>((*message)->body.size());
    }
  }
  if (found) {
    *flag = 1;
    if (status != MPI_STATUS_IGNORE) {
      set_status(status, info->peer_rank_of(envelope.source_world), envelope.tag, MPI_SUCCESS, bytes, false);
    }
    return MPI_SUCCESS;
  }
  if (source == MPI_ANY_SOURCE) return PMPI_Iprobe(source, tag, comm, flag, status);
  *flag = 0;
  return MPI_SUCCESS;
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
    idle(&idle_rounds, source == MPI_ANY_SOURCE);
  }
}

int FrontEnd::improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status) {
  const CommunicatorInfo* info;
  if (!longpipe_source(comm, source, &info)) {
    return PMPI_Improbe(source, tag, comm, flag, message, status);
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
                 static_cast<MPI_Count>(found->second->body.size()), false);
    }
    auto matched = std::make_unique<MatchedMessage>();
    matched->envelope = found->first;
    matched->message = std::move(found->second);
    matched->comm = comm;
    *message = reinterpret_cast<MPI_Message>(messages_.add(std::move(matched)));
    return MPI_SUCCESS;
  }
  if (source == MPI_ANY_SOURCE) return PMPI_Improbe(source, tag, comm, flag, message, status);
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
    idle(&idle_rounds, source == MPI_ANY_SOURCE);
  }
}

int FrontEnd::mrecv(void* buffer, int count, MPI_Datatype type, MPI_Message* message, MPI_Status* status) {
  const auto handle = reinterpret_cast<std::uintptr_t>(*message);
  MatchedMessage* matched = messages_.get(handle);
  if (!matched) return PMPI_Mrecv(buffer, count, type, message, status);
  const int error = deliver(*matched->message, matched->envelope, lookup(matched->comm), buffer, count, type,
                            matched->comm, status);
  acknowledge(matched->envelope, *matched->message);
  const MPI_Comm comm = matched->comm;
  messages_.remove(handle);
  *message = MPI_MESSAGE_NULL;
  return error == MPI_SUCCESS ? MPI_SUCCESS : report_error(comm, error, "message truncated");
}

int FrontEnd::imrecv(void* buffer, int count, MPI_Datatype type, MPI_Message* message, MPI_Request* request) {
  const auto handle = reinterpret_cast<std::uintptr_t>(*message);
  MatchedMessage* matched = messages_.get(handle);
  if (!matched) return PMPI_Imrecv(buffer, count, type, message, request);
  auto owned = std::make_unique<Request>();
  owned->kind = Request::Kind::kReceive;
  owned->comm = matched->comm;
  owned->error = deliver(*matched->message, matched->envelope, lookup(matched->comm), buffer, count, type,
                         matched->comm, &owned->status);
  owned->complete = true;
  acknowledge(matched->envelope, *matched->message);
  messages_.remove(handle);
  *message = MPI_MESSAGE_NULL;
  *request = reinterpret_cast<MPI_Request>(new_request(std::move(owned)));
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
    requests_.remove(handle);
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
    requests_.remove(handle);
    return MPI_SUCCESS;
  }
  if (r->active && !r->complete) {
    // A posted receive still takes its message, a synchronous send still waits for its match, a
    // collective goes on (progress advances it): removed when that happens.
    r->freed = true;
    return MPI_SUCCESS;
  }
  if (r->kind == Request::Kind::kCollective) collectives_in_flight_.remove(handle);
  requests_.remove(handle);
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
  pending_receives_.erase(it);
  if (r->wildcard) --const_cast<CommunicatorInfo*>(lookup(r->comm))->pending_wildcard_receives;
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
// Communicators

void FrontEnd::register_communicator(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return;
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  int context = 0;
  if (!inter) {
    PMPI_Allreduce(&next_context_, &context, 1, MPI_INT, MPI_MAX, comm);
  } else {
    // On an intercommunicator each side receives the other side's maximum; a second round over
    // max(own, other) gives both sides the maximum of all.
    int other_side = 0;
    PMPI_Allreduce(&next_context_, &other_side, 1, MPI_INT, MPI_MAX, comm);
    const int both = std::max(next_context_, other_side);
    PMPI_Allreduce(&both, &context, 1, MPI_INT, MPI_MAX, comm);
  }
  next_context_ = context + 1;

  MPI_Group peers, world_group;
  if (inter) {
    PMPI_Comm_remote_group(comm, &peers);
  } else {
    PMPI_Comm_group(comm, &peers);
  }
  PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
  int size = 0;
  PMPI_Group_size(peers, &size);
  std::vector<int> ranks(static_cast<std::size_t>(size)), world_ranks(static_cast<std::size_t>(size));
  for (int i = 0; i < size; ++i) ranks[static_cast<std::size_t>(i)] = i;
  PMPI_Group_translate_ranks(peers, size, ranks.data(), world_group, world_ranks.data());
  for (int& rank : world_ranks) {
    if (rank == MPI_UNDEFINED) rank = -1;  // a process of another world (MPI_Comm_spawn): Open MPI's path
  }
  PMPI_Group_free(&peers);
  PMPI_Group_free(&world_group);
  communicators_[comm] = CommunicatorInfo(context, std::move(world_ranks), sites_.sites(), my_site_);
}

void FrontEnd::forget_communicator(MPI_Comm comm) { communicators_.erase(comm); }

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
