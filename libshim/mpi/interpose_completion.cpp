// The interposed completion calls (interpose.h): waits and tests, Start, Request_free, Cancel,
// request status and the Fortran handles of LongPipe's requests and matched messages. A request of
// Open MPI's goes straight to Open MPI while no nonblocking collective across sites is in flight.
#include "interpose.h"

using lp::mpi::FrontEnd;
using lp::mpi::front_end;
using lp::mpi::guarded;
using lp::mpi::guarded_on;
using lp::mpi::SendMode;

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
