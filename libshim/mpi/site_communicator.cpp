#include "site_communicator.h"

#include <cstddef>

namespace lp::mpi {

MPI_Comm SiteCommunicators::make(MPI_Comm comm, const std::vector<int>& world_of_rank,
                                 const std::vector<int>& site_of_rank, int rank, int context) {
  const int my_site = site_of_rank[static_cast<std::size_t>(rank)];
  std::vector<int> members;  // world ranks of this site's ranks of comm, in comm's rank order
  for (std::size_t r = 0; r < world_of_rank.size(); ++r)
    if (site_of_rank[r] == my_site && world_of_rank[r] >= 0) members.push_back(world_of_rank[r]);
  if (comm == MPI_COMM_WORLD) return make_world(members, tag_of(context));
  // No parent: MPI_COMM_WORLD does not span sites, so neither does any communicator of this job.
  if (parent_ == MPI_COMM_NULL) return MPI_COMM_NULL;
  std::vector<int> parent_ranks;
  for (int world : members) parent_ranks.push_back(parent_rank_of_world_[static_cast<std::size_t>(world)]);
  MPI_Group parent_group{}, site{};  // (MPI_GROUP_NULL would be one more libmpi symbol)
  PMPI_Comm_group(parent_, &parent_group);
  PMPI_Group_incl(parent_group, static_cast<int>(parent_ranks.size()), parent_ranks.data(), &site);
  PMPI_Group_free(&parent_group);
  MPI_Comm local = MPI_COMM_NULL;
  if (PMPI_Comm_create_group(parent_, site, tag_of(context), &local) != MPI_SUCCESS) local = MPI_COMM_NULL;
  PMPI_Group_free(&site);
  return local;
}

MPI_Comm SiteCommunicators::make_world(const std::vector<int>& members, int tag) {
  MPI_Group world_group{}, site{};
  PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
  PMPI_Group_incl(world_group, static_cast<int>(members.size()), members.data(), &site);
  PMPI_Group_free(&world_group);
  MPI_Comm local = MPI_COMM_NULL;
  // At MPI_Init: no application receive exists yet on MPI_COMM_WORLD, and every message of the
  // agreement is received inside the call, so none is left for the application's.
  const int rc = PMPI_Comm_create_group(MPI_COMM_WORLD, site, tag, &local);
  PMPI_Group_free(&site);
  if (rc != MPI_SUCCESS) return MPI_COMM_NULL;
  if (parent_ == MPI_COMM_NULL && PMPI_Comm_dup(local, &parent_) == MPI_SUCCESS) {
    int world_size = 0;
    PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
    parent_rank_of_world_.assign(static_cast<std::size_t>(world_size), -1);
    for (std::size_t i = 0; i < members.size(); ++i)
      parent_rank_of_world_[static_cast<std::size_t>(members[i])] = static_cast<int>(i);
  }
  return local;
}

int SiteCommunicators::tag_of(int context) {
  // Context ids are 0 (MPI_COMM_WORLD) .. 2^31-1; Open MPI's ob1 takes tags up to 2^31-1 too.
  int* upper = nullptr;
  int found = 0;
  PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &upper, &found);
  const long bound = found && upper ? static_cast<long>(*upper) + 1 : 32768;  // MPI's least tag_ub + 1
  return static_cast<int>(static_cast<long>(context) % bound);
}

void SiteCommunicators::release() {
  if (parent_ != MPI_COMM_NULL) PMPI_Comm_free(&parent_);
}

}  // namespace lp::mpi
