// The interposed communicator calls (interpose.h): every communicator Open MPI makes gets a
// LongPipe context id, derived alike by every member with no message sent (context_id.h), and its
// site sub-communicator when it spans sites; freeing one forgets it.
#include "interpose.h"

namespace lp::mpi {
namespace {

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
}  // namespace lp::mpi

using lp::mpi::registered;
using lp::mpi::registered_from;
using lp::mpi::FrontEnd;
using lp::mpi::front_end;
using lp::mpi::guarded;
using lp::mpi::guarded_on;
using lp::mpi::SendMode;

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
