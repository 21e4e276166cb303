// The interposed MPI C functions: what an unmodified MPI program calls once liblongpipe.so is
// preloaded (MPI_* are weak aliases of PMPI_* in libmpi, so these win). Each one costs a single
// branch while LongPipe is off (a one-site job, before MPI_Init, after MPI_Finalize); otherwise the
// front end routes it. No exception crosses into C: failures are reported on stderr and returned
// as MPI_ERR_INTERN (for sends, receives and Sendrecv also through the communicator's error handler).
//
// The collectives of collectives.h (Barrier, Bcast, Reduce, Allreduce, Gather(v), Scatter(v),
// Allgather(v), Alltoall(v/w), Reduce_scatter(_block), Scan, Exscan, Ibarrier, Ibcast, Iallreduce,
// Ireduce, Igather, Iscatter(v), Iallgather(v), Ialltoall, Ireduce_scatter(_block)) take
// two levels across sites, the neighbourhood collectives one exchange (interpose_neighbor.cpp);
// other collectives, one-sided operations, I/O and everything else not
// defined here go straight to Open MPI. Fortran programs reach these functions through
// libshim/mpi/fortran/ (Open MPI's Fortran bindings call PMPI_* directly).
//
// Under MPI_THREAD_MULTIPLE every function here that reaches front-end state holds the ApiLock
// (`one_caller`, api_lock.h) while it runs, also for the fast-path checks (they read state another
// thread's call may change); the blocking Open MPI calls inside give it up while they wait.
#include <pthread.h>

#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>

#include "api_lock.h"
#include "collectives.h"
#include "front_end.h"
#include "thread_level.h"

namespace lp::mpi {
namespace {

FrontEnd* front_end = nullptr;  // non-null while LongPipe carries this process's inter-site traffic
int world_rank_for_messages = 0;
SiteCollectives* collectives = nullptr;  // with front_end: the collectives across sites (collectives.h)

void after_fork_in_child() {
  ApiLock::enable(false);  // LongPipe is off in the child (a thread of the parent may have held it)
  if (front_end) front_end->abandon_after_fork();  // its engine belongs to the parent: leaked
  if (collectives) collectives->abandon_after_fork();
  collectives = nullptr;
  front_end = nullptr;
}

void report(const char* function, const char* what) {
  std::fprintf(stderr, "liblongpipe: MPI rank %d: %s: %s\n", world_rank_for_messages, function, what);
  std::fflush(stderr);
}

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

// After PMPI_Init(_thread): start LongPipe, or abort the job with the reason (a bad LONGPIPE_*
// value must not silently run without LongPipe).
void start_front_end() {
  static std::once_flag fork_handler;
  std::call_once(fork_handler, [] { pthread_atfork(nullptr, nullptr, after_fork_in_child); });
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank_for_messages);
  // A job started by MPI_Comm_spawn runs on Open MPI alone: its sites are not the parent job's
  // (LONGPIPE_MPI_SITES names the parent's ranks), and its intercommunicator to the parent is
  // Open MPI's anyway.
  MPI_Comm parent = MPI_COMM_NULL;
  PMPI_Comm_get_parent(&parent);
  if (parent != MPI_COMM_NULL) return;
  try {
    front_end = FrontEnd::start().release();
    if (front_end) {
      collectives = new SiteCollectives(*front_end);
      collectives->prepare(MPI_COMM_WORLD);
    }
    return;
  } catch (const std::exception& e) {
    report("MPI_Init", (std::string("LongPipe cannot start: ") + e.what()).c_str());
  } catch (...) {
    report("MPI_Init", "LongPipe cannot start: unknown error");
  }
  PMPI_Abort(MPI_COMM_WORLD, 1);
}

// After a call that made *comm (`rc` its result): LongPipe registers it as `how` says (its context
// id derived locally: context_id.h) and prepares its site sub-communicator (made by each site's
// ranks alone when it spans sites: site_communicator.h). A registration that throws aborts the
// job: members that disagree on a communicator would wait for each other for ever.
template <typename How>
int registered(int rc, MPI_Comm* comm, How how) {
  if (rc != MPI_SUCCESS || !front_end) return rc;
  if (!attempt("communicator registration", [&](FrontEnd& fe) { how(fe); return 0; })) {
    PMPI_Abort(MPI_COMM_WORLD, MPI_ERR_INTERN);
    return MPI_ERR_INTERN;
  }
  if (collectives && *comm != MPI_COMM_NULL) collectives->prepare(*comm);
  return rc;
}

// After a call collective over `parent` (every member calls it, also those that get MPI_COMM_NULL).
int registered_from(MPI_Comm parent, int rc, MPI_Comm* comm) {
  return registered(rc, comm, [&](FrontEnd& fe) { fe.register_from_parent(parent, *comm); });
}

}  // namespace

