#include "collectives.h"

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <utility>

#include "collective_buffers.h"
#include "settings_registry.h"

namespace lp::mpi {
namespace {

// A rank that waits for its leader to come back from across the link waits for about one one-way
// delay. Open MPI's own wait spins (or calls sched_yield) all that time; when a site's ranks share
// cores with the leader, its engine and the link, that spinning slows the collective itself
// (measured on geo, 4 ranks per site on 2 cores: Allreduce of 4 MiB took 1188 ms per call, against
// 500 ms with one rank per site). So such a rank polls its request and sleeps in between, never
// longer than kLongestNap: microseconds against the hundreds of milliseconds it waits.
constexpr int kSpinsBeforeNap = 100;
constexpr long kLongestNapNs = 1'000'000;

int wait_sleeping(MPI_Request* request) {
  // A wait for Open MPI alone: the other threads' calls run meanwhile (api_lock.h).
  const ApiLock::Unheld others_may_call;
  long nap_ns = 10'000;
  for (int polls = 0;; ++polls) {
    int done = 0;
    const int rc = PMPI_Test(request, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS || done) return rc;
    if (polls < kSpinsBeforeNap) continue;
    const timespec nap{0, nap_ns};
    nanosleep(&nap, nullptr);
    nap_ns = std::min(2 * nap_ns, kLongestNapNs);
  }
}

// A broadcast on the site's sub-communicator, waited for as above (every rank takes the nonblocking
// form: MPI never matches a blocking collective with a nonblocking one).
int site_bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm local) {
  MPI_Request request = MPI_REQUEST_NULL;
  const int rc = PMPI_Ibcast(buffer, count, type, root, local, &request);
  return rc == MPI_SUCCESS ? wait_sleeping(&request) : rc;
}

// The tags of a communicator's collective messages count up and wrap here (MPI tags are ints; the
// engine carries any int32).
constexpr int kMaxCollectiveTag = std::numeric_limits<int>::max();

}  // namespace

SiteCollectives::SiteCollectives(FrontEnd& front_end)
    : front_end_(front_end),
      setting_(parse_collectives_setting(settings::setting_value("LONGPIPE_COLLECTIVES").value_or(""))) {}

SiteCollectives::~SiteCollectives() {
  for (auto& [comm, spanning] : spanning_) PMPI_Comm_free(&spanning->local);
  site_communicators_.release();
  const std::string& path = front_end_.statistics_path();
  if (path.empty()) return;
  std::ofstream out(path + ".collectives");
  out << statistics_.json(setting_) << "\n";
}

void SiteCollectives::forget(MPI_Comm comm) {
  auto it = spanning_.find(comm);
  if (it == spanning_.end()) return;
  settle(*it->second);  // nonblocking collectives on it may still have to post on `local`
  PMPI_Comm_free(&it->second->local);
  spanning_.erase(it);
}

void SiteCollectives::abandon_after_fork() {
  for (auto& [comm, spanning] : spanning_) (void)spanning.release();  // the parent's: leaked on purpose
  spanning_.clear();
  site_communicators_.abandon_after_fork();
}

int SiteCollectives::next_tag(Spanning& spanning) {
  const int tag = spanning.sequence;
  spanning.sequence = spanning.sequence == kMaxCollectiveTag ? 0 : spanning.sequence + 1;
  return tag;
}

SiteCollectives::Spanning* SiteCollectives::spanning_of(MPI_Comm comm, bool may_create) {
  const CommunicatorInfo* info = front_end_.communicator_info(comm);
  // Every member decides alike: the setting is the job's, the communicator is the same.
  if (setting_ != CollectivePath::kSite || !info || !info->spans_sites) return nullptr;
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  if (inter) return nullptr;
  auto it = spanning_.find(comm);
  if (it != spanning_.end() && it->second->context != info->context) {  // a handle reused after a free we missed
    PMPI_Comm_free(&it->second->local);
    spanning_.erase(it);
    it = spanning_.end();
  }
  if (it == spanning_.end()) {
    // An MPI_Comm_idup communicator makes it at its first blocking collective here (a point
    // every member reaches in the same order); its nonblocking ones before it are Open MPI's.
    if (info->site_comm_when_blocking && !may_create) return nullptr;
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    // Copied: `info` may go while the lock is given up in the creation below (api_lock.h).
    const int context = info->context;
    std::vector<int> world_of_rank = info->world_of_peer;
    std::vector<int> site_of_rank;
    for (int world : world_of_rank) site_of_rank.push_back(world >= 0 ? front_end_.site_of_world(world) : -1);
    // This site's ranks in rank order (leader: the lowest), made by the site's ranks alone from the
    // site map: nothing crosses the long link (site_communicator.h).
    const MPI_Comm local = site_communicators_.make(comm, world_of_rank, site_of_rank, rank, context);
    if (local == MPI_COMM_NULL) return nullptr;
    it = spanning_.emplace(comm, std::make_unique<Spanning>(context, local, SiteLayout(site_of_rank, rank),
                                                             std::move(world_of_rank))).first;
  }
  return it->second.get();
}

void SiteCollectives::prepare(MPI_Comm comm) { (void)spanning_of(comm, true); }

