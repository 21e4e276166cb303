// The interposed point-to-point calls (interpose.h): sends in every mode, receives, Sendrecv,
// probes and matched receives. A send to, or a receive from, a same-site rank of MPI_COMM_WORLD
// goes to Open MPI after an inline check (FrontEnd::send_stays_on_open_mpi); the rest the front
// end routes.
#include "interpose.h"

using lp::mpi::FrontEnd;
using lp::mpi::front_end;
using lp::mpi::guarded;
using lp::mpi::guarded_on;
using lp::mpi::SendMode;

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