FrontEnd* active_front_end() { return front_end; }
SiteCollectives* active_collectives() { return collectives; }

}  // namespace lp::mpi

using lp::mpi::FrontEnd;
using lp::mpi::front_end;
using lp::mpi::guarded;
using lp::mpi::guarded_on;
using lp::mpi::registered;
using lp::mpi::registered_from;
using lp::mpi::SendMode;

#define LP_EXPORT extern "C" __attribute__((visibility("default")))

// ---- start and end ----

LP_EXPORT int MPI_Init(int* argc, char*** argv) {
  const int rc = PMPI_Init(argc, argv);
  if (rc != MPI_SUCCESS) return rc;
  lp::mpi::start_front_end();
  int open_mpi_level = MPI_THREAD_SINGLE;
  PMPI_Query_thread(&open_mpi_level);
  lp::mpi::settle_thread_level(open_mpi_level, front_end != nullptr);
  return rc;
}

LP_EXPORT int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc != MPI_SUCCESS) return rc;
  lp::mpi::start_front_end();
  *provided = lp::mpi::settle_thread_level(*provided, front_end != nullptr);
  return rc;
}

// What MPI_Init_thread provided (thread_level.h).
LP_EXPORT int MPI_Query_thread(int* provided) { return lp::mpi::query_thread_level(provided); }

LP_EXPORT int MPI_Finalize() {
  if (front_end) {
    guarded("MPI_Finalize", [](FrontEnd&) {
      delete lp::mpi::collectives;  // its sub-communicators, its statistics
      lp::mpi::collectives = nullptr;
      return MPI_SUCCESS;
    });
    guarded("MPI_Finalize", [](FrontEnd& fe) {
      fe.finalize();
      return MPI_SUCCESS;
    });
    delete front_end;
    front_end = nullptr;
    lp::mpi::ApiLock::enable(false);  // MPI: no other thread calls MPI from MPI_Finalize on
  }
  return PMPI_Finalize();
}

LP_EXPORT int MPI_Abort(MPI_Comm comm, int code) { return PMPI_Abort(comm, code); }

// ---- sends ----

#define LP_SEND(NAME, MODE)                                                                              \
  LP_EXPORT int MPI_##NAME(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) { \
    const lp::mpi::ApiLock::Hold one_caller;                                                             \
    if (!front_end || front_end->send_stays_on_open_mpi(comm, dest)) return PMPI_##NAME(buf, count, type, dest, tag, comm); \
    return guarded_on(comm, "MPI_" #NAME, [&](FrontEnd& fe) { return fe.send(buf, count, type, dest, tag, comm, MODE); }); \
  }
LP_SEND(Send, SendMode::kStandard)
LP_SEND(Bsend, SendMode::kBuffered)
LP_SEND(Rsend, SendMode::kReady)
LP_SEND(Ssend, SendMode::kSynchronous)

#define LP_ISEND(NAME, METHOD, MODE)                                                                     \
  LP_EXPORT int MPI_##NAME(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, \
                           MPI_Request* request) {                                                       \
    const lp::mpi::ApiLock::Hold one_caller;                                                             \
    if (!front_end || front_end->send_stays_on_open_mpi(comm, dest)) {                                   \
      return PMPI_##NAME(buf, count, type, dest, tag, comm, request);                                    \
    }                                                                                                    \
    return guarded_on(comm, "MPI_" #NAME,                                                                \
                      [&](FrontEnd& fe) { return fe.METHOD(buf, count, type, dest, tag, comm, MODE, request); }, \
                      request);                                                                          \
  }
