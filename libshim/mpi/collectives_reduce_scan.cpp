// SiteCollectives: Reduce_scatter(_block), Scan and Exscan across sites, each crossing the long link
// at most once per pair of sites (docs/mpi-collectives.md). Alltoall(v/w): collectives_exchange.cpp.
#include <climits>
#include <memory>
#include <vector>

#include "collective_buffers.h"
#include "collectives.h"

namespace lp::mpi {
namespace {

// Tag of the site total a site's last rank hands its leader in Scan/Exscan (on the site's private
// sub-communicator, which carries nothing else point-to-point).
constexpr int kSiteTotalTag = 1;

MPI_Aint extent_of(MPI_Datatype type) {
  MPI_Aint lower = 0, extent = 0;
  PMPI_Type_get_extent(type, &lower, &extent);
  return extent;
}

// The block `displacement` extents into `buffer`.
void* block_at(const void* buffer, int displacement, MPI_Aint extent) {
  return static_cast<char*>(const_cast<void*>(buffer)) + static_cast<MPI_Aint>(displacement) * extent;
}

// `count` elements of `type` copied from `from` to `to` (derived types: through PMPI_Pack).
int copy_elements(const void* from, void* to, int count, MPI_Datatype type, MPI_Comm comm) {
  int rc = MPI_SUCCESS;
  const std::vector<std::byte> packed = pack(from, count, type, comm, &rc);
  return rc == MPI_SUCCESS ? unpack(packed, to, count, type, comm) : rc;
}

}  // namespace

// ---- Reduce_scatter(_block) ----
//
// PMPI_Reduce of the whole vector to each site's leader; each leader sends every other leader the
// pieces of its partial result that belong to that site's ranks (rank order), combines the pieces
// for its own ranks from all sites in site order, and PMPI_Scatterv's each rank its piece.

int SiteCollectives::reduce_scatter(const void* send, void* receive, const int receive_counts[], MPI_Datatype type,
                                    MPI_Op op, MPI_Comm comm) {
  Spanning* spanning = site_path(comm, Collective::kReduceScatter, op);
  if (!spanning) return PMPI_Reduce_scatter(send, receive, receive_counts, type, op, comm);
  return reduce_scatter_across_sites(*spanning, send, receive, receive_counts, type, op, comm);
}

int SiteCollectives::reduce_scatter_block(const void* send, void* receive, int receive_count, MPI_Datatype type,
                                          MPI_Op op, MPI_Comm comm) {
  Spanning* spanning = site_path(comm, Collective::kReduceScatterBlock, op);
  if (!spanning) return PMPI_Reduce_scatter_block(send, receive, receive_count, type, op, comm);
  const std::vector<int> receive_counts(spanning->world_of_rank.size(), receive_count);
  return reduce_scatter_across_sites(*spanning, send, receive, receive_counts.data(), type, op, comm);
}

int SiteCollectives::reduce_scatter_across_sites(Spanning& spanning, const void* send, void* receive,
                                                 const int* receive_counts, MPI_Datatype type, MPI_Op op,
                                                 MPI_Comm comm) {
  const int tag = next_tag(spanning);
  const SiteLayout& layout = spanning.layout;
  const int size = static_cast<int>(spanning.world_of_rank.size());
  const int me = layout.my_site_index();
  const auto members = ranks_by_site(layout, size);
  const std::vector<int>& mine = members[static_cast<std::size_t>(me)];
  std::vector<int> first(static_cast<std::size_t>(size));  // each rank's first element in the whole vector
  long long total = 0;
  for (int rank = 0; rank < size; ++rank) {
    first[static_cast<std::size_t>(rank)] = static_cast<int>(total);
    total += receive_counts[rank];
    if (total > INT_MAX) return MPI_ERR_COUNT;  // every rank sees the same counts: all return
  }
  const int count = static_cast<int>(total);
  const MPI_Aint extent = extent_of(type);
  const void* input = send == MPI_IN_PLACE ? receive : send;  // MPI_IN_PLACE: the whole vector is in `receive`
  // This site's pieces, consecutive in rank order: where each local rank's starts.
  std::vector<int> local_counts, local_first;
  int site_count_elements = 0;
  for (int rank : mine) {
    local_counts.push_back(receive_counts[rank]);
    local_first.push_back(site_count_elements);
    site_count_elements += receive_counts[rank];
  }

  if (!layout.is_leader()) {
    int rc = PMPI_Reduce(input, nullptr, count, type, op, 0, spanning.local);
    if (rc == MPI_SUCCESS) rc = release_site(layout, spanning.local, MPI_SUCCESS, comm);
    if (rc != MPI_SUCCESS) return rc;
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    return PMPI_Scatterv(nullptr, nullptr, nullptr, type, receive, receive_counts[rank], type, 0, spanning.local);
  }

  TypedScratch partial(count, type);
  int rc = PMPI_Reduce(input, partial.base(), count, type, op, 0, spanning.local);
  if (rc != MPI_SUCCESS) return rc;
  // The pieces of `partial` for the ranks of `site`, packed in rank order.
  const auto pieces_for = [&](int site, std::vector<std::byte>* packed) {
    int status = MPI_SUCCESS;
    for (int rank : members[static_cast<std::size_t>(site)]) {
      status = pack_append(block_at(partial.base(), first[static_cast<std::size_t>(rank)], extent), receive_counts[rank],
                           type, comm, packed);
      if (status != MPI_SUCCESS) break;
    }
    return status;
  };
  const int context = private_context(spanning);
  for (int site = 0; site < layout.site_count() && rc == MPI_SUCCESS; ++site) {
    if (site == me) continue;
    std::vector<std::byte> packed;
    rc = pieces_for(site, &packed);
    const int world = spanning.world_of_rank[static_cast<std::size_t>(layout.leader(site))];
    if (rc == MPI_SUCCESS) rc = front_end_.send_bytes(world, context, tag, packed, comm);
  }
  // Every site's partial of this site's pieces, consecutive; combined in site order: ((p0 op p1) op p2) ...
  std::vector<std::unique_ptr<TypedScratch>> partials(static_cast<std::size_t>(layout.site_count()));
  std::vector<std::byte> packed;
  for (int site = 0; site < layout.site_count() && rc == MPI_SUCCESS; ++site) {
    packed.clear();
    if (site == me) {
      rc = pieces_for(me, &packed);
    } else {
      const int world = spanning.world_of_rank[static_cast<std::size_t>(layout.leader(site))];
      rc = front_end_.receive_bytes(world, context, tag, comm, &packed);
    }
    auto& scratch = partials[static_cast<std::size_t>(site)];
    scratch = std::make_unique<TypedScratch>(site_count_elements, type);
    if (rc == MPI_SUCCESS) rc = unpack(packed, scratch->base(), site_count_elements, type, comm);
  }
  void* accumulated = rc == MPI_SUCCESS ? partials[0]->base() : nullptr;
  for (std::size_t site = 1; site < partials.size() && rc == MPI_SUCCESS && site_count_elements > 0; ++site) {
    // PMPI_Reduce_local(in, inout): inout = in op inout, so the earlier sites stay on the left.
    rc = PMPI_Reduce_local(accumulated, partials[site]->base(), site_count_elements, type, op);
    accumulated = partials[site]->base();
  }
  // The site's ranks, asleep in release_site meanwhile, learn the outcome; then the pieces.
  rc = release_site(layout, spanning.local, rc, comm);
  if (rc != MPI_SUCCESS) return rc;
  return PMPI_Scatterv(accumulated, local_counts.data(), local_first.data(), type, receive, local_counts[0], type, 0,
                       spanning.local);
}

// ---- Scan, Exscan ----
//
// Only where each site's ranks are consecutive (site order is rank order). PMPI_Scan (PMPI_Exscan)
// inside each site; the site's last rank hands its leader the site total; each leader sends its
// total to the leaders of all later sites and combines the totals of all earlier sites in site
// order into the prefix of its site, which it broadcasts in the site; each rank combines that
// prefix on the left of its own result.

int SiteCollectives::scan(const void* send, void* receive, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  Spanning* spanning = site_path(comm, Collective::kScan, op, true);
  if (!spanning) return PMPI_Scan(send, receive, count, type, op, comm);
  return scan_across_sites(*spanning, send, receive, count, type, op, comm, false);
}

int SiteCollectives::exscan(const void* send, void* receive, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  Spanning* spanning = site_path(comm, Collective::kExscan, op, true);
  if (!spanning) return PMPI_Exscan(send, receive, count, type, op, comm);
  return scan_across_sites(*spanning, send, receive, count, type, op, comm, true);
}

int SiteCollectives::scan_across_sites(Spanning& spanning, const void* send, void* receive, int count,
                                       MPI_Datatype type, MPI_Op op, MPI_Comm comm, bool exclusive) {
  const int tag = next_tag(spanning);
  const SiteLayout& layout = spanning.layout;
  const int me = layout.my_site_index();
  const int sites = layout.site_count();
  int rank = 0, local_size = 0;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(spanning.local, &local_size);
  const int local_rank = layout.local_rank_of(rank);
  const bool last = local_rank == local_size - 1;
  const bool total_wanted = me < sites - 1;  // later sites need this site's total

  // 1. Inside the site, in rank order; the site's last rank keeps the site total.
  std::unique_ptr<TypedScratch> own_total;
  void* total = nullptr;
  int rc = MPI_SUCCESS;
  if (!exclusive) {
    rc = PMPI_Scan(send, receive, count, type, op, spanning.local);  // MPI_IN_PLACE passes through
    if (last) total = receive;
  } else {
    if (last && total_wanted) {  // its own input too (MPI_IN_PLACE: about to be overwritten)
      own_total = std::make_unique<TypedScratch>(count, type);
      rc = copy_elements(send == MPI_IN_PLACE ? receive : send, own_total->base(), count, type, comm);
      total = own_total->base();
    }
    if (rc == MPI_SUCCESS) rc = PMPI_Exscan(send, receive, count, type, op, spanning.local);
    // total = (exclusive prefix) op (own input); a site of one rank has no prefix.
    if (rc == MPI_SUCCESS && total && local_size > 1) rc = PMPI_Reduce_local(receive, total, count, type, op);
  }
  if (rc != MPI_SUCCESS) return rc;

  // 2. The site total to the leader (Open MPI inside the site).
  if (total_wanted && local_size > 1) {
    if (last) {
      rc = PMPI_Send(total, count, type, 0, kSiteTotalTag, spanning.local);
    } else if (local_rank == 0) {
      own_total = std::make_unique<TypedScratch>(count, type);
      total = own_total->base();
      rc = PMPI_Recv(total, count, type, local_size - 1, kSiteTotalTag, spanning.local, MPI_STATUS_IGNORE);
    }
    if (rc != MPI_SUCCESS) return rc;
  }

  // 3. Leaders: this site's total to every later site; the earlier sites' totals, combined in site
  // order: ((t0 op t1) op t2) ... = the prefix of this site.
  std::vector<std::unique_ptr<TypedScratch>> totals(static_cast<std::size_t>(me));
  void* prefix = nullptr;
  const int context = private_context(spanning);
  if (local_rank == 0) {
    if (total_wanted) {
      const std::vector<std::byte> packed = pack(total, count, type, comm, &rc);
      for (int site = me + 1; site < sites && rc == MPI_SUCCESS; ++site) {
        const int world = spanning.world_of_rank[static_cast<std::size_t>(layout.leader(site))];
        rc = front_end_.send_bytes(world, context, tag, packed, comm);
      }
    }
    std::vector<std::byte> packed;
    for (int site = 0; site < me && rc == MPI_SUCCESS; ++site) {
      const int world = spanning.world_of_rank[static_cast<std::size_t>(layout.leader(site))];
      rc = front_end_.receive_bytes(world, context, tag, comm, &packed);
      auto& scratch = totals[static_cast<std::size_t>(site)];
      scratch = std::make_unique<TypedScratch>(count, type);
      if (rc == MPI_SUCCESS) rc = unpack(packed, scratch->base(), count, type, comm);
      if (rc == MPI_SUCCESS && site > 0) rc = PMPI_Reduce_local(prefix, scratch->base(), count, type, op);
      prefix = scratch->base();
    }
  }
  if (me == 0) return rc;  // the first site's results are complete

  // 4. The site's ranks, asleep in release_site meanwhile, learn the leader's outcome; then the
  // prefix, combined on the left.
  rc = release_site(layout, spanning.local, rc, comm);
  if (rc != MPI_SUCCESS) return rc;
  std::unique_ptr<TypedScratch> received;
  if (local_rank != 0) {
    received = std::make_unique<TypedScratch>(count, type);
    prefix = received->base();
  }
  rc = PMPI_Bcast(prefix, count, type, 0, spanning.local);
  if (rc != MPI_SUCCESS) return rc;
  // Exscan: the site's first rank has no result of its own inside the site: the prefix is its result.
  if (exclusive && local_rank == 0) return copy_elements(prefix, receive, count, type, comm);
  return PMPI_Reduce_local(prefix, receive, count, type, op);  // receive = prefix op receive
}

}  // namespace lp::mpi
