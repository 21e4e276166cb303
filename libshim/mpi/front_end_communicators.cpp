// FrontEnd's communicators: a context id derived at creation by every member alike, with no
// message (context_id.h), and a lifetime that outlasts MPI_Comm_free while requests of the front
// end still name the communicator (MPI: pending operations complete normally; a persistent request
// can still be started).
#include "front_end.h"

#include <algorithm>
#include <cstdio>
#include <functional>

namespace lp::mpi {

namespace {

// World ranks of a group's members in rank order (-1: a process of another job, MPI_Comm_spawn...).
std::vector<int> world_ranks_of(MPI_Group group) {
  MPI_Group world_group;
  PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
  int size = 0;
  PMPI_Group_size(group, &size);
  std::vector<int> ranks(static_cast<std::size_t>(size)), world(static_cast<std::size_t>(size));
  for (int i = 0; i < size; ++i) ranks[static_cast<std::size_t>(i)] = i;
  PMPI_Group_translate_ranks(group, size, ranks.data(), world_group, world.data());
  PMPI_Group_free(&world_group);
  for (int& rank : world) {
    if (rank == MPI_UNDEFINED) rank = -1;
  }
  return world;
}

// A communicator's local group and, if it is an intercommunicator, its remote group.
struct Members {
  std::vector<int> local;
  std::vector<int> remote;
  bool inter = false;
  // Whether every member is a process of this job (only then does LongPipe carry anything on it).
  bool in_this_world() const {
    return std::find(local.begin(), local.end(), -1) == local.end() &&
           std::find(remote.begin(), remote.end(), -1) == remote.end();
  }
};

Members members_of(MPI_Comm comm) {
  Members members;
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  members.inter = inter != 0;
  MPI_Group group;
  PMPI_Comm_group(comm, &group);
  members.local = world_ranks_of(group);
  PMPI_Group_free(&group);
  if (members.inter) {
    PMPI_Comm_remote_group(comm, &group);
    members.remote = world_ranks_of(group);
    PMPI_Group_free(&group);
  }
  return members;
}

// MPI_Comm_idup's request as one of ours: complete when Open MPI's is, and then the new handle
// (written by Open MPI at its completion) is registered. Every wait/test path and every progress
// step polls it (FrontEnd::advance_collectives), so the communicator is LongPipe's before the
// program can learn that it exists.
class IdupRegistration final : public PendingCollective {
 public:
  using Register = std::function<void(MPI_Comm)>;
  IdupRegistration(MPI_Request inner, MPI_Comm* newcomm, Register on_complete)
      : inner_(inner), newcomm_(newcomm), on_complete_(std::move(on_complete)) {}
  bool advance(int* error, int* failed_world) override {
    int done = 0;
    *failed_world = -1;
    *error = PMPI_Test(&inner_, &done, MPI_STATUS_IGNORE);
    if (*error != MPI_SUCCESS) return true;
    if (!done) return false;
    on_complete_(*newcomm_);
    return true;
  }
  bool waits_on_open_mpi() const override { return true; }

 private:
  MPI_Request inner_;
  MPI_Comm* newcomm_;
  Register on_complete_;
};

}  // namespace

std::optional<FrontEnd::Derivation> FrontEnd::count_creation(MPI_Comm parent) {
  CommunicatorInfo* info = lookup(parent);
  if (!info) return std::nullopt;  // MPI_COMM_SELF, a spawned job's intercommunicator...: Open MPI's
  return Derivation{info->lineage, info->creations++};
}

void FrontEnd::register_derived(MPI_Comm comm, const Derivation& derivation, bool site_comm_when_blocking) {
  if (comm == MPI_COMM_NULL) return;
  Members members = members_of(comm);
  if (!members.in_this_world()) return;
  const std::uint64_t lineage = lineage_from_parent(derivation.parent_lineage, derivation.sequence, members.local,
                                                    members.inter ? &members.remote : nullptr);
  install_communicator(comm, lineage, std::move(members.local), members.inter ? &members.remote : nullptr,
                       site_comm_when_blocking);
}

void FrontEnd::register_from_parent(MPI_Comm parent, MPI_Comm comm) {
  if (const std::optional<Derivation> derivation = count_creation(parent)) register_derived(comm, *derivation, false);
}

void FrontEnd::register_from_group(MPI_Comm parent, int tag, MPI_Comm comm) {
  const CommunicatorInfo* info = lookup(parent);
  if (!info || comm == MPI_COMM_NULL) return;
  Members members = members_of(comm);  // the group's world ranks, in the new rank order
  if (!members.in_this_world()) return;
  const std::uint64_t key = group_call_key(info->lineage, tag, members.local);
  const std::uint64_t lineage = lineage_from_group(info->lineage, tag, members.local, group_calls_[key]++);
  install_communicator(comm, lineage, std::move(members.local), nullptr, false);
}

void FrontEnd::register_intercommunicator(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return;
  Members members = members_of(comm);
  if (!members.in_this_world() || !members.inter) return;
  const std::uint64_t key = pair_key(members.local, members.remote);
  const std::uint64_t lineage = lineage_from_two_groups(members.local, members.remote, pair_calls_[key]++);
  install_communicator(comm, lineage, std::move(members.local), &members.remote, false);
}

int FrontEnd::comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request) {
  const std::optional<Derivation> derivation = count_creation(comm);
  MPI_Request inner = MPI_REQUEST_NULL;
  const int rc = PMPI_Comm_idup(comm, newcomm, &inner);
  if (rc != MPI_SUCCESS || !derivation) {
    *request = inner;
    return rc;
  }
  auto on_complete = [this, derivation = *derivation](MPI_Comm made) { register_derived(made, derivation, true); };
  return start_collective(std::make_unique<IdupRegistration>(inner, newcomm, std::move(on_complete)), comm, request);
}

void FrontEnd::install_communicator(MPI_Comm comm, std::uint64_t lineage, std::vector<int> local,
                                    std::vector<int>* remote, bool site_comm_when_blocking) {
  const int context = context_of(lineage);
  for (const auto& [other, info] : communicators_) {
    if (other == comm || info.context != context) continue;
    // context_id.h: a 2^-31 coincidence per pair of communicators; going on could match a
    // message on the wrong one.
    std::fprintf(stderr,
                 "liblongpipe: MPI rank %d: two live communicators would share LongPipe context id %d "
                 "(a hash coincidence); aborting rather than risk mixing their messages\n",
                 world_rank_, context);
    std::fflush(stderr);
    PMPI_Abort(MPI_COMM_WORLD, MPI_ERR_INTERN);
  }
  CommunicatorInfo info(context, remote ? std::move(*remote) : std::move(local), sites_.sites(), my_site_);
  info.lineage = lineage;
  info.site_comm_when_blocking = site_comm_when_blocking;
  communicators_[comm] = std::move(info);
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