LP_ISEND(Isend, isend, SendMode::kStandard)
LP_ISEND(Ibsend, isend, SendMode::kBuffered)
LP_ISEND(Irsend, isend, SendMode::kReady)
LP_ISEND(Issend, isend, SendMode::kSynchronous)
LP_ISEND(Send_init, send_init, SendMode::kStandard)
LP_ISEND(Bsend_init, send_init, SendMode::kBuffered)
LP_ISEND(Rsend_init, send_init, SendMode::kReady)
LP_ISEND(Ssend_init, send_init, SendMode::kSynchronous)

// ---- receives and probes ----

LP_EXPORT int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                       MPI_Status* status) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!front_end || front_end->receive_stays_on_open_mpi(comm, source)) {
    return PMPI_Recv(buf, count, type, source, tag, comm, status);
  }
  return guarded_on(comm, "MPI_Recv", [&](FrontEnd& fe) { return fe.recv(buf, count, type, source, tag, comm, status); });
}

LP_EXPORT int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                        MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!front_end || front_end->receive_stays_on_open_mpi(comm, source)) {
    return PMPI_Irecv(buf, count, type, source, tag, comm, request);
  }
  return guarded_on(comm, "MPI_Irecv", [&](FrontEnd& fe) { return fe.irecv(buf, count, type, source, tag, comm, request); },
                    request);
}

LP_EXPORT int MPI_Recv_init(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                            MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!front_end) return PMPI_Recv_init(buf, count, type, source, tag, comm, request);
  return guarded("MPI_Recv_init",
                 [&](FrontEnd& fe) { return fe.recv_init(buf, count, type, source, tag, comm, request); });
}

LP_EXPORT int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                           void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                           MPI_Comm comm, MPI_Status* status) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!front_end) {
    return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                         comm, status);
  }
  return guarded_on(comm, "MPI_Sendrecv", [&](FrontEnd& fe) {
    return fe.sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                       comm, status);
  });
}

LP_EXPORT int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype type, int dest, int sendtag, int source,
                                   int recvtag, MPI_Comm comm, MPI_Status* status) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!front_end) return PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, status);
  return guarded_on(comm, "MPI_Sendrecv_replace", [&](FrontEnd& fe) {
    return fe.sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, status);
  });
}

LP_EXPORT int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!front_end) return PMPI_Probe(source, tag, comm, status);
  return guarded("MPI_Probe", [&](FrontEnd& fe) { return fe.probe(source, tag, comm, status); });
}

LP_EXPORT int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!front_end) return PMPI_Iprobe(source, tag, comm, flag, status);
  return guarded("MPI_Iprobe", [&](FrontEnd& fe) { return fe.iprobe(source, tag, comm, flag, status); });
}

LP_EXPORT int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!front_end) return PMPI_Mprobe(source, tag, comm, message, status);
  return guarded("MPI_Mprobe", [&](FrontEnd& fe) { return fe.mprobe(source, tag, comm, message, status); });
}

LP_EXPORT int MPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!front_end) return PMPI_Improbe(source, tag, comm, flag, message, status);
  return guarded("MPI_Improbe", [&](FrontEnd& fe) { return fe.improbe(source, tag, comm, flag, message, status); });
}

LP_EXPORT int MPI_Mrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message, MPI_Status* status) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!front_end) return PMPI_Mrecv(buf, count, type, message, status);
  return guarded("MPI_Mrecv", [&](FrontEnd& fe) { return fe.mrecv(buf, count, type, message, status); });
}

LP_EXPORT int MPI_Imrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message, MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!front_end) return PMPI_Imrecv(buf, count, type, message, request);
  return guarded("MPI_Imrecv", [&](FrontEnd& fe) { return fe.imrecv(buf, count, type, message, request); });
}

// ---- completion ----

// A nonblocking collective across sites in flight: waits for Open MPI's requests make LongPipe's
// progress too (front_end.h, collectives_in_flight).
LP_EXPORT int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!front_end || (!FrontEnd::is_ours(*request) && !front_end->collectives_in_flight())) {
    return PMPI_Wait(request, status);
  }
  return guarded("MPI_Wait", [&](FrontEnd& fe) { return fe.wait(request, status); });
}