SiteCollectives::Spanning* SiteCollectives::site_path(MPI_Comm comm, Collective collective, MPI_Op op,
                                                      bool needs_rank_order) {
  const bool nonblocking = is_nonblocking(collective);
  Spanning* found = spanning_of(comm, !nonblocking);
  if (found && op != MPI_OP_NULL) {
    // A non-commutative operation must see the ranks in order: per site first only if each
    // site's ranks are consecutive.
    int commutative = 1;
    PMPI_Op_commutative(op, &commutative);
    if (!commutative && !found->layout.blocked()) found = nullptr;
  }
  if (found && needs_rank_order && !found->layout.blocked()) found = nullptr;
  statistics_.count(collective, found ? CollectivePath::kSite : CollectivePath::kNative);
  if (found && !nonblocking) settle(*found);  // the collectives on `local` stay in call order
  return found;
}

std::optional<SiteCollectives::SiteChannel> SiteCollectives::site_channel(MPI_Comm comm, Collective collective,
                                                                         bool nonblocking) {
  Spanning* found = spanning_of(comm, !nonblocking);
  statistics_.count(collective, found ? CollectivePath::kSite : CollectivePath::kNative);
  if (!found) return std::nullopt;
  const int tag = next_tag(*found);
  return SiteChannel{found->local, found->layout, found->world_of_rank, private_context(*found), tag};
}

int SiteCollectives::barrier(MPI_Comm comm) {
  Spanning* spanning = site_path(comm, Collective::kBarrier);
  if (!spanning) return PMPI_Barrier(comm);
  const int tag = next_tag(*spanning);
  int rc = PMPI_Barrier(spanning->local);  // everyone of this site has arrived ...
  if (rc != MPI_SUCCESS) return rc;
  const SiteLayout& layout = spanning->layout;
  if (layout.is_leader()) {  // ... tell the other sites, hear from them ...
    const std::vector<std::byte> nothing;
    for (int site = 0; site < layout.site_count() && rc == MPI_SUCCESS; ++site) {
      if (site == layout.my_site_index()) continue;
      const int world = spanning->world_of_rank[static_cast<std::size_t>(layout.leader(site))];
      rc = front_end_.send_bytes(world, private_context(*spanning), tag, nothing, comm);
    }
    std::vector<std::byte> body;
    for (int site = 0; site < layout.site_count() && rc == MPI_SUCCESS; ++site) {
      if (site == layout.my_site_index()) continue;
      const int world = spanning->world_of_rank[static_cast<std::size_t>(layout.leader(site))];
      rc = front_end_.receive_bytes(world, private_context(*spanning), tag, comm, &body);
    }
  }
  return release_site(layout, spanning->local, rc, comm);  // ... and let this site go
}

int SiteCollectives::release_site(const SiteLayout& layout, MPI_Comm local, int leader_status, MPI_Comm comm) {
  int status = leader_status;
  const int rc = site_bcast(&status, 1, MPI_INT, 0, local);
  if (rc != MPI_SUCCESS) return rc;
  // The leader has reported its own error already (front end: the communicator's handler).
  if (status != MPI_SUCCESS && !layout.is_leader()) PMPI_Comm_call_errhandler(comm, status);
  return status;
}

