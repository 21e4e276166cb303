// SiteCommunicators: makes the site sub-communicator of a communicator whose ranks span sites, among
// that site's ranks alone, so that making it sends nothing across the long link.
//
// PMPI_Comm_create_group with the site's group, worked out by every member from the site map.
// Open MPI 4.1 agrees on the new communicator's context id with point-to-point messages on the
// parent communicator, tagged with the call's tag, among the group's members only. The parent is
// therefore never the application's communicator (an application receive with that tag or
// MPI_ANY_TAG, or the application's own Comm_create_group with that tag, could take those messages)
// but a private one:
// - MPI_COMM_WORLD's own sub-communicator is made at MPI_Init, before the application can have
//   posted anything, with MPI_COMM_WORLD as the parent;
// - every later one has a private duplicate of it as the parent (this site's ranks of
//   MPI_COMM_WORLD, used for nothing else).
// The tag is the communicator's LongPipe context id (the same at every member, distinct for live
// communicators; context_id.h): two threads that make sub-communicators at once under
// MPI_THREAD_MULTIPLE, in whatever order at each member, never take each other's messages.
#pragma once

#include <vector>

#include "mpi_api.h"

namespace lp::mpi {

class SiteCommunicators {
 public:
  SiteCommunicators() = default;
  SiteCommunicators(const SiteCommunicators&) = delete;
  SiteCommunicators& operator=(const SiteCommunicators&) = delete;

  // The sub-communicator of the ranks of `comm` at this rank's site, in `comm`'s rank order
  // (MPI_COMM_NULL if Open MPI fails). `world_of_rank` and `site_of_rank`: each rank's world rank
  // and site; `rank`: this rank in `comm`; `context`: the LongPipe context id of `comm`. Every rank
  // of `comm` at this site calls it at the same point in its sequence of MPI calls (the creation of
  // `comm`, or its first blocking collective); MPI_COMM_WORLD's comes first, at MPI_Init.
  MPI_Comm make(MPI_Comm comm, const std::vector<int>& world_of_rank, const std::vector<int>& site_of_rank, int rank,
                int context);

  // Before PMPI_Finalize: frees the private parent.
  void release();
  // A forked child: the parent communicator is the parent process's; dropped without MPI calls.
  void abandon_after_fork() { parent_ = MPI_COMM_NULL; }

 private:
  // MPI_COMM_WORLD's sub-communicator (parent MPI_COMM_WORLD) and the private parent of the others.
  MPI_Comm make_world(const std::vector<int>& members, int tag);
  // The tag of the create_group call for a communicator with LongPipe context id `context`.
  static int tag_of(int context);

  MPI_Comm parent_ = MPI_COMM_NULL;     // private duplicate of this site's ranks of MPI_COMM_WORLD
  std::vector<int> parent_rank_of_world_;  // -1: at another site
};

}  // namespace lp::mpi