LP_EXPORT int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!front_end || (!FrontEnd::is_ours(*request) && !front_end->collectives_in_flight())) {
    return PMPI_Test(request, flag, status);
  }
  return guarded("MPI_Test", [&](FrontEnd& fe) { return fe.test(request, flag, status); });
}

LP_EXPORT int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!front_end) return PMPI_Waitall(count, requests, statuses);
  return guarded("MPI_Waitall", [&](FrontEnd& fe) { return fe.waitall(count, requests, statuses); });
}

LP_EXPORT int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!front_end) return PMPI_Testall(count, requests, flag, statuses);
  return guarded("MPI_Testall", [&](FrontEnd& fe) { return fe.testall(count, requests, flag, statuses); });
}

LP_EXPORT int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!front_end) return PMPI_Waitany(count, requests, index, status);
  return guarded("MPI_Waitany", [&](FrontEnd& fe) { return fe.waitany(count, requests, index, status); });
}

LP_EXPORT int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!front_end) return PMPI_Testany(count, requests, index, flag, status);
  return guarded("MPI_Testany", [&](FrontEnd& fe) { return fe.testany(count, requests, index, flag, status); });
}

LP_EXPORT int MPI_Waitsome(int count, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!front_end) return PMPI_Waitsome(count, requests, outcount, indices, statuses);
  return guarded("MPI_Waitsome",
                 [&](FrontEnd& fe) { return fe.waitsome(count, requests, outcount, indices, statuses); });
}

LP_EXPORT int MPI_Testsome(int count, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!front_end) return PMPI_Testsome(count, requests, outcount, indices, statuses);
  return guarded("MPI_Testsome",
                 [&](FrontEnd& fe) { return fe.testsome(count, requests, outcount, indices, statuses); });
}

LP_EXPORT int MPI_Start(MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!front_end) return PMPI_Start(request);
  return guarded("MPI_Start", [&](FrontEnd& fe) { return fe.start(request); });
}

LP_EXPORT int MPI_Startall(int count, MPI_Request requests[]) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!front_end) return PMPI_Startall(count, requests);
  return guarded("MPI_Startall", [&](FrontEnd& fe) { return fe.startall(count, requests); });
}

LP_EXPORT int MPI_Request_free(MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!front_end) return PMPI_Request_free(request);
  return guarded("MPI_Request_free", [&](FrontEnd& fe) { return fe.request_free(request); });
}

LP_EXPORT int MPI_Cancel(MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!front_end) return PMPI_Cancel(request);
  return guarded("MPI_Cancel", [&](FrontEnd& fe) { return fe.cancel(request); });
}

// Statuses of LongPipe requests are filled with PMPI_Status_set_cancelled: Open MPI's own answer is right.
LP_EXPORT int MPI_Test_cancelled(const MPI_Status* status, int* flag) { return PMPI_Test_cancelled(status, flag); }

LP_EXPORT int MPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!front_end) return PMPI_Request_get_status(request, flag, status);
  return guarded("MPI_Request_get_status", [&](FrontEnd& fe) { return fe.request_get_status(request, flag, status); });
}

// Fortran handles of LongPipe requests and matched messages (used by libshim/mpi/fortran).
LP_EXPORT MPI_Fint MPI_Request_c2f(MPI_Request request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!front_end || !FrontEnd::is_ours(request)) return PMPI_Request_c2f(request);
  return front_end->request_c2f(request);
}

LP_EXPORT MPI_Request MPI_Request_f2c(MPI_Fint request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!front_end) return PMPI_Request_f2c(request);
  return front_end->request_f2c(request);
}

LP_EXPORT MPI_Fint MPI_Message_c2f(MPI_Message message) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!front_end || !FrontEnd::is_ours(message)) return PMPI_Message_c2f(message);
  return front_end->message_c2f(message);
}

LP_EXPORT MPI_Message MPI_Message_f2c(MPI_Fint message) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!front_end) return PMPI_Message_f2c(message);
  return front_end->message_f2c(message);
}

