// NeighborCollectives (collectives_neighbor.h): every neighbourhood collective is one exchange of
// blocks between neighbours, described by the blocks each side names (Block), so one state machine
// (NeighborExchange) serves the five calls and both forms.
//
// Wire: a process sends each neighbour at another site one LongPipe transfer (FrontEnd::send_bytes on
// the communicator's private context, the call's tag) holding every block it has for that process, in
// block order: the number of blocks and each one's packed size (8 bytes each), then the packed blocks.
// The receiver unpacks them into its blocks from that source in Neighbors::receive_order. Blocks
// between processes of one site are Open MPI messages on the site sub-communicator, receives posted
// in the same order, so MPI's matching order pairs them up alike.
#include "collectives_neighbor.h"

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "collective_buffers.h"
#include "neighbor_topology.h"

namespace lp::mpi {
namespace {

// One block of the exchange: `count` elements of `type` at `buffer`.
struct Block {
  void* buffer = nullptr;
  int count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
};

// The tag of a call's messages on the site sub-communicator: its collective tag folded into 2 ..
// 32766, above the one tag the site-path Scan/Exscan use there (collectives_reduce_scan.cpp) and within
// the MPI_TAG_UB every MPI guarantees. Calls that share a tag still pair up right: every process
// makes a communicator's collectives in one order, and MPI's messages do not overtake.
int local_tag(int tag) { return 2 + tag % 32765; }

void put_u64(std::vector<std::byte>* out, std::uint64_t value) {
  const std::size_t at = out->size();
  out->resize(at + sizeof value);
  std::memcpy(out->data() + at, &value, sizeof value);
}

std::uint64_t get_u64(const std::byte* in) {
  std::uint64_t value = 0;
  std::memcpy(&value, in, sizeof value);
  return value;
}

class NeighborExchange final : public PendingCollective {
 public:
  NeighborExchange(FrontEnd& front_end, SiteCollectives::SiteChannel channel, MPI_Comm comm, const Neighbors& neighbors,
                   const std::vector<Block>& sends, const std::vector<Block>& receives)
      : front_end_(front_end), channel_(std::move(channel)), comm_(comm) {
    receive_same_site(neighbors, receives);
    send_to_neighbors(neighbors, sends);
  }
  ~NeighborExchange() override {
    // Released unfinished (an error before the requests completed): let Open MPI drop them.
    for (MPI_Request& request : local_requests_) {
      if (request != MPI_REQUEST_NULL) PMPI_Request_free(&request);
    }
  }

  bool advance(int* error, int* failed_world) override {
    for (auto& [rank, remote] : remote_sources_) {
      if (remote.done) continue;
      const int world = world_of(rank);
      int rc = MPI_SUCCESS;
      if (!front_end_.try_take_bytes(world, channel_.context, channel_.tag, &remote.transfer, &rc)) continue;
      remote.done = true;
      if (rc != MPI_SUCCESS) {
        fail(rc, rc == MPI_ERR_OTHER ? world : -1);
      } else {
        unpack_transfer(remote);
      }
      --remote_left_;
    }
    if (!local_requests_.empty()) {
      int flag = 0;
      std::vector<MPI_Status> statuses(local_requests_.size());
      const int rc =
          PMPI_Testall(static_cast<int>(local_requests_.size()), local_requests_.data(), &flag, statuses.data());
      if (flag) {
        if (rc != MPI_SUCCESS) fail(rc);
        local_requests_.clear();
      }
    }
    *error = error_;
    *failed_world = failed_world_;
    return remote_left_ == 0 && local_requests_.empty();
  }
  bool waits_on_open_mpi() const override { return !local_requests_.empty(); }

 private:
  // What one source at another site sends: its transfer, and the blocks it fills, in order.
  struct RemoteSource {
    std::vector<Block> blocks;
    TransferAssembler transfer;
    bool done = false;
  };

  int world_of(int rank) const { return channel_.world_of_rank[static_cast<std::size_t>(rank)]; }
  bool same_site(int rank) const { return channel_.layout.site_index_of(rank) == channel_.layout.my_site_index(); }
  void fail(int rc, int world = -1) {
    if (error_ != MPI_SUCCESS) return;  // the first error is the one reported
    error_ = rc;
    failed_world_ = world;
  }

