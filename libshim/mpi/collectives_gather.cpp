// SiteCollectives: MPI_Gather(v), MPI_Scatter(v) and MPI_Allgather(v) in two levels (README.md,
// "Collectives"). Data crosses the long link packed (PMPI_Pack with the sender's type, PMPI_Unpack
// with the receiver's: equal type signatures give equal bytes), one message per pair of sites at
// most, with each site's blocks in rank order. Results land at the displacements of communicator
// rank order, so the ranks of a site need not be consecutive.
//
// The fixed-count calls are the v-calls with every count equal and displacement = rank x count.
#include <cstdint>
#include <cstring>

#include "collective_blocks.h"
#include "collective_buffers.h"
#include "collectives.h"

namespace lp::mpi {

using blocks::at;
using blocks::extent_of;
using blocks::PackedReader;
using blocks::UniformBlocks;

// One collective's view of a spanning communicator: what the leaders' exchange needs.
struct SiteCollectives::TwoLevel {
  FrontEnd& front_end;
  const SiteLayout& layout;
  const std::vector<int>& world_of_rank;
  MPI_Comm local;  // this site's ranks (leader = local rank 0)
  MPI_Comm comm;
  int context;     // LongPipe context of the leaders' messages
  int tag;         // this collective's messages on it
  int rank;        // in `comm`

  int size() const { return static_cast<int>(world_of_rank.size()); }
  int world_of(int comm_rank) const { return world_of_rank[static_cast<std::size_t>(comm_rank)]; }
  int leader_world(int site) const { return world_of(layout.leader(site)); }
  // The ranks of site `site` in rank order, which is their order in the site's sub-communicator.
  std::vector<int> ranks_at(int site) const {
    std::vector<int> ranks;
    for (int r = 0; r < size(); ++r) {
      if (layout.site_index_of(r) == site) ranks.push_back(r);
    }
    return ranks;
  }
  // `values` (one per rank of `comm`) of the ranks at `site`, in their local order.
  std::vector<int> of_site(const int* values, int site) const {
    std::vector<int> picked;
    for (int r : ranks_at(site)) picked.push_back(values[r]);
    return picked;
  }
  int send_to(int to_world, const std::vector<std::byte>& body) const {
    return front_end.send_bytes(to_world, context, tag, body, comm);
  }
  int receive_from(int from_world, std::vector<std::byte>* body) const {
    return front_end.receive_bytes(from_world, context, tag, comm, body);
  }
  // Every other site's leader's message (its ranks' packed blocks, in rank order), unpacked into
  // those ranks' places of `receive` (Gather(v) at the root, Allgather(v) at each leader).
  int receive_other_sites(void* receive, const int* counts, const int* displacements,
                          MPI_Datatype receive_type) const;