// ---- communicators: each new one gets a LongPipe context id, derived alike by every member ----

LP_EXPORT int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  const lp::mpi::ApiLock::Hold one_caller;
  return registered_from(comm, PMPI_Comm_dup(comm, newcomm), newcomm);
}

LP_EXPORT int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  const lp::mpi::ApiLock::Hold one_caller;
  return registered_from(comm, PMPI_Comm_dup_with_info(comm, info, newcomm), newcomm);
}

LP_EXPORT int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  const lp::mpi::ApiLock::Hold one_caller;
  return registered_from(comm, PMPI_Comm_split(comm, color, key, newcomm), newcomm);
}

LP_EXPORT int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm) {
  const lp::mpi::ApiLock::Hold one_caller;
  return registered_from(comm, PMPI_Comm_split_type(comm, split_type, key, info, newcomm),
                         newcomm);
}

LP_EXPORT int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  const lp::mpi::ApiLock::Hold one_caller;
  return registered_from(comm, PMPI_Comm_create(comm, group, newcomm), newcomm);
}

LP_EXPORT int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm) {
  const lp::mpi::ApiLock::Hold one_caller;
  return registered(PMPI_Comm_create_group(comm, group, tag, newcomm), newcomm,
                    [&](FrontEnd& fe) { fe.register_from_group(comm, tag, *newcomm); });
}

LP_EXPORT int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm bridge_comm, int remote_leader,
                                   int tag, MPI_Comm* newintercomm) {
  const lp::mpi::ApiLock::Hold one_caller;
  return registered(PMPI_Intercomm_create(local_comm, local_leader, bridge_comm, remote_leader, tag, newintercomm),
                    newintercomm, [&](FrontEnd& fe) { fe.register_intercommunicator(*newintercomm); });
}

LP_EXPORT int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm* newintracomm) {
  const lp::mpi::ApiLock::Hold one_caller;
  return registered_from(intercomm, PMPI_Intercomm_merge(intercomm, high, newintracomm), newintracomm);
}

LP_EXPORT int MPI_Cart_create(MPI_Comm old_comm, int ndims, const int dims[], const int periods[], int reorder,
                              MPI_Comm* comm_cart) {
  const lp::mpi::ApiLock::Hold one_caller;
  return registered_from(old_comm, PMPI_Cart_create(old_comm, ndims, dims, periods, reorder, comm_cart), comm_cart);
}

LP_EXPORT int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* new_comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  return registered_from(comm, PMPI_Cart_sub(comm, remain_dims, new_comm), new_comm);
}

LP_EXPORT int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder,
                               MPI_Comm* comm_graph) {
  const lp::mpi::ApiLock::Hold one_caller;
  return registered_from(comm_old, PMPI_Graph_create(comm_old, nnodes, index, edges, reorder, comm_graph), comm_graph);
}

LP_EXPORT int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int nodes[], const int degrees[],
                                    const int targets[], const int weights[], MPI_Info info, int reorder,
                                    MPI_Comm* newcomm) {
  const lp::mpi::ApiLock::Hold one_caller;
  return registered_from(comm_old,
                         PMPI_Dist_graph_create(comm_old, n, nodes, degrees, targets, weights, info, reorder, newcomm),
                         newcomm);
}

LP_EXPORT int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                             const int sourceweights[], int outdegree, const int destinations[],
                                             const int destweights[], MPI_Info info, int reorder,
                                             MPI_Comm* comm_dist_graph) {
  const lp::mpi::ApiLock::Hold one_caller;
  return registered_from(comm_old,
                         PMPI_Dist_graph_create_adjacent(comm_old, indegree, sources, sourceweights, outdegree,
                                                         destinations, destweights, info, reorder, comm_dist_graph),
                         comm_dist_graph);
}

// The new handle is valid only once the request completes: registered then (FrontEnd::comm_idup).
LP_EXPORT int MPI_Comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!front_end) return PMPI_Comm_idup(comm, newcomm, request);
  return guarded_on(comm, "MPI_Comm_idup", [&](FrontEnd& fe) { return fe.comm_idup(comm, newcomm, request); },
                    request);
}