  // Receives from the same site posted now (in receive order); the other sites' noted.
  void receive_same_site(const Neighbors& neighbors, const std::vector<Block>& receives) {
    for (int k : neighbors.receive_order) {
      const int source = neighbors.sources[static_cast<std::size_t>(k)];
      if (source == MPI_PROC_NULL) continue;
      const Block& block = receives[static_cast<std::size_t>(k)];
      if (!same_site(source)) {
        auto [it, added] = remote_sources_.try_emplace(source);
        if (added) ++remote_left_;
        it->second.blocks.push_back(block);
        continue;
      }
      MPI_Request* request = &local_requests_.emplace_back(MPI_REQUEST_NULL);
      const int rc = PMPI_Irecv(block.buffer, block.count, block.type, channel_.layout.local_rank_of(source),
                                local_tag(channel_.tag), channel_.local, request);
      if (rc != MPI_SUCCESS) fail(rc);
    }
  }

  // Every send block: packed into its destination's transfer (another site), or an Open MPI send.
  void send_to_neighbors(const Neighbors& neighbors, const std::vector<Block>& sends) {
    std::map<int, std::vector<std::vector<std::byte>>> packed;  // destination rank -> its blocks, in order
    for (std::size_t s = 0; s < neighbors.destinations.size(); ++s) {
      const int destination = neighbors.destinations[s];
      if (destination == MPI_PROC_NULL) continue;
      const Block& block = sends[s];
      if (!same_site(destination)) {
        int rc = MPI_SUCCESS;
        packed[destination].push_back(pack(block.buffer, block.count, block.type, comm_, &rc));
        if (rc != MPI_SUCCESS) fail(rc);
        continue;
      }
      MPI_Request* request = &local_requests_.emplace_back(MPI_REQUEST_NULL);
      const int rc = PMPI_Isend(block.buffer, block.count, block.type, channel_.layout.local_rank_of(destination),
                                local_tag(channel_.tag), channel_.local, request);
      if (rc != MPI_SUCCESS) fail(rc);
    }
    // Every neighbour gets its transfer, also after an error here: one that announces no block
    // then, which fails the receiver's call (MPI_ERR_INTERN) instead of leaving it waiting.
    const bool packed_all = error_ == MPI_SUCCESS;
    for (const auto& [destination, blocks] : packed) {
      const std::vector<std::byte> body = transfer_of(packed_all ? blocks : std::vector<std::vector<std::byte>>{});
      const int world = world_of(destination);
      const int rc = front_end_.send_bytes(world, channel_.context, channel_.tag, body, comm_);
      if (rc != MPI_SUCCESS) fail(rc, world);
    }
  }

  // The number of blocks and each one's size (8 bytes each), then the blocks.
  static std::vector<std::byte> transfer_of(const std::vector<std::vector<std::byte>>& blocks) {
    std::vector<std::byte> body;
    put_u64(&body, blocks.size());
    for (const auto& one : blocks) put_u64(&body, one.size());
    for (const auto& one : blocks) body.insert(body.end(), one.begin(), one.end());
    return body;
  }

  void unpack_transfer(RemoteSource& remote) {
    const std::vector<std::byte> body = remote.transfer.take();
    const std::size_t header = sizeof(std::uint64_t);
    if (body.size() < header || get_u64(body.data()) != remote.blocks.size() ||
        body.size() < header * (1 + remote.blocks.size())) {
      return fail(MPI_ERR_INTERN);  // the neighbours disagree on the topology, or a malformed transfer
    }
    std::size_t at = header * (1 + remote.blocks.size());
    for (std::size_t i = 0; i < remote.blocks.size(); ++i) {
      const std::uint64_t bytes = get_u64(body.data() + header * (1 + i));
      if (bytes > body.size() - at) return fail(MPI_ERR_INTERN);
      const Block& block = remote.blocks[i];
      int capacity = 0;  // more than the block holds: truncated, as Open MPI reports it
      if (PMPI_Pack_size(block.count, block.type, comm_, &capacity) != MPI_SUCCESS ||
          bytes > static_cast<std::uint64_t>(capacity)) {
        return fail(MPI_ERR_TRUNCATE);
      }
      const int rc =
          unpack(body.data() + at, static_cast<std::size_t>(bytes), block.buffer, block.count, block.type, comm_);
      if (rc != MPI_SUCCESS) return fail(rc);
      at += static_cast<std::size_t>(bytes);
    }
  }

