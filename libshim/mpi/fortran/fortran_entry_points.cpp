// The Fortran entry points of every MPI call the C front end interposes, in every name Open MPI's
// Fortran bindings export: mpif.h and `use mpi` (mpi_send_, mpi_send, mpi_send__, MPI_SEND) and
// `use mpi_f08` (mpi_send_f08_). Open MPI's own entry points call PMPI_* and would bypass the C
// front end; these convert the arguments (fortran_arguments.h) and call the C MPI_* functions, so the
// front end's versions run, whichever language the program is written in.
//
// Calls whose C and Fortran forms differ by more than argument conversion (Init's argc/argv, array
// arguments, 1-based indices) have an adapter below with the C-like signature the table calls.
#include <mutex>
#include <set>
#include <vector>

#include "fortran_arguments.h"
#include "fortran_entry_macros.h"
#include "request_arrays.h"

namespace lp::mpi_fortran {
namespace {

// The Fortran MPI_Init has no argc/argv.
int init() { return MPI_Init(nullptr, nullptr); }
int init_thread(int required, int* provided) { return MPI_Init_thread(nullptr, nullptr, required, provided); }

// Fortran indices count from 1; MPI_UNDEFINED stays as it is.
void to_fortran_index(int* index) {
  if (*index != MPI_UNDEFINED) ++*index;
}
void to_fortran_indices(int* indices, int count) {
  if (count == MPI_UNDEFINED) return;
  for (int i = 0; i < count; ++i) ++indices[i];
}

// A completion call over a request array and a status array: Waitall, Testall, Startall and (with
// their outputs fixed after) Waitsome, Testsome. The requests and statuses are written back on
// success and on MPI_ERR_IN_STATUS (some statuses hold errors).
template <class Call>
int with_arrays(int count, MPI_Fint* requests, MPI_Fint* statuses, Call call, const int* filled = nullptr) {
  RequestArray c_requests(requests, count);
  StatusArray c_statuses(statuses, statuses ? count : 0);
  const int code = call(c_requests.data(), c_statuses.data());
  if (code == MPI_SUCCESS || code == MPI_ERR_IN_STATUS) {
    c_requests.write_back();
    c_statuses.write_back(filled ? (*filled == MPI_UNDEFINED ? 0 : *filled) : count);
  }
  return code;
}

int waitall(int count, MPI_Fint* requests, MPI_Fint* statuses) {
  return with_arrays(count, requests, statuses, [&](MPI_Request* r, MPI_Status* s) { return MPI_Waitall(count, r, s); });
}
int testall(int count, MPI_Fint* requests, int* flag, MPI_Fint* statuses) {
  int completed = 0;
  return with_arrays(count, requests, statuses, [&](MPI_Request* r, MPI_Status* s) {
    const int code = MPI_Testall(count, r, flag, s);
    completed = *flag ? count : 0;
    return code;
  }, &completed);
}
int startall(int count, MPI_Fint* requests) {
  return with_arrays(count, requests, nullptr, [&](MPI_Request* r, MPI_Status*) { return MPI_Startall(count, r); });
}
template <auto Some>  // MPI_Waitsome or MPI_Testsome
int some(int count, MPI_Fint* requests, int* outcount, int* indices, MPI_Fint* statuses) {
  const int code = with_arrays(count, requests, statuses,
                               [&](MPI_Request* r, MPI_Status* s) { return Some(count, r, outcount, indices, s); },
                               outcount);
  if (code == MPI_SUCCESS || code == MPI_ERR_IN_STATUS) to_fortran_indices(indices, *outcount);
  return code;
}
int waitany(int count, MPI_Fint* requests, int* index, MPI_Status* status) {
  const int code = with_arrays(count, requests, nullptr, [&](MPI_Request* r, MPI_Status*) { return MPI_Waitany(count, r, index, status); });
  if (code == MPI_SUCCESS) to_fortran_index(index);
  return code;
}
int testany(int count, MPI_Fint* requests, int* index, int* flag, MPI_Status* status) {
  const int code = with_arrays(count, requests, nullptr, [&](MPI_Request* r, MPI_Status*) { return MPI_Testany(count, r, index, flag, status); });
  if (code == MPI_SUCCESS) to_fortran_index(index);
  return code;
}

// Open MPI's own (not interposed): called through the pointer found at run time (mpi_for_fortran.h).
int get_count(const MPI_Status* status, MPI_Datatype type, int* count) { return MPI_Get_count(status, type, count); }
int get_elements(const MPI_Status* status, MPI_Datatype type, int* count) {
  return MPI_Get_elements(status, type, count);
}

// Distributed graphs: the weights may be Fortran sentinels.
int dist_graph_create(MPI_Comm comm, int n, const int* sources, const int* degrees, const int* destinations,
                      GraphWeights weights, MPI_Info info, int reorder, MPI_Comm* graph) {
  return MPI_Dist_graph_create(comm, n, sources, degrees, destinations, weights.c, info, reorder, graph);
}
int dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int* sources, GraphWeights source_weights,
                               int outdegree, const int* destinations, GraphWeights destination_weights,
                               MPI_Info info, int reorder, MPI_Comm* graph) {
  return MPI_Dist_graph_create_adjacent(comm, indegree, sources, source_weights.c, outdegree, destinations,
                                        destination_weights.c, info, reorder, graph);
}

// Alltoallw: the datatype arrays hold one handle per peer (the remote group's size on an
// intercommunicator); the send types mean nothing with MPI_IN_PLACE.
std::vector<MPI_Datatype> c_types(FortranTypes types, int count) {
  std::vector<MPI_Datatype> c(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) c[static_cast<std::size_t>(i)] = MPI_Type_f2c(types.handles[i]);
  return c;
}
int alltoallw(const void* send, const int* send_counts, const int* send_displacements, FortranTypes send_types,
              void* receive, const int* receive_counts, const int* receive_displacements, FortranTypes receive_types,
              MPI_Comm comm) {
  int inter = 0, peers = 0;
  int code = MPI_Comm_test_inter(comm, &inter);
  if (code == MPI_SUCCESS) code = inter ? MPI_Comm_remote_size(comm, &peers) : MPI_Comm_size(comm, &peers);
  if (code != MPI_SUCCESS) return code;
  const std::vector<MPI_Datatype> receive_c = c_types(receive_types, peers);
  const std::vector<MPI_Datatype> send_c = send == MPI_IN_PLACE ? receive_c : c_types(send_types, peers);
  return MPI_Alltoallw(send, send_counts, send_displacements, send_c.data(), receive, receive_counts,
                       receive_displacements, receive_c.data(), comm);
}
// Ialltoallw likewise, but Open MPI 4.1's nonblocking Alltoallw keeps pointers to the type arrays and
// reads them when the request completes (to release the types), so a converted array must outlive
// the request (Open MPI's own Fortran binding frees it at once and crashes there). The arrays are
// interned: one stored copy per distinct list of types, kept for the process's life, so memory
// grows with the distinct lists a program uses, not with its calls.
const MPI_Datatype* interned(const std::vector<MPI_Datatype>& types) {
  static std::mutex mutex;
  static std::set<std::vector<MPI_Datatype>> stored;
  const std::lock_guard lock(mutex);
  return stored.insert(types).first->data();
}

int ialltoallw(const void* send, const int* send_counts, const int* send_displacements, FortranTypes send_types,
               void* receive, const int* receive_counts, const int* receive_displacements, FortranTypes receive_types,
               MPI_Comm comm, MPI_Request* request) {
  int inter = 0, peers = 0;
  int code = MPI_Comm_test_inter(comm, &inter);
  if (code == MPI_SUCCESS) code = inter ? MPI_Comm_remote_size(comm, &peers) : MPI_Comm_size(comm, &peers);
  if (code != MPI_SUCCESS) return code;
  const std::vector<MPI_Datatype> receive_c = c_types(receive_types, peers);
  const std::vector<MPI_Datatype> send_c = send == MPI_IN_PLACE ? receive_c : c_types(send_types, peers);
  return MPI_Ialltoallw(send, send_counts, send_displacements, interned(send_c), receive, receive_counts,
                        receive_displacements, interned(receive_c), comm, request);
}

}  // namespace
}  // namespace lp::mpi_fortran