// MPI_Comm_spawn(_multiple), MPI_Comm_connect/accept, MPI_Comm_join and MPI_Comm_get_parent are
// Open MPI's: their intercommunicators join processes of another job, which LongPipe does not
// know, so they and every communicator made from them stay on Open MPI's path (nothing to agree
// on with the other side). A spawned job itself runs without LongPipe (start_front_end).

LP_EXPORT int MPI_Comm_free(MPI_Comm* comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (lp::mpi::collectives) lp::mpi::collectives->forget(*comm);
  if (front_end) front_end->forget_communicator(*comm);
  return PMPI_Comm_free(comm);
}

LP_EXPORT int MPI_Comm_disconnect(MPI_Comm* comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (lp::mpi::collectives) lp::mpi::collectives->forget(*comm);
  if (front_end) front_end->forget_communicator(*comm);
  return PMPI_Comm_disconnect(comm);
}

// ---- collectives: two levels across sites (collectives.h); PMPI_* for everything else ----

LP_EXPORT int MPI_Barrier(MPI_Comm comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) return PMPI_Barrier(comm);
  return guarded("MPI_Barrier", [&](FrontEnd&) { return lp::mpi::collectives->barrier(comm); });
}

LP_EXPORT int MPI_Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) return PMPI_Bcast(buf, count, type, root, comm);
  return guarded("MPI_Bcast", [&](FrontEnd&) { return lp::mpi::collectives->bcast(buf, count, type, root, comm); });
}

LP_EXPORT int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                         MPI_Comm comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
  return guarded("MPI_Reduce", [&](FrontEnd&) {
    return lp::mpi::collectives->reduce(sendbuf, recvbuf, count, type, op, root, comm);
  });
}

LP_EXPORT int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                            MPI_Comm comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
  return guarded("MPI_Allreduce", [&](FrontEnd&) {
    return lp::mpi::collectives->allreduce(sendbuf, recvbuf, count, type, op, comm);
  });
}

LP_EXPORT int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                         MPI_Datatype recvtype, int root, MPI_Comm comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  return guarded("MPI_Gather", [&](FrontEnd&) {
    return lp::mpi::collectives->gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  });
}

LP_EXPORT int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                          const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) {
    return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
  }
  return guarded("MPI_Gatherv", [&](FrontEnd&) {
    return lp::mpi::collectives->gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                                         comm);
  });
}

LP_EXPORT int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                          MPI_Datatype recvtype, int root, MPI_Comm comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) {
    return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  }
  return guarded("MPI_Scatter", [&](FrontEnd&) {
    return lp::mpi::collectives->scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  });
}

LP_EXPORT int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                           void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) {
    return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
  }
  return guarded("MPI_Scatterv", [&](FrontEnd&) {
    return lp::mpi::collectives->scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                                          comm);
  });
}

LP_EXPORT int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  return guarded("MPI_Allgather", [&](FrontEnd&) {
    return lp::mpi::collectives->allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  });
}

LP_EXPORT int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                             const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) {
    return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
  }
  return guarded("MPI_Allgatherv", [&](FrontEnd&) {
    return lp::mpi::collectives->allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
  });
}

LP_EXPORT int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, MPI_Comm comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  return guarded("MPI_Alltoall", [&](FrontEnd&) {
    return lp::mpi::collectives->alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  });
}

LP_EXPORT int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                            void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                            MPI_Comm comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) {
    return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
  }
  return guarded("MPI_Alltoallv", [&](FrontEnd&) {
    return lp::mpi::collectives->alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                                           recvtype, comm);
  });
}

LP_EXPORT int MPI_Alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                            const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[], const int rdispls[],
                            const MPI_Datatype recvtypes[], MPI_Comm comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) {
    return PMPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm);
  }
  return guarded("MPI_Alltoallw", [&](FrontEnd&) {
    return lp::mpi::collectives->alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                                           recvtypes, comm);
  });
}

LP_EXPORT int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype type,
                                 MPI_Op op, MPI_Comm comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm);
  return guarded("MPI_Reduce_scatter", [&](FrontEnd&) {
    return lp::mpi::collectives->reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm);
  });
}