  FrontEnd& front_end_;
  const SiteCollectives::SiteChannel channel_;
  const MPI_Comm comm_;
  std::map<int, RemoteSource> remote_sources_;  // by rank in the communicator
  int remote_left_ = 0;                         // sources whose transfer has yet to come
  std::vector<MPI_Request> local_requests_;     // Open MPI's sends and receives within the site
  int error_ = MPI_SUCCESS;
  int failed_world_ = -1;
};

MPI_Aint extent_of(MPI_Datatype type) {
  MPI_Aint lower = 0, extent = 0;
  PMPI_Type_get_extent(type, &lower, &extent);
  return extent;
}

void* offset(const void* base, MPI_Aint bytes) { return static_cast<char*>(const_cast<void*>(base)) + bytes; }

// Blocks `count` elements of `type` apart from `base`, or at `displacements` (in extents).
std::vector<Block> regular_blocks(std::size_t n, const void* base, int count, MPI_Datatype type) {
  std::vector<Block> blocks(n);
  const MPI_Aint extent = extent_of(type);
  for (std::size_t i = 0; i < n; ++i)
    blocks[i] = {offset(base, static_cast<MPI_Aint>(i) * count * extent), count, type};
  return blocks;
}
std::vector<Block> displaced_blocks(std::size_t n, const void* base, const int* counts, const int* displacements,
                                    MPI_Datatype type) {
  std::vector<Block> blocks(n);
  const MPI_Aint extent = extent_of(type);
  for (std::size_t i = 0; i < n; ++i) blocks[i] = {offset(base, displacements[i] * extent), counts[i], type};
  return blocks;
}
std::vector<Block> typed_blocks(std::size_t n, const void* base, const int* counts, const MPI_Aint* displacements,
                                const MPI_Datatype* types) {
  std::vector<Block> blocks(n);
  for (std::size_t i = 0; i < n; ++i) blocks[i] = {offset(base, displacements[i]), counts[i], types[i]};
  return blocks;
}

// The neighbours and the channel if the call takes the site path (counted either way).
struct SitePath {
  SiteCollectives::SiteChannel channel;
  Neighbors neighbors;
};
std::optional<SitePath> site_path(SiteCollectives& collectives, MPI_Comm comm, Collective blocking,
                                  Collective nonblocking, MPI_Request* request) {
  const Collective collective = request ? nonblocking : blocking;
  // Without a topology Open MPI's call runs, and returns its error.
  Neighbors neighbors;
  if (!topology_neighbors(comm, &neighbors)) {
    collectives.count_native(collective);
    return std::nullopt;
  }
  auto channel = collectives.site_channel(comm, collective, request != nullptr);
  if (!channel) return std::nullopt;
  return SitePath{std::move(*channel), std::move(neighbors)};
}

// One exchange as a LongPipe request; the blocking form (`request` null) waits for it now.
int exchange(FrontEnd& front_end, SitePath& path, MPI_Comm comm, const std::vector<Block>& sends,
             const std::vector<Block>& receives, MPI_Request* request) {
  MPI_Request own = MPI_REQUEST_NULL;
  MPI_Request* slot = request ? request : &own;
  const int started = front_end.start_collective(
      std::make_unique<NeighborExchange>(front_end, std::move(path.channel), comm, path.neighbors, sends, receives),
      comm, slot);
  if (started != MPI_SUCCESS || request) return started;
  return front_end.wait(slot, MPI_STATUS_IGNORE);
}

}  // namespace

int NeighborCollectives::allgather(const void* send, int send_count, MPI_Datatype send_type, void* receive,
                                   int receive_count, MPI_Datatype receive_type, MPI_Comm comm, MPI_Request* request) {
  auto path = site_path(collectives_, comm, Collective::kNeighborAllgather, Collective::kIneighborAllgather, request);
  if (!path) {
    return request ? PMPI_Ineighbor_allgather(send, send_count, send_type, receive, receive_count, receive_type, comm,
                                              request)
                   : PMPI_Neighbor_allgather(send, send_count, send_type, receive, receive_count, receive_type, comm);
  }
  const Block mine{const_cast<void*>(send), send_count, send_type};
  return exchange(front_end_, *path, comm, std::vector<Block>(path->neighbors.destinations.size(), mine),
                  regular_blocks(path->neighbors.sources.size(), receive, receive_count, receive_type), request);
}

int NeighborCollectives::allgatherv(const void* send, int send_count, MPI_Datatype send_type, void* receive,
                                    const int receive_counts[], const int displacements[], MPI_Datatype receive_type,
                                    MPI_Comm comm, MPI_Request* request) {
  auto path = site_path(collectives_, comm, Collective::kNeighborAllgatherv, Collective::kIneighborAllgatherv, request);
  if (!path) {
    return request ? PMPI_Ineighbor_allgatherv(send, send_count, send_type, receive, receive_counts, displacements,
                                               receive_type, comm, request)
                   : PMPI_Neighbor_allgatherv(send, send_count, send_type, receive, receive_counts, displacements,
                                              receive_type, comm);
  }
  const Block mine{const_cast<void*>(send), send_count, send_type};
  return exchange(
      front_end_, *path, comm, std::vector<Block>(path->neighbors.destinations.size(), mine),
      displaced_blocks(path->neighbors.sources.size(), receive, receive_counts, displacements, receive_type), request);
}

int NeighborCollectives::alltoall(const void* send, int send_count, MPI_Datatype send_type, void* receive,
                                  int receive_count, MPI_Datatype receive_type, MPI_Comm comm, MPI_Request* request) {
  auto path = site_path(collectives_, comm, Collective::kNeighborAlltoall, Collective::kIneighborAlltoall, request);
  if (!path) {
    return request ? PMPI_Ineighbor_alltoall(send, send_count, send_type, receive, receive_count, receive_type, comm,
                                             request)
                   : PMPI_Neighbor_alltoall(send, send_count, send_type, receive, receive_count, receive_type, comm);
  }
  return exchange(front_end_, *path, comm,
                  regular_blocks(path->neighbors.destinations.size(), send, send_count, send_type),
                  regular_blocks(path->neighbors.sources.size(), receive, receive_count, receive_type), request);
}

int NeighborCollectives::alltoallv(const void* send, const int send_counts[], const int send_displacements[],
                                   MPI_Datatype send_type, void* receive, const int receive_counts[],
                                   const int receive_displacements[], MPI_Datatype receive_type, MPI_Comm comm,
                                   MPI_Request* request) {
  auto path = site_path(collectives_, comm, Collective::kNeighborAlltoallv, Collective::kIneighborAlltoallv, request);
  if (!path) {
    return request ? PMPI_Ineighbor_alltoallv(send, send_counts, send_displacements, send_type, receive, receive_counts,
                                              receive_displacements, receive_type, comm, request)
                   : PMPI_Neighbor_alltoallv(send, send_counts, send_displacements, send_type, receive, receive_counts,
                                             receive_displacements, receive_type, comm);
  }
  return exchange(
      front_end_, *path, comm,
      displaced_blocks(path->neighbors.destinations.size(), send, send_counts, send_displacements, send_type),
      displaced_blocks(path->neighbors.sources.size(), receive, receive_counts, receive_displacements, receive_type),
      request);
}

int NeighborCollectives::alltoallw(const void* send, const int send_counts[], const MPI_Aint send_displacements[],
                                   const MPI_Datatype send_types[], void* receive, const int receive_counts[],
                                   const MPI_Aint receive_displacements[], const MPI_Datatype receive_types[],
                                   MPI_Comm comm, MPI_Request* request) {
  auto path = site_path(collectives_, comm, Collective::kNeighborAlltoallw, Collective::kIneighborAlltoallw, request);
  if (!path) {
    return request ? PMPI_Ineighbor_alltoallw(send, send_counts, send_displacements, send_types, receive,
                                              receive_counts, receive_displacements, receive_types, comm, request)
                   : PMPI_Neighbor_alltoallw(send, send_counts, send_displacements, send_types, receive, receive_counts,
                                             receive_displacements, receive_types, comm);
  }
  return exchange(
      front_end_, *path, comm,
      typed_blocks(path->neighbors.destinations.size(), send, send_counts, send_displacements, send_types),
      typed_blocks(path->neighbors.sources.size(), receive, receive_counts, receive_displacements, receive_types),
      request);
}

}  // namespace lp::mpi