  // The v-forms (the fixed-count calls pass equal counts); below.
  int gather_blocks(const void* send, int send_count, MPI_Datatype send_type, void* receive, const int* counts,
                    const int* displacements, MPI_Datatype receive_type, int root, bool equal_sizes) const;
  int scatter_blocks(const void* send, const int* counts, const int* displacements, MPI_Datatype send_type,
                     void* receive, int receive_count, MPI_Datatype receive_type, int root) const;
  int allgather_blocks(const void* send, int send_count, MPI_Datatype send_type, void* receive, const int* counts,
                       const int* displacements, MPI_Datatype receive_type) const;
};

SiteCollectives::TwoLevel SiteCollectives::two_level(Spanning& spanning, MPI_Comm comm) {
  int rank = 0;
  PMPI_Comm_rank(comm, &rank);
  return TwoLevel{front_end_, spanning.layout, spanning.world_of_rank, spanning.local, comm,
                  private_context(spanning), next_tag(spanning), rank};
}

int SiteCollectives::TwoLevel::receive_other_sites(void* receive, const int* counts, const int* displacements,
                                                   MPI_Datatype receive_type) const {
  const MPI_Aint extent = extent_of(receive_type);
  std::vector<std::byte> packed;
  int rc = MPI_SUCCESS;
  for (int site = 0; site < layout.site_count() && rc == MPI_SUCCESS; ++site) {
    if (site == layout.my_site_index()) continue;
    rc = receive_from(leader_world(site), &packed);
    PackedReader reader(packed.data(), packed.size());
    for (int r : ranks_at(site)) {
      if (rc != MPI_SUCCESS) break;
      rc = reader.next(at(receive, displacements[r] * extent), counts[r], receive_type, comm);
    }
  }
  return rc;
}

// Gather: the root's site gathers straight into the root's buffer (Open MPI, its own types and
// displacements; MPI_IN_PLACE passes through); every other site's leader gathers its ranks' packed
// blocks (sizes first unless all are equal) and sends them to the root in one message, which the
// root unpacks into those ranks' places. `counts`, `displacements`: significant at the root only.
int SiteCollectives::TwoLevel::gather_blocks(const void* send, int send_count, MPI_Datatype send_type, void* receive,
                                             const int* counts, const int* displacements, MPI_Datatype receive_type,
                                             int root, bool equal_sizes) const {
  const int root_site = layout.site_index_of(root);
  const int me = layout.my_site_index();
  if (me == root_site) {
    std::vector<int> local_counts, local_displacements;
    if (rank == root) {
      local_counts = of_site(counts, me);
      local_displacements = of_site(displacements, me);
    }
    int rc = PMPI_Gatherv(send, send_count, send_type, receive, local_counts.data(), local_displacements.data(),
                          receive_type, layout.local_rank_of(root), local);
    if (rc != MPI_SUCCESS || rank != root) return rc;
    return receive_other_sites(receive, counts, displacements, receive_type);
  }
  std::vector<std::byte> mine;
  int rc = pack_append(send, send_count, send_type, comm, &mine);
  if (rc != MPI_SUCCESS) return rc;
  int my_size = static_cast<int>(mine.size());
  const bool leader = layout.is_leader();
  int local_size = 1;
  PMPI_Comm_size(local, &local_size);
  std::vector<int> sizes(leader ? static_cast<std::size_t>(local_size) : 0, my_size);
  if (!equal_sizes) rc = PMPI_Gather(&my_size, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, local);
  if (rc != MPI_SUCCESS) return rc;
  std::vector<int> offsets;
  int total = 0;
  for (int size : sizes) {
    offsets.push_back(total);
    total += size;
  }
  std::vector<std::byte> site_blocks(static_cast<std::size_t>(total));
  rc = PMPI_Gatherv(mine.data(), my_size, MPI_BYTE, site_blocks.data(), sizes.data(), offsets.data(), MPI_BYTE, 0,
                    local);
  if (rc != MPI_SUCCESS || !leader) return rc;
  return send_to(world_of(root), site_blocks);
}

// Scatter: the root first sends every other site's leader that site's blocks, packed, behind a
// header of their sizes (int32, local rank order); then Open MPI scatters inside the root's site
// from the root's buffer (MPI_IN_PLACE passes through), and inside each other site from the
// leader's copy of the message (MPI_BYTE), each rank unpacking its own block with its own type.
// Other sites' ranks first learn whether their leader has the message (release_site), so none waits
// in the site's scatter for data that will never come; the root's own site always gets its blocks.
// `counts`, `displacements`: significant at the root only.
int SiteCollectives::TwoLevel::scatter_blocks(const void* send, const int* counts, const int* displacements,
                                              MPI_Datatype send_type, void* receive, int receive_count,
                                              MPI_Datatype receive_type, int root) const {
  const int root_site = layout.site_index_of(root);
  const int me = layout.my_site_index();
  int sent = MPI_SUCCESS;
  if (rank == root) {
    const MPI_Aint extent = extent_of(send_type);
    for (int site = 0; site < layout.site_count() && sent == MPI_SUCCESS; ++site) {
      if (site == me) continue;
      const std::vector<int> ranks = ranks_at(site);
      std::vector<std::byte> message(ranks.size() * sizeof(std::int32_t));
      for (std::size_t i = 0; i < ranks.size() && sent == MPI_SUCCESS; ++i) {
        const int r = ranks[i];
        const std::size_t start = message.size();
        sent = pack_append(at(send, displacements[r] * extent), counts[r], send_type, comm, &message);
        const auto size = static_cast<std::int32_t>(message.size() - start);
        std::memcpy(message.data() + i * sizeof size, &size, sizeof size);
      }
      if (sent == MPI_SUCCESS) sent = send_to(leader_world(site), message);
    }
  }
  if (me == root_site) {
    std::vector<int> local_counts, local_displacements;
    if (rank == root) {
      local_counts = of_site(counts, me);
      local_displacements = of_site(displacements, me);
    }
    const int rc = PMPI_Scatterv(send, local_counts.data(), local_displacements.data(), send_type, receive,
                                 receive_count, receive_type, layout.local_rank_of(root), local);
    return sent != MPI_SUCCESS ? sent : rc;
  }
  int local_size = 1;
  PMPI_Comm_size(local, &local_size);
  const std::size_t header = static_cast<std::size_t>(local_size) * sizeof(std::int32_t);
  std::vector<std::byte> message;
  std::vector<int> sizes(static_cast<std::size_t>(local_size)), offsets;
  int rc = MPI_SUCCESS;
  if (layout.is_leader()) {
    rc = receive_from(world_of(root), &message);
    std::size_t total = header;
    if (rc == MPI_SUCCESS && message.size() >= header) std::memcpy(sizes.data(), message.data(), header);
    for (int size : sizes) {
      offsets.push_back(static_cast<int>(total - header));
      total += static_cast<std::size_t>(size);
    }
    if (rc == MPI_SUCCESS && (message.size() < header || total != message.size())) rc = MPI_ERR_TRUNCATE;
  }
  rc = release_site(layout, local, rc, comm);
  if (rc != MPI_SUCCESS) return rc;
  if (layout.is_leader()) {
    const std::byte* blocks = message.data() + header;
    // The leader keeps its own block where it is (MPI_IN_PLACE) and unpacks it from the message.
    rc = PMPI_Scatterv(blocks, sizes.data(), offsets.data(), MPI_BYTE, MPI_IN_PLACE, 0, MPI_BYTE, 0, local);
    if (rc != MPI_SUCCESS) return rc;
    PackedReader reader(blocks + offsets[0], static_cast<std::size_t>(sizes[0]));
    return reader.next(receive, receive_count, receive_type, comm);
  }
  int expected = 0;
  rc = PMPI_Pack_size(receive_count, receive_type, comm, &expected);
  if (rc != MPI_SUCCESS) return rc;
  std::vector<std::byte> block(static_cast<std::size_t>(expected));
  rc = PMPI_Scatterv(nullptr, nullptr, nullptr, MPI_BYTE, block.data(), expected, MPI_BYTE, 0, local);
  if (rc != MPI_SUCCESS) return rc;
  PackedReader reader(block.data(), block.size());
  return reader.next(receive, receive_count, receive_type, comm);
}

// Allgather: each site's leader gathers its ranks' blocks into their places of its own receive
// buffer (Open MPI, the receive type), sends them packed to every other leader and unpacks theirs;
// then Open MPI broadcasts the whole result inside each site (an indexed type of every rank's block).
// MPI_IN_PLACE: each rank's block is already in its place of `receive`.
int SiteCollectives::TwoLevel::allgather_blocks(const void* send, int send_count, MPI_Datatype send_type,
                                                void* receive, const int* counts, const int* displacements,
                                                MPI_Datatype receive_type) const {
  const int me = layout.my_site_index();
  const MPI_Aint extent = extent_of(receive_type);
  int rc = MPI_SUCCESS;
  if (layout.is_leader()) {
    const std::vector<int> here = ranks_at(me);
    const std::vector<int> local_counts = of_site(counts, me);
    const std::vector<int> local_displacements = of_site(displacements, me);
    rc = PMPI_Gatherv(send, send_count, send_type, receive, local_counts.data(), local_displacements.data(),
                      receive_type, 0, local);
    std::vector<std::byte> site_blocks;
    for (std::size_t i = 0; i < here.size() && rc == MPI_SUCCESS; ++i) {
      rc = pack_append(at(receive, displacements[here[i]] * extent), counts[here[i]], receive_type, comm,
                       &site_blocks);
    }
    for (int site = 0; site < layout.site_count() && rc == MPI_SUCCESS; ++site) {
      if (site != me) rc = send_to(leader_world(site), site_blocks);
    }
    if (rc == MPI_SUCCESS) rc = receive_other_sites(receive, counts, displacements, receive_type);
  } else if (send == MPI_IN_PLACE) {
    rc = PMPI_Gatherv(at(receive, displacements[rank] * extent), counts[rank], receive_type, nullptr,
                      nullptr, nullptr, receive_type, 0, local);
  } else {
    rc = PMPI_Gatherv(send, send_count, send_type, nullptr, nullptr, nullptr, receive_type, 0, local);
  }
  // The site's ranks, asleep in release_site while their leader exchanges, learn its outcome; then
  // the whole result.
  rc = release_site(layout, local, rc, comm);
  if (rc != MPI_SUCCESS) return rc;
  MPI_Datatype everything = MPI_DATATYPE_NULL;
  rc = PMPI_Type_indexed(size(), counts, displacements, receive_type, &everything);
  if (rc == MPI_SUCCESS) rc = PMPI_Type_commit(&everything);
  if (rc == MPI_SUCCESS) rc = PMPI_Bcast(receive, 1, everything, 0, local);
  if (everything != MPI_DATATYPE_NULL) PMPI_Type_free(&everything);
  return rc;
}

int SiteCollectives::gather(const void* send, int send_count, MPI_Datatype send_type, void* receive,
                            int receive_count, MPI_Datatype receive_type, int root, MPI_Comm comm) {
  Spanning* spanning = site_path(comm, Collective::kGather);
  if (!spanning) return PMPI_Gather(send, send_count, send_type, receive, receive_count, receive_type, root, comm);
  const TwoLevel step = two_level(*spanning, comm);
  const UniformBlocks blocks(step.rank == root ? step.size() : 0, receive_count);  // the root's only
  return step.gather_blocks(send, send_count, send_type, receive, blocks.counts.data(),
                       blocks.displacements.data(), receive_type, root, true);
}

int SiteCollectives::gatherv(const void* send, int send_count, MPI_Datatype send_type, void* receive,
                             const int receive_counts[], const int displacements[], MPI_Datatype receive_type,
                             int root, MPI_Comm comm) {
  Spanning* spanning = site_path(comm, Collective::kGatherv);
  if (!spanning) {
    return PMPI_Gatherv(send, send_count, send_type, receive, receive_counts, displacements, receive_type, root,
                        comm);
  }
  return two_level(*spanning, comm).gather_blocks(send, send_count, send_type, receive, receive_counts,
                       displacements, receive_type, root, false);
}

int SiteCollectives::scatter(const void* send, int send_count, MPI_Datatype send_type, void* receive,
                             int receive_count, MPI_Datatype receive_type, int root, MPI_Comm comm) {
  Spanning* spanning = site_path(comm, Collective::kScatter);
  if (!spanning) return PMPI_Scatter(send, send_count, send_type, receive, receive_count, receive_type, root, comm);
  const TwoLevel step = two_level(*spanning, comm);
  const UniformBlocks blocks(step.rank == root ? step.size() : 0, send_count);  // the root's only
  return step.scatter_blocks(send, blocks.counts.data(), blocks.displacements.data(), send_type, receive,
                        receive_count, receive_type, root);
}

int SiteCollectives::scatterv(const void* send, const int send_counts[], const int displacements[],
                              MPI_Datatype send_type, void* receive, int receive_count, MPI_Datatype receive_type,
                              int root, MPI_Comm comm) {
  Spanning* spanning = site_path(comm, Collective::kScatterv);
  if (!spanning) {
    return PMPI_Scatterv(send, send_counts, displacements, send_type, receive, receive_count, receive_type, root,
                         comm);
  }
  return two_level(*spanning, comm).scatter_blocks(send, send_counts, displacements, send_type, receive,
                        receive_count, receive_type, root);
}

int SiteCollectives::allgather(const void* send, int send_count, MPI_Datatype send_type, void* receive,
                               int receive_count, MPI_Datatype receive_type, MPI_Comm comm) {
  Spanning* spanning = site_path(comm, Collective::kAllgather);
  if (!spanning) return PMPI_Allgather(send, send_count, send_type, receive, receive_count, receive_type, comm);
  const TwoLevel step = two_level(*spanning, comm);
  const UniformBlocks blocks(step.size(), receive_count);
  return step.allgather_blocks(send, send_count, send_type, receive, blocks.counts.data(),
                          blocks.displacements.data(), receive_type);
}

int SiteCollectives::allgatherv(const void* send, int send_count, MPI_Datatype send_type, void* receive,
                                const int receive_counts[], const int displacements[], MPI_Datatype receive_type,
                                MPI_Comm comm) {
  Spanning* spanning = site_path(comm, Collective::kAllgatherv);
  if (!spanning) {
    return PMPI_Allgatherv(send, send_count, send_type, receive, receive_counts, displacements, receive_type, comm);
  }
  return two_level(*spanning, comm).allgather_blocks(send, send_count, send_type, receive, receive_counts,
                          displacements, receive_type);
}

}  // namespace lp::mpi
