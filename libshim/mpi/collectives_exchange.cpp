// SiteCollectives: Alltoall(v/w), Reduce_scatter(_block), Scan and Exscan across sites, each crossing
// the long link at most once per pair of sites (docs/mpi-collectives.md).
#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>
#include <vector>

#include "collective_buffers.h"
#include "collectives.h"

namespace lp::mpi {
namespace {

// Tag of the site total a site's last rank hands its leader in Scan/Exscan (on the site's private
// sub-communicator, which carries nothing else point-to-point).
constexpr int kSiteTotalTag = 1;

// The ranks of each site (by site index), in rank order.
std::vector<std::vector<int>> ranks_by_site(const SiteLayout& layout, int size) {
  std::vector<std::vector<int>> members(static_cast<std::size_t>(layout.site_count()));
  for (int rank = 0; rank < size; ++rank) members[static_cast<std::size_t>(layout.site_index_of(rank))].push_back(rank);
  return members;
}

MPI_Aint extent_of(MPI_Datatype type) {
  MPI_Aint lower = 0, extent = 0;
  PMPI_Type_get_extent(type, &lower, &extent);
  return extent;
}

// The block `displacement` extents into `buffer`.
void* block_at(const void* buffer, int displacement, MPI_Aint extent) {
  return static_cast<char*>(const_cast<void*>(buffer)) + static_cast<MPI_Aint>(displacement) * extent;
}

// Byte counts and offsets of consecutive blocks, as Gatherv/Scatterv take them; false if the total
// does not fit in an int (MPI's counts).
bool offsets_of(const std::vector<long long>& bytes, std::vector<int>* counts, std::vector<int>* offsets) {
  counts->clear();
  offsets->clear();
  long long total = 0;
  for (long long b : bytes) {
    if (b > INT_MAX || total > INT_MAX - b) return false;
    counts->push_back(static_cast<int>(b));
    offsets->push_back(static_cast<int>(total));
    total += b;
  }
  return true;
}

void put_int(std::vector<std::byte>* out, int value) {
  const std::size_t at = out->size();
  out->resize(at + sizeof value);
  std::memcpy(out->data() + at, &value, sizeof value);
}

int get_int(const std::byte* in) {
  int value = 0;
  std::memcpy(&value, in, sizeof value);
  return value;
}

// `count` elements of `type` copied from `from` to `to` (derived types: through PMPI_Pack).
int copy_elements(const void* from, void* to, int count, MPI_Datatype type, MPI_Comm comm) {
  int rc = MPI_SUCCESS;
  const std::vector<std::byte> packed = pack(from, count, type, comm, &rc);
  return rc == MPI_SUCCESS ? unpack(packed, to, count, type, comm) : rc;
}

// The blocks between the ranks `mine` of this site, on its sub-communicator `local`: the same call
// the program made (Alltoallv or Alltoallw), restricted to them.
int exchange_within_site(const ExchangeBlocks& send, const ExchangeBlocks& receive, bool in_place,
                         const std::vector<int>& mine, MPI_Comm local) {
  struct Side {
    std::vector<int> counts, displacements;
    std::vector<MPI_Datatype> types;
  } out, in;
  for (int rank : mine) {
    out.counts.push_back(send.count(rank));
    out.displacements.push_back(send.displacements[rank]);
    in.counts.push_back(receive.count(rank));
    in.displacements.push_back(receive.displacements[rank]);
    if (receive.per_rank_types()) {
      out.types.push_back(send.type_of(rank));
      in.types.push_back(receive.type_of(rank));
    }
  }
  const void* send_base = in_place ? MPI_IN_PLACE : send.base;
  void* receive_base = const_cast<void*>(receive.base);
  if (receive.per_rank_types() && mine.size() == 1) {
    // Alone at its site: the block to itself, copied here. Open MPI's Alltoallw for a one-process
    // communicator (coll/self) scales the byte displacements by the extent, writing elsewhere.
    if (in_place) return MPI_SUCCESS;
    const int me = mine.front();
    int rc = MPI_SUCCESS;
    const std::vector<std::byte> packed = pack(send.at(me), send.count(me), send.type_of(me), local, &rc);
    return rc == MPI_SUCCESS ? unpack(packed, receive.at(me), receive.count(me), receive.type_of(me), local) : rc;
  }
  if (!receive.per_rank_types()) {
    return PMPI_Alltoallv(send_base, out.counts.data(), out.displacements.data(), send.type, receive_base,
                          in.counts.data(), in.displacements.data(), receive.type, local);
  }
  return PMPI_Alltoallw(send_base, out.counts.data(), out.displacements.data(), out.types.data(), receive_base,
                        in.counts.data(), in.displacements.data(), in.types.data(), local);
}

}  // namespace

// ---- Alltoall(v/w) ----
//
// Alltoallw is Alltoallv with a datatype per peer and displacements in bytes (ExchangeBlocks hides
// the difference); blocks cross the link packed, so the types need not match byte for byte, only
// in their type signatures, as MPI requires.
//
// Blocks between ranks of one site: PMPI_Alltoallv on the site's sub-communicator. Blocks for other
// sites: each rank packs them (site order, then rank order) and PMPI_Gatherv's them to its leader;
// the leader sends one message per other site: a header of block sizes (source ranks of this site
// x destination ranks of that site, int each) and the blocks, source by source. The receiving leader
// regroups them by destination and PMPI_Scatterv's each rank its blocks, which it unpacks in place.

int SiteCollectives::alltoall(const void* send, int send_count, MPI_Datatype send_type, void* receive,
                              int receive_count, MPI_Datatype receive_type, MPI_Comm comm) {
  Spanning* spanning = site_path(comm, Collective::kAlltoall);
  if (!spanning) return PMPI_Alltoall(send, send_count, send_type, receive, receive_count, receive_type, comm);
  const int size = static_cast<int>(spanning->world_of_rank.size());
  std::vector<int> send_counts(static_cast<std::size_t>(size), send_count);
  std::vector<int> receive_counts(static_cast<std::size_t>(size), receive_count);
  std::vector<int> send_displacements(static_cast<std::size_t>(size)), receive_displacements(static_cast<std::size_t>(size));
  for (int rank = 0; rank < size; ++rank) {
    send_displacements[static_cast<std::size_t>(rank)] = rank * send_count;
    receive_displacements[static_cast<std::size_t>(rank)] = rank * receive_count;
  }
  const bool in_place = send == MPI_IN_PLACE;
  const auto receiving = ExchangeBlocks::of_one_type(receive, receive_counts.data(), receive_displacements.data(),
                                                     receive_type);
  const auto sending = in_place ? receiving
                                : ExchangeBlocks::of_one_type(send, send_counts.data(), send_displacements.data(),
                                                              send_type);
  return alltoall_across_sites(*spanning, sending, receiving, in_place, comm);
}

int SiteCollectives::alltoallv(const void* send, const int send_counts[], const int send_displacements[],
                               MPI_Datatype send_type, void* receive, const int receive_counts[],
                               const int receive_displacements[], MPI_Datatype receive_type, MPI_Comm comm) {
  Spanning* spanning = site_path(comm, Collective::kAlltoallv);
  if (!spanning) {
    return PMPI_Alltoallv(send, send_counts, send_displacements, send_type, receive, receive_counts,
                          receive_displacements, receive_type, comm);
  }
  const bool in_place = send == MPI_IN_PLACE;
  // MPI_IN_PLACE: the data to send is where the data received goes, described alike.
  const auto receiving = ExchangeBlocks::of_one_type(receive, receive_counts, receive_displacements, receive_type);
  const auto sending =
      in_place ? receiving : ExchangeBlocks::of_one_type(send, send_counts, send_displacements, send_type);
  return alltoall_across_sites(*spanning, sending, receiving, in_place, comm);
}

int SiteCollectives::alltoallw(const void* send, const int send_counts[], const int send_displacements[],
                               const MPI_Datatype send_types[], void* receive, const int receive_counts[],
                               const int receive_displacements[], const MPI_Datatype receive_types[], MPI_Comm comm) {
  Spanning* spanning = site_path(comm, Collective::kAlltoallw);
  if (!spanning) {
    return PMPI_Alltoallw(send, send_counts, send_displacements, send_types, receive, receive_counts,
                          receive_displacements, receive_types, comm);
  }
  const bool in_place = send == MPI_IN_PLACE;
  const auto receiving = ExchangeBlocks::of_types(receive, receive_counts, receive_displacements, receive_types);
  const auto sending =
      in_place ? receiving : ExchangeBlocks::of_types(send, send_counts, send_displacements, send_types);
  return alltoall_across_sites(*spanning, sending, receiving, in_place, comm);
}

int SiteCollectives::alltoall_across_sites(Spanning& spanning, const ExchangeBlocks& send,
                                           const ExchangeBlocks& receive, bool in_place, MPI_Comm comm) {
  const int tag = next_tag(spanning);
  const SiteLayout& layout = spanning.layout;
  const int size = static_cast<int>(spanning.world_of_rank.size());
  const int me = layout.my_site_index();
  const auto members = ranks_by_site(layout, size);
  const std::vector<int>& mine = members[static_cast<std::size_t>(me)];
  const int local_size = static_cast<int>(mine.size());

  // 1. This rank's blocks for other sites, packed before anything is received (MPI_IN_PLACE).
  std::vector<int> sent_bytes(static_cast<std::size_t>(size), 0);
  std::vector<std::byte> outgoing;
  int rc = MPI_SUCCESS;
  for (int site = 0; site < layout.site_count() && rc == MPI_SUCCESS; ++site) {
    if (site == me) continue;
    for (int rank : members[static_cast<std::size_t>(site)]) {
      const std::size_t before = outgoing.size();
      rc = pack_append(send.at(rank), send.count(rank), send.type_of(rank), comm, &outgoing);
      if (rc != MPI_SUCCESS) break;
      sent_bytes[static_cast<std::size_t>(rank)] = static_cast<int>(outgoing.size() - before);
    }
  }
  if (rc != MPI_SUCCESS) return rc;

  // 2. To the leader: every rank's block sizes (one int per rank of the communicator), then its bytes.
  const bool leader = layout.is_leader();
  std::vector<int> all_sent_bytes(leader ? static_cast<std::size_t>(local_size) * static_cast<std::size_t>(size) : 0);
  rc = PMPI_Gather(sent_bytes.data(), size, MPI_INT, all_sent_bytes.data(), size, MPI_INT, 0, spanning.local);
  if (rc != MPI_SUCCESS) return rc;
  std::vector<int> gather_counts, gather_offsets;
  std::vector<std::byte> gathered;
  if (leader) {
    std::vector<long long> bytes(static_cast<std::size_t>(local_size), 0);
    for (std::size_t i = 0; i < all_sent_bytes.size(); ++i) bytes[i / static_cast<std::size_t>(size)] += all_sent_bytes[i];
    if (!offsets_of(bytes, &gather_counts, &gather_offsets)) return MPI_ERR_COUNT;
    gathered.resize(static_cast<std::size_t>(gather_offsets.back()) + static_cast<std::size_t>(gather_counts.back()));
  }
  rc = PMPI_Gatherv(outgoing.data(), static_cast<int>(outgoing.size()), MPI_BYTE, gathered.data(), gather_counts.data(),
                    gather_offsets.data(), MPI_BYTE, 0, spanning.local);
  if (rc != MPI_SUCCESS) return rc;

  // 3. The leader: one message to each other site's leader. Local rank l's bytes are its blocks in
  // site order, so the blocks of l for one site are consecutive. After an error the leader still
  // takes part in its site's collectives below (no rank of its site is left waiting).
  const int context = private_context(spanning);
  int leader_rc = MPI_SUCCESS;
  if (leader) {
    std::vector<std::size_t> cursor(gather_offsets.begin(), gather_offsets.end());  // per local rank
    for (int site = 0; site < layout.site_count() && leader_rc == MPI_SUCCESS; ++site) {
      if (site == me) continue;
      const std::vector<int>& theirs = members[static_cast<std::size_t>(site)];
      std::vector<std::byte> message;
      std::vector<std::size_t> lengths(static_cast<std::size_t>(local_size), 0);
      for (int local = 0; local < local_size; ++local) {
        for (int rank : theirs) {
          const int bytes = all_sent_bytes[static_cast<std::size_t>(local) * static_cast<std::size_t>(size) +
                                           static_cast<std::size_t>(rank)];
          put_int(&message, bytes);
          lengths[static_cast<std::size_t>(local)] += static_cast<std::size_t>(bytes);
        }
      }
      for (int local = 0; local < local_size; ++local) {
        const std::byte* from = gathered.data() + cursor[static_cast<std::size_t>(local)];
        message.insert(message.end(), from, from + lengths[static_cast<std::size_t>(local)]);
        cursor[static_cast<std::size_t>(local)] += lengths[static_cast<std::size_t>(local)];
      }
      const int world = spanning.world_of_rank[static_cast<std::size_t>(layout.leader(site))];
      leader_rc = front_end_.send_bytes(world, context, tag, message, comm);
    }
  }

  // 4. Meanwhile (the messages are on their way) the blocks between ranks of this site.
  rc = exchange_within_site(send, receive, in_place, mine, spanning.local);
  if (rc != MPI_SUCCESS) return rc;

  // 5. The leader takes the other sites' messages and regroups the blocks by destination: for each
  // rank of this site, the blocks from every other site's ranks (site order, then rank order).
  std::vector<int> incoming_bytes(leader ? static_cast<std::size_t>(local_size) * static_cast<std::size_t>(size) : 0, 0);
  std::vector<std::vector<std::byte>> for_local(leader ? static_cast<std::size_t>(local_size) : 0);
  std::vector<int> scatter_counts, scatter_offsets;  // the leader's Scatterv of for_local
  std::vector<std::byte> scattered;
  if (leader) {
    std::vector<std::byte> message;
    for (int site = 0; site < layout.site_count() && leader_rc == MPI_SUCCESS; ++site) {
      if (site == me) continue;
      const std::vector<int>& theirs = members[static_cast<std::size_t>(site)];
      const int world = spanning.world_of_rank[static_cast<std::size_t>(layout.leader(site))];
      leader_rc = front_end_.receive_bytes(world, context, tag, comm, &message);
      if (leader_rc != MPI_SUCCESS) break;
      // Header: their ranks x our ranks, sizes; then the blocks in that order. Checked before use.
      const std::size_t header = theirs.size() * static_cast<std::size_t>(local_size) * sizeof(int);
      std::size_t offset = header;
      std::vector<int> sizes;
      for (std::size_t i = 0; i < theirs.size() * static_cast<std::size_t>(local_size) && header <= message.size(); ++i) {
        const int bytes = get_int(message.data() + i * sizeof(int));
        if (bytes < 0 || static_cast<std::size_t>(bytes) > message.size() - offset) break;
        sizes.push_back(bytes);
        offset += static_cast<std::size_t>(bytes);
      }
      if (sizes.size() != theirs.size() * static_cast<std::size_t>(local_size) || offset != message.size()) {
        leader_rc = MPI_ERR_INTERN;  // not what a leader of this collective sends
        break;
      }
      offset = header;
      std::size_t next = 0;
      for (int source : theirs) {
        for (int local = 0; local < local_size; ++local) {
          const int bytes = sizes[next++];
          auto& to = for_local[static_cast<std::size_t>(local)];
          to.insert(to.end(), message.data() + offset, message.data() + offset + bytes);
          incoming_bytes[static_cast<std::size_t>(local) * static_cast<std::size_t>(size) + static_cast<std::size_t>(source)] =
              bytes;
          offset += static_cast<std::size_t>(bytes);
        }
      }
    }
    std::vector<long long> bytes;
    for (const auto& b : for_local) bytes.push_back(static_cast<long long>(b.size()));
    if (leader_rc == MPI_SUCCESS && !offsets_of(bytes, &scatter_counts, &scatter_offsets)) leader_rc = MPI_ERR_COUNT;
    for (const auto& b : for_local) scattered.insert(scattered.end(), b.begin(), b.end());
  }
  // The site's ranks wait for their leader asleep and learn its outcome (none spins for the whole
  // crossing, none waits after an error of the leader's).
  rc = release_site(layout, spanning.local, leader_rc, comm);
  if (rc != MPI_SUCCESS) return rc;
  std::vector<int> my_incoming_bytes(static_cast<std::size_t>(size), 0);
  rc = PMPI_Scatter(incoming_bytes.data(), size, MPI_INT, my_incoming_bytes.data(), size, MPI_INT, 0, spanning.local);
  if (rc != MPI_SUCCESS) return rc;
  long long my_total = 0;
  for (int bytes : my_incoming_bytes) my_total += bytes;
  std::vector<std::byte> mine_in(static_cast<std::size_t>(my_total));
  rc = PMPI_Scatterv(scattered.data(), scatter_counts.data(), scatter_offsets.data(), MPI_BYTE, mine_in.data(),
                     static_cast<int>(my_total), MPI_BYTE, 0, spanning.local);
  if (rc != MPI_SUCCESS) return rc;

  // 6. Every rank unpacks its blocks from other sites into place.
  std::size_t offset = 0;
  for (int site = 0; site < layout.site_count(); ++site) {
    if (site == me) continue;
    for (int source : members[static_cast<std::size_t>(site)]) {
      const auto bytes = static_cast<std::size_t>(my_incoming_bytes[static_cast<std::size_t>(source)]);
      rc = unpack(mine_in.data() + offset, bytes, receive.at(source), receive.count(source), receive.type_of(source),
                  comm);
      if (rc != MPI_SUCCESS) return rc;
      offset += bytes;
    }
  }
  return MPI_SUCCESS;
}

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
