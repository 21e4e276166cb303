// SiteCollectives: Alltoall, Alltoallv and Alltoallw across sites, each crossing the long link at
// most once per pair of sites (docs/mpi-collectives.md). Reduce_scatter, Scan and Exscan:
// collectives_reduce_scan.cpp.
#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>
#include <vector>

#include "collective_buffers.h"
#include "collectives.h"

namespace lp::mpi {
namespace {

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

}  // namespace lp::mpi