using namespace lp::mpi_fortran;

// start and end
LP_FORTRAN_CALL(init, INIT, init, 0)
LP_FORTRAN_CALL(init_thread, INIT_THREAD, init_thread, 2)
LP_FORTRAN_MPI(finalize, FINALIZE, MPI_Finalize, 0)
LP_FORTRAN_MPI(abort, ABORT, MPI_Abort, 2)
LP_FORTRAN_MPI(query_thread, QUERY_THREAD, MPI_Query_thread, 1)
// sends
LP_FORTRAN_MPI(send, SEND, MPI_Send, 6)
LP_FORTRAN_MPI(ssend, SSEND, MPI_Ssend, 6)
LP_FORTRAN_MPI(bsend, BSEND, MPI_Bsend, 6)
LP_FORTRAN_MPI(rsend, RSEND, MPI_Rsend, 6)
LP_FORTRAN_MPI(isend, ISEND, MPI_Isend, 7)
LP_FORTRAN_MPI(issend, ISSEND, MPI_Issend, 7)
LP_FORTRAN_MPI(ibsend, IBSEND, MPI_Ibsend, 7)
LP_FORTRAN_MPI(irsend, IRSEND, MPI_Irsend, 7)
LP_FORTRAN_MPI(send_init, SEND_INIT, MPI_Send_init, 7)
LP_FORTRAN_MPI(ssend_init, SSEND_INIT, MPI_Ssend_init, 7)
LP_FORTRAN_MPI(bsend_init, BSEND_INIT, MPI_Bsend_init, 7)
LP_FORTRAN_MPI(rsend_init, RSEND_INIT, MPI_Rsend_init, 7)
LP_FORTRAN_MPI(start, START, MPI_Start, 1)
LP_FORTRAN_CALL(startall, STARTALL, startall, 2)
// receives and probes
LP_FORTRAN_MPI(recv, RECV, MPI_Recv, 7)
LP_FORTRAN_MPI(irecv, IRECV, MPI_Irecv, 7)
LP_FORTRAN_MPI(recv_init, RECV_INIT, MPI_Recv_init, 7)
LP_FORTRAN_MPI(probe, PROBE, MPI_Probe, 4)
LP_FORTRAN_MPI(iprobe, IPROBE, MPI_Iprobe, 5)
LP_FORTRAN_MPI(mprobe, MPROBE, MPI_Mprobe, 5)
LP_FORTRAN_MPI(improbe, IMPROBE, MPI_Improbe, 6)
LP_FORTRAN_MPI(mrecv, MRECV, MPI_Mrecv, 5)
LP_FORTRAN_MPI(imrecv, IMRECV, MPI_Imrecv, 5)
LP_FORTRAN_MPI(sendrecv, SENDRECV, MPI_Sendrecv, 12)
LP_FORTRAN_MPI(sendrecv_replace, SENDRECV_REPLACE, MPI_Sendrecv_replace, 9)
// collectives (two levels across sites)
LP_FORTRAN_MPI(barrier, BARRIER, MPI_Barrier, 1)
LP_FORTRAN_MPI(bcast, BCAST, MPI_Bcast, 5)
LP_FORTRAN_MPI(reduce, REDUCE, MPI_Reduce, 7)
LP_FORTRAN_MPI(allreduce, ALLREDUCE, MPI_Allreduce, 6)
// (recvcounts, sendcounts, displs: INTEGER arrays, the same storage as C's int arrays)
LP_FORTRAN_MPI(gather, GATHER, MPI_Gather, 8)
LP_FORTRAN_MPI(gatherv, GATHERV, MPI_Gatherv, 9)
LP_FORTRAN_MPI(scatter, SCATTER, MPI_Scatter, 8)
LP_FORTRAN_MPI(scatterv, SCATTERV, MPI_Scatterv, 9)
LP_FORTRAN_MPI(allgather, ALLGATHER, MPI_Allgather, 7)
LP_FORTRAN_MPI(allgatherv, ALLGATHERV, MPI_Allgatherv, 8)
LP_FORTRAN_MPI(alltoall, ALLTOALL, MPI_Alltoall, 7)
LP_FORTRAN_MPI(alltoallv, ALLTOALLV, MPI_Alltoallv, 9)
LP_FORTRAN_CALL(alltoallw, ALLTOALLW, alltoallw, 9)
LP_FORTRAN_MPI(reduce_scatter, REDUCE_SCATTER, MPI_Reduce_scatter, 6)
LP_FORTRAN_MPI(reduce_scatter_block, REDUCE_SCATTER_BLOCK, MPI_Reduce_scatter_block, 6)
LP_FORTRAN_MPI(scan, SCAN, MPI_Scan, 6)
LP_FORTRAN_MPI(exscan, EXSCAN, MPI_Exscan, 6)
LP_FORTRAN_MPI(ibarrier, IBARRIER, MPI_Ibarrier, 2)
LP_FORTRAN_MPI(ibcast, IBCAST, MPI_Ibcast, 6)
LP_FORTRAN_MPI(iallreduce, IALLREDUCE, MPI_Iallreduce, 7)
LP_FORTRAN_MPI(ireduce, IREDUCE, MPI_Ireduce, 8)
LP_FORTRAN_MPI(igather, IGATHER, MPI_Igather, 9)
LP_FORTRAN_MPI(iscatter, ISCATTER, MPI_Iscatter, 9)
LP_FORTRAN_MPI(iscatterv, ISCATTERV, MPI_Iscatterv, 10)
LP_FORTRAN_MPI(iallgather, IALLGATHER, MPI_Iallgather, 8)
LP_FORTRAN_MPI(iallgatherv, IALLGATHERV, MPI_Iallgatherv, 9)
LP_FORTRAN_MPI(ialltoall, IALLTOALL, MPI_Ialltoall, 8)
LP_FORTRAN_MPI(ireduce_scatter, IREDUCE_SCATTER, MPI_Ireduce_scatter, 7)
LP_FORTRAN_MPI(ireduce_scatter_block, IREDUCE_SCATTER_BLOCK, MPI_Ireduce_scatter_block, 7)
LP_FORTRAN_MPI(igatherv, IGATHERV, MPI_Igatherv, 10)
LP_FORTRAN_MPI(ialltoallv, IALLTOALLV, MPI_Ialltoallv, 10)
LP_FORTRAN_CALL(ialltoallw, IALLTOALLW, ialltoallw, 10)
LP_FORTRAN_MPI(iscan, ISCAN, MPI_Iscan, 7)
LP_FORTRAN_MPI(iexscan, IEXSCAN, MPI_Iexscan, 7)
// completion
LP_FORTRAN_MPI(wait, WAIT, MPI_Wait, 2)
LP_FORTRAN_MPI(test, TEST, MPI_Test, 3)
LP_FORTRAN_CALL(waitall, WAITALL, waitall, 3)
LP_FORTRAN_CALL(testall, TESTALL, testall, 4)
LP_FORTRAN_CALL(waitany, WAITANY, waitany, 4)
LP_FORTRAN_CALL(testany, TESTANY, testany, 5)
LP_FORTRAN_CALL(waitsome, WAITSOME, some<MPI_Waitsome>, 5)
LP_FORTRAN_CALL(testsome, TESTSOME, some<MPI_Testsome>, 5)
LP_FORTRAN_MPI(request_free, REQUEST_FREE, MPI_Request_free, 1)
LP_FORTRAN_MPI(cancel, CANCEL, MPI_Cancel, 1)
LP_FORTRAN_MPI(test_cancelled, TEST_CANCELLED, MPI_Test_cancelled, 2)
LP_FORTRAN_MPI(request_get_status, REQUEST_GET_STATUS, MPI_Request_get_status, 3)
LP_FORTRAN_CALL(get_count, GET_COUNT, get_count, 3)
LP_FORTRAN_CALL(get_elements, GET_ELEMENTS, get_elements, 3)
// communicators
LP_FORTRAN_MPI(comm_dup, COMM_DUP, MPI_Comm_dup, 2)
LP_FORTRAN_MPI(comm_split, COMM_SPLIT, MPI_Comm_split, 4)
LP_FORTRAN_MPI(comm_create, COMM_CREATE, MPI_Comm_create, 3)
LP_FORTRAN_MPI(comm_free, COMM_FREE, MPI_Comm_free, 1)
LP_FORTRAN_MPI(comm_dup_with_info, COMM_DUP_WITH_INFO, MPI_Comm_dup_with_info, 3)
LP_FORTRAN_MPI(comm_split_type, COMM_SPLIT_TYPE, MPI_Comm_split_type, 5)
LP_FORTRAN_MPI(comm_create_group, COMM_CREATE_GROUP, MPI_Comm_create_group, 4)
LP_FORTRAN_MPI(comm_disconnect, COMM_DISCONNECT, MPI_Comm_disconnect, 1)
LP_FORTRAN_MPI(intercomm_create, INTERCOMM_CREATE, MPI_Intercomm_create, 6)
LP_FORTRAN_MPI(intercomm_merge, INTERCOMM_MERGE, MPI_Intercomm_merge, 3)
LP_FORTRAN_MPI(cart_create, CART_CREATE, MPI_Cart_create, 6)
LP_FORTRAN_MPI(cart_sub, CART_SUB, MPI_Cart_sub, 3)
LP_FORTRAN_MPI(graph_create, GRAPH_CREATE, MPI_Graph_create, 6)
LP_FORTRAN_CALL(dist_graph_create, DIST_GRAPH_CREATE, dist_graph_create, 9)
LP_FORTRAN_CALL(dist_graph_create_adjacent, DIST_GRAPH_CREATE_ADJACENT, dist_graph_create_adjacent, 10)