int SiteCollectives::bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  Spanning* spanning = site_path(comm, Collective::kBcast);
  if (!spanning) return PMPI_Bcast(buffer, count, type, root, comm);
  const int tag = next_tag(*spanning);
  const SiteLayout& layout = spanning->layout;
  const int root_site = layout.site_index_of(root);
  int rc = MPI_SUCCESS;
  if (layout.my_site_index() == root_site) {
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    if (rank == root) {  // the root sends straight to every other site's leader, then its own site
      const std::vector<std::byte> packed = pack(buffer, count, type, comm, &rc);
      if (rc != MPI_SUCCESS) return rc;
      for (int site = 0; site < layout.site_count() && rc == MPI_SUCCESS; ++site) {
        if (site == root_site) continue;
        const int world = spanning->world_of_rank[static_cast<std::size_t>(layout.leader(site))];
        rc = front_end_.send_bytes(world, private_context(*spanning), tag, packed, comm);
      }
      if (rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Bcast(buffer, count, type, layout.local_rank_of(root), spanning->local);
  }
  if (layout.is_leader()) {
    std::vector<std::byte> packed;
    const int root_world = spanning->world_of_rank[static_cast<std::size_t>(root)];
    rc = front_end_.receive_bytes(root_world, private_context(*spanning), tag, comm, &packed);
    if (rc == MPI_SUCCESS) rc = unpack(packed, buffer, count, type, comm);
  }
  // The site's ranks learn whether the data came (none waits for data that never will).
  rc = release_site(layout, spanning->local, rc, comm);
  if (rc != MPI_SUCCESS) return rc;
  return PMPI_Bcast(buffer, count, type, 0, spanning->local);
}

int SiteCollectives::combine_partials(Spanning& spanning, int tag, void* mine, void* result, int count,
                                      MPI_Datatype type, MPI_Op op, MPI_Comm comm, int root) {
  const SiteLayout& layout = spanning.layout;
  const int me = layout.my_site_index();
  const int context = private_context(spanning);
  int rc = MPI_SUCCESS;
  const bool all = root < 0;  // Allreduce: every leader combines; Reduce: the root only
  const bool combines = all || layout.site_index_of(root) == me;
  // Send this site's partial result where it is combined.
  if (!combines || (all && layout.site_count() > 1)) {
    const std::vector<std::byte> packed = pack(mine, count, type, comm, &rc);
    for (int site = 0; site < layout.site_count() && rc == MPI_SUCCESS; ++site) {
      if (site == me) continue;
      const int rank = all ? layout.leader(site) : root;
      rc = front_end_.send_bytes(spanning.world_of_rank[static_cast<std::size_t>(rank)], context, tag, packed, comm);
      if (!all) break;
    }
    if (rc != MPI_SUCCESS || !combines) return rc;
  }
  // Take the other sites' partials and combine all in site order: ((p0 op p1) op p2) ...
  std::vector<std::unique_ptr<TypedScratch>> received(static_cast<std::size_t>(layout.site_count()));
  std::vector<void*> partial(static_cast<std::size_t>(layout.site_count()), mine);
  std::vector<std::byte> packed;
  for (int site = 0; site < layout.site_count(); ++site) {
    if (site == me) continue;
    const int world = spanning.world_of_rank[static_cast<std::size_t>(layout.leader(site))];
    rc = front_end_.receive_bytes(world, context, tag, comm, &packed);
    auto& scratch = received[static_cast<std::size_t>(site)];
    scratch = std::make_unique<TypedScratch>(count, type);
    if (rc == MPI_SUCCESS) rc = unpack(packed, scratch->base(), count, type, comm);
    if (rc != MPI_SUCCESS) return rc;
    partial[static_cast<std::size_t>(site)] = scratch->base();
  }
  void* accumulated = partial[0];
  for (std::size_t site = 1; site < partial.size(); ++site) {
    // PMPI_Reduce_local(in, inout): inout = in op inout, so the earlier sites stay on the left.
    rc = PMPI_Reduce_local(accumulated, partial[site], count, type, op);
    if (rc != MPI_SUCCESS) return rc;
    accumulated = partial[site];
  }
  if (accumulated == result) return MPI_SUCCESS;
  const std::vector<std::byte> final_result = pack(accumulated, count, type, comm, &rc);
  return rc == MPI_SUCCESS ? unpack(final_result, result, count, type, comm) : rc;
}

int SiteCollectives::reduce(const void* send, void* receive, int count, MPI_Datatype type, MPI_Op op, int root,
                            MPI_Comm comm) {
  Spanning* spanning = site_path(comm, Collective::kReduce, op);
  if (!spanning) return PMPI_Reduce(send, receive, count, type, op, root, comm);
  const int tag = next_tag(*spanning);
  const SiteLayout& layout = spanning->layout;
  if (layout.site_index_of(root) == layout.my_site_index()) {
    // The root's site reduces to the root itself (MPI_IN_PLACE passes through), which then
    // combines the other sites' partials.
    int rc = PMPI_Reduce(send, receive, count, type, op, layout.local_rank_of(root), spanning->local);
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    if (rc != MPI_SUCCESS || rank != root) return rc;
    return combine_partials(*spanning, tag, receive, receive, count, type, op, comm, root);
  }
  if (!layout.is_leader()) return PMPI_Reduce(send, nullptr, count, type, op, 0, spanning->local);
  TypedScratch partial(count, type);
  const int rc = PMPI_Reduce(send, partial.base(), count, type, op, 0, spanning->local);
  if (rc != MPI_SUCCESS) return rc;
  return combine_partials(*spanning, tag, partial.base(), nullptr, count, type, op, comm, root);
}

int SiteCollectives::allreduce(const void* send, void* receive, int count, MPI_Datatype type, MPI_Op op,
                               MPI_Comm comm) {
  Spanning* spanning = site_path(comm, Collective::kAllreduce, op);
  if (!spanning) return PMPI_Allreduce(send, receive, count, type, op, comm);
  const int tag = next_tag(*spanning);
  const SiteLayout& layout = spanning->layout;
  int rc = MPI_SUCCESS;
  if (layout.is_leader()) {
    rc = PMPI_Reduce(send, receive, count, type, op, 0, spanning->local);  // MPI_IN_PLACE passes through
    if (rc == MPI_SUCCESS) rc = combine_partials(*spanning, tag, receive, receive, count, type, op, comm, -1);
  } else {
    // MPI_IN_PLACE: this rank's data is in `receive`.
    rc = PMPI_Reduce(send == MPI_IN_PLACE ? receive : send, nullptr, count, type, op, 0, spanning->local);
  }
  // The site's ranks, asleep in release_site while their leader exchanges, learn its outcome (after
  // an error none waits or takes a result that is not one); then the result.
  rc = release_site(layout, spanning->local, rc, comm);
  if (rc != MPI_SUCCESS) return rc;
  return PMPI_Bcast(receive, count, type, 0, spanning->local);
}

}  // namespace lp::mpi