LP_EXPORT int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type,
                                       MPI_Op op, MPI_Comm comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm);
  return guarded("MPI_Reduce_scatter_block", [&](FrontEnd&) {
    return lp::mpi::collectives->reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm);
  });
}

LP_EXPORT int MPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) return PMPI_Scan(sendbuf, recvbuf, count, type, op, comm);
  return guarded("MPI_Scan",
                 [&](FrontEnd&) { return lp::mpi::collectives->scan(sendbuf, recvbuf, count, type, op, comm); });
}

LP_EXPORT int MPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) return PMPI_Exscan(sendbuf, recvbuf, count, type, op, comm);
  return guarded("MPI_Exscan",
                 [&](FrontEnd&) { return lp::mpi::collectives->exscan(sendbuf, recvbuf, count, type, op, comm); });
}

// Nonblocking: a LongPipe request whose progress happens in every MPI call that makes LongPipe's
// (collectives_nonblocking.cpp).
LP_EXPORT int MPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) return PMPI_Ibarrier(comm, request);
  return guarded("MPI_Ibarrier", [&](FrontEnd&) { return lp::mpi::collectives->ibarrier(comm, request); });
}

LP_EXPORT int MPI_Ibcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) return PMPI_Ibcast(buf, count, type, root, comm, request);
  return guarded("MPI_Ibcast",
                 [&](FrontEnd&) { return lp::mpi::collectives->ibcast(buf, count, type, root, comm, request); });
}

LP_EXPORT int MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                             MPI_Comm comm, MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) return PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, request);
  return guarded("MPI_Iallreduce", [&](FrontEnd&) {
    return lp::mpi::collectives->iallreduce(sendbuf, recvbuf, count, type, op, comm, request);
  });
}

// Nonblocking with data (collectives_nonblocking_data.cpp, collectives_nonblocking_rooted.cpp,
// collectives_nonblocking_alltoall.cpp, collectives_nonblocking_reduce_scatter.cpp).
LP_EXPORT int MPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                          MPI_Comm comm, MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) return PMPI_Ireduce(sendbuf, recvbuf, count, type, op, root, comm, request);
  return guarded("MPI_Ireduce", [&](FrontEnd&) {
    return lp::mpi::collectives->ireduce(sendbuf, recvbuf, count, type, op, root, comm, request);
  });
}

LP_EXPORT int MPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                          MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) {
    return PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
  }
  return guarded("MPI_Igather", [&](FrontEnd&) {
    return lp::mpi::collectives->igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                                         request);
  });
}

LP_EXPORT int MPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) {
    return PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
  }
  return guarded("MPI_Iscatter", [&](FrontEnd&) {
    return lp::mpi::collectives->iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                                          request);
  });
}

LP_EXPORT int MPI_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                            MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) {
    return PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
  }
  return guarded("MPI_Iscatterv", [&](FrontEnd&) {
    return lp::mpi::collectives->iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                                           comm, request);
  });
}

LP_EXPORT int MPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) {
    return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
  }
  return guarded("MPI_Iallgather", [&](FrontEnd&) {
    return lp::mpi::collectives->iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
  });
}

LP_EXPORT int MPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                              const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                              MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) {
    return PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request);
  }
  return guarded("MPI_Iallgatherv", [&](FrontEnd&) {
    return lp::mpi::collectives->iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                                             comm, request);
  });
}

LP_EXPORT int MPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) {
    return PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
  }
  return guarded("MPI_Ialltoall", [&](FrontEnd&) {
    return lp::mpi::collectives->ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
  });
}

LP_EXPORT int MPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype type,
                                  MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) return PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm, request);
  return guarded("MPI_Ireduce_scatter", [&](FrontEnd&) {
    return lp::mpi::collectives->ireduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm, request);
  });
}

LP_EXPORT int MPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type,
                                        MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  const lp::mpi::ApiLock::Hold one_caller;
  if (!lp::mpi::collectives) return PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm, request);
  return guarded("MPI_Ireduce_scatter_block", [&](FrontEnd&) {
    return lp::mpi::collectives->ireduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm, request);
  });
}
