// FrontEnd's communicators: a context id agreed at creation, and a lifetime that outlasts
// MPI_Comm_free while requests of the front end still name the communicator (MPI: pending
// operations complete normally; a persistent request can still be started).
#include "front_end.h"

#include <algorithm>

namespace lp::mpi {

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

void FrontEnd::forget_communicator(MPI_Comm comm) {
  CommunicatorInfo* info = comm == MPI_COMM_WORLD ? nullptr : lookup(comm);
  if (!info) return;
  if (info->references == 0) {
    communicators_.erase(comm);
    return;
  }
  // Open MPI's communicator object must outlive the user's handle too (progress probes and
  // receives on it, a completion reports through its error handler): an inactive persistent
  // receive holds a reference to it, as Open MPI's own pending requests do. Its handle cannot be
  // reused by a new communicator meanwhile, so the info stays under it.
  info->freed = true;
  MPI_Request keep_alive = MPI_REQUEST_NULL;
  if (PMPI_Recv_init(nullptr, 0, MPI_BYTE, 0, 0, comm, &keep_alive) == MPI_SUCCESS) keep_alive_[comm] = keep_alive;
}

void FrontEnd::hold_communicator(MPI_Comm comm) {
  if (CommunicatorInfo* info = lookup(comm)) ++info->references;
}

void FrontEnd::release_communicator(MPI_Comm comm) {
  CommunicatorInfo* info = lookup(comm);
  if (info && --info->references == 0 && info->freed) unreferenced_.push_back(comm);
}

void FrontEnd::forget_unreferenced_communicators() {
  for (MPI_Comm comm : unreferenced_) {
    auto it = communicators_.find(comm);
    if (it == communicators_.end() || it->second.references > 0) continue;
    communicators_.erase(it);
    release_keep_alive(comm);
  }
  unreferenced_.clear();
}

void FrontEnd::release_keep_alive(MPI_Comm comm) {
  auto it = keep_alive_.find(comm);
  if (it == keep_alive_.end()) return;
  PMPI_Request_free(&it->second);
  keep_alive_.erase(it);
}

void FrontEnd::release_keep_alives() {
  while (!keep_alive_.empty()) release_keep_alive(keep_alive_.begin()->first);
}

}  // namespace lp::mpi
