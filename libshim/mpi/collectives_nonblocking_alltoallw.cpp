// MPI_Ialltoallv and MPI_Ialltoallw across sites: the two levels of the blocking Alltoallv/w
// (collectives_exchange.cpp) as LongPipe requests (site_operation.h), under the posting-order rule
// of collectives_nonblocking.cpp. docs/mpi-collectives.md.
//
// Block sizes differ from rank to rank and only the sender knows its blocks' counts, so every
// rank's blocks for the other sites travel behind a header of their packed sizes (int32, one per
// rank of the other sites, site order then rank order). Every rank posts at once: an Igather of
// its header-and-blocks size to the leader, an Igatherv of the bytes, Open MPI's Ialltoallv
// (Ialltoallw) of the site's own blocks on the sub-communicator, then the leader's status (Ibcast)
// and an Iscatterv of the blocks from other sites; the leader posts the Igatherv once the sizes are
// here and the last two after the exchange. The leader sends each other site's leader one message:
// per local rank, the sizes and blocks for that site's ranks. It regroups what arrives by
// destination (site order, then source rank order) and scatters it; each rank knows what it
// receives (its receive counts and types: MPI has the signatures match the senders'), so it reads
// its blocks in that order and unpacks each at its displacement. MPI_IN_PLACE: the blocks go from a
// copy of `receive` (receive counts, displacements and types).
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "collective_blocks.h"
#include "collective_buffers.h"
#include "collectives.h"
#include "site_operation.h"

namespace lp::mpi {
namespace {

using blocks::at;
using blocks::PackedReader;

// One side of the call: per rank the count, the displacement as given (elements for the v form,
// bytes for the w form), its byte offset and the type.
struct Side {
  const void* base = nullptr;
  std::vector<int> counts, displacements;
  std::vector<MPI_Aint> offsets;
  std::vector<MPI_Datatype> types;

  Side(const void* buffer, int ranks, const int* counts_in, const int* displacements_in, const MPI_Datatype* types_in,
       MPI_Datatype type)
      : base(buffer), counts(counts_in, counts_in + ranks), displacements(displacements_in, displacements_in + ranks) {
    MPI_Aint lower = 0, extent = 0;
    if (!types_in) PMPI_Type_get_extent(type, &lower, &extent);
    for (int r = 0; r < ranks; ++r) {
      const auto i = static_cast<std::size_t>(r);
      types.push_back(types_in ? types_in[i] : type);
      offsets.push_back(types_in ? displacements[i] : displacements[i] * extent);
    }
  }
  void* block(int rank) const { return at(base, offsets[static_cast<std::size_t>(rank)]); }
  int count(int rank) const { return counts[static_cast<std::size_t>(rank)]; }
  MPI_Datatype type(int rank) const { return types[static_cast<std::size_t>(rank)]; }
};

constexpr std::size_t kSizeBytes = sizeof(std::int32_t);  // one block size in a header

void put_int32(std::vector<std::byte>* out, std::size_t at_byte, std::int32_t value) {
  std::memcpy(out->data() + at_byte, &value, sizeof value);
}
std::int32_t get_int32(const std::byte* from) {
  std::int32_t value = 0;
  std::memcpy(&value, from, sizeof value);
  return value;
}

class SiteIalltoallw final : public SiteOperation {
 public:
  SiteIalltoallw(bool w_form, Side send, Side receive, const OperationSite& site)
      : SiteOperation(site), w_form_(w_form), send_(std::move(send)), receive_(std::move(receive)) {
    const int me = layout_.my_site_index();
    mine_ = ranks_at(me);
    for (int site = 0; site < layout_.site_count(); ++site) {
      if (site == me) continue;
      for (int r : ranks_at(site)) others_.push_back(r);
    }
    if (send_.base == MPI_IN_PLACE) copy_receive_as_send();
    // This rank's header and blocks for the other sites, the data as it is now.
    const std::size_t header = others_.size() * kSizeBytes;
    outgoing_.resize(header);
    int rc = MPI_SUCCESS;
    for (std::size_t i = 0; i < others_.size() && rc == MPI_SUCCESS; ++i) {
      const std::size_t before = outgoing_.size();
      const int r = others_[i];
      if (send_.count(r) == 0) continue;  // an empty block (its type may be MPI_DATATYPE_NULL): size 0
      rc = pack_append(send_.block(r), send_.count(r), send_.type(r), comm_, &outgoing_);
      put_int32(&outgoing_, i * kSizeBytes, static_cast<std::int32_t>(outgoing_.size() - before));
    }
    if (rc != MPI_SUCCESS) fail(rc);
    outgoing_size_ = static_cast<int>(outgoing_.size());
    // What this rank receives from the other sites, packed.
    for (int r : others_) {
      int bytes = 0;
      if (receive_.count(r) == 0) continue;
      if (PMPI_Pack_size(receive_.count(r), receive_.type(r), comm_, &bytes) == MPI_SUCCESS) incoming_size_ += bytes;
    }
    incoming_.resize(static_cast<std::size_t>(incoming_size_));
    // The site's own blocks (Open MPI, on the sub-communicator: local rank order).
    for (int r : mine_) {
      const auto i = static_cast<std::size_t>(r);
      local_send_counts_.push_back(send_.counts[i]);
      local_send_displacements_.push_back(send_.displacements[i]);
      local_send_types_.push_back(send_.types[i]);
      local_receive_counts_.push_back(receive_.counts[i]);
      local_receive_displacements_.push_back(receive_.displacements[i]);
      local_receive_types_.push_back(receive_.types[i]);
    }
    if (layout_.is_leader()) sizes_.resize(mine_.size());
  }
  bool waits_on_open_mpi() const override { return phase_ != Phase::kExchange; }

 private:
  enum class Phase { kPost, kSizes, kGathering, kExchange, kScattering };

  bool step() override {
    switch (phase_) {
      case Phase::kPost: {
        if (!first_in_line()) return false;
        const int rc = PMPI_Igather(&outgoing_size_, 1, MPI_INT, sizes_.data(), 1, MPI_INT, 0, local_,
                                    new_local_request());
        if (rc != MPI_SUCCESS) fail(rc);
        if (layout_.is_leader()) {
          phase_ = Phase::kSizes;
          return true;
        }
        post_gather_and_local_exchange(nullptr, nullptr);
        scatter();
        phase_ = Phase::kScattering;
        return true;
      }
      case Phase::kSizes: {
        if (!local_complete()) return false;
        int total = 0;
        for (int bytes : sizes_) {
          gathered_displacements_.push_back(total);
          total += bytes;
        }
        gathered_.resize(static_cast<std::size_t>(total));
        post_gather_and_local_exchange(sizes_.data(), gathered_displacements_.data());
        phase_ = Phase::kGathering;
        return true;
      }
      case Phase::kGathering:
        if (!local_complete()) return false;
        if (!failed()) send_messages();
        transfers_.resize(static_cast<std::size_t>(layout_.site_count()));
        taken_.assign(transfers_.size(), false);
        phase_ = Phase::kExchange;
        return true;
      case Phase::kExchange:
        for (int site = 0; site < layout_.site_count() && !failed(); ++site) {
          const auto at_site = static_cast<std::size_t>(site);
          if (site == layout_.my_site_index() || taken_[at_site]) continue;
          if (!take(leader_world(site), &transfers_[at_site])) return false;
          taken_[at_site] = true;
        }
        if (!failed()) regroup();
        scatter();  // also after an error: the site's other ranks are let go, with it
        phase_ = Phase::kScattering;
        return true;
      case Phase::kScattering:
        if (!finished_locally()) return false;
        if (!failed()) unpack_mine();
        finish();
        return true;
    }
    return false;
  }

  // The packed blocks to the leader (`counts`, `displacements`: the leader's), then the site's own
  // blocks between the site's ranks.
  void post_gather_and_local_exchange(const int* counts, const int* displacements) {
    int rc = PMPI_Igatherv(outgoing_.data(), outgoing_size_, MPI_BYTE, gathered_.data(), counts, displacements,
                           MPI_BYTE, 0, local_, new_local_request());
    if (rc != MPI_SUCCESS) fail(rc);
    if (w_form_) {
      rc = PMPI_Ialltoallw(send_.base, local_send_counts_.data(), local_send_displacements_.data(),
                           local_send_types_.data(), const_cast<void*>(receive_.base), local_receive_counts_.data(),
                           local_receive_displacements_.data(), local_receive_types_.data(), local_,
                           new_local_request());
    } else {
      rc = PMPI_Ialltoallv(send_.base, local_send_counts_.data(), local_send_displacements_.data(), send_.types[0],
                           const_cast<void*>(receive_.base), local_receive_counts_.data(),
                           local_receive_displacements_.data(), receive_.types[0], local_, new_local_request());
    }
    if (rc != MPI_SUCCESS) fail(rc);
  }

  // The leader: to each other site's leader, per local rank (local order) the sizes and the blocks
  // of that site's ranks, cut from the rank's header and blocks.
  void send_messages() {
    const std::size_t header = others_.size() * kSizeBytes;
    std::vector<std::size_t> block_start(mine_.size()), index_start(mine_.size(), 0);
    for (std::size_t local = 0; local < mine_.size(); ++local) {
      block_start[local] = static_cast<std::size_t>(gathered_displacements_[local]) + header;
      if (static_cast<std::size_t>(sizes_[local]) < header) return fail(MPI_ERR_TRUNCATE);
    }
    for (int site = 0; site < layout_.site_count() && !failed(); ++site) {
      if (site == layout_.my_site_index()) continue;
      const std::size_t theirs = ranks_at(site).size();
      std::vector<std::byte> message;
      for (std::size_t local = 0; local < mine_.size(); ++local) {
        const std::byte* sizes = gathered_.data() + gathered_displacements_[local] + index_start[local] * kSizeBytes;
        std::size_t bytes = 0;
        for (std::size_t k = 0; k < theirs; ++k) bytes += static_cast<std::uint32_t>(get_int32(sizes + k * kSizeBytes));
        message.insert(message.end(), sizes, sizes + theirs * kSizeBytes);
        const std::byte* blocks = gathered_.data() + block_start[local];
        message.insert(message.end(), blocks, blocks + bytes);
        block_start[local] += bytes;
        index_start[local] += theirs;
      }
      send(leader_world(site), message);
    }
  }

  // The leader: the blocks from the other sites' messages, by destination (local rank), each
  // destination's in site order, then source rank order: what Iscatterv hands out.
  void regroup() {
    std::vector<std::vector<std::byte>> by_destination(mine_.size());
    for (int site = 0; site < layout_.site_count(); ++site) {
      if (site == layout_.my_site_index()) continue;
      const std::vector<std::byte> message = transfers_[static_cast<std::size_t>(site)].take();
      std::size_t position = 0;
      for (std::size_t source = 0; source < ranks_at(site).size(); ++source) {
        const std::size_t header = mine_.size() * kSizeBytes;
        if (message.size() - position < header) return fail(MPI_ERR_TRUNCATE);
        const std::byte* sizes = message.data() + position;
        position += header;
        for (std::size_t local = 0; local < mine_.size(); ++local) {
          const std::size_t bytes = static_cast<std::uint32_t>(get_int32(sizes + local * kSizeBytes));
          if (message.size() - position < bytes) return fail(MPI_ERR_TRUNCATE);
          by_destination[local].insert(by_destination[local].end(), message.data() + position,
                                       message.data() + position + bytes);
          position += bytes;
        }
      }
    }
    for (const auto& blocks : by_destination) {
      scatter_displacements_.push_back(static_cast<int>(scattered_.size()));
      scatter_counts_.push_back(static_cast<int>(blocks.size()));
      scattered_.insert(scattered_.end(), blocks.begin(), blocks.end());
    }
  }

  // The leader's status, then each rank's blocks from the other sites; this rank's last posts.
  void scatter() {
    post_site_status();
    if (layout_.is_leader() && scatter_counts_.empty()) {  // after an error: nothing to hand out
      scatter_counts_.assign(mine_.size(), 0);
      scatter_displacements_.assign(mine_.size(), 0);
    }
    int receive_bytes = incoming_size_;
    if (layout_.is_leader()) receive_bytes = std::min(receive_bytes, scatter_counts_[0]);
    const int rc = PMPI_Iscatterv(scattered_.data(), scatter_counts_.data(), scatter_displacements_.data(), MPI_BYTE,
                                  incoming_.data(), receive_bytes, MPI_BYTE, 0, local_, new_local_request());
    if (rc != MPI_SUCCESS) fail(rc);
    done_posting();
  }

  void unpack_mine() {
    PackedReader reader(incoming_.data(), incoming_.size());
    for (int r : others_) {
      const int rc = reader.next(receive_.block(r), receive_.count(r), receive_.type(r), comm_);
      if (rc != MPI_SUCCESS) return fail(rc);
    }
  }

  // MPI_IN_PLACE: the send side becomes a copy of the receive blocks (counts, displacements,
  // types), placed so that the same displacements find them.
  void copy_receive_as_send() {
    MPI_Aint low = 0, high = 0;
    for (int r = 0; r < size(); ++r) {
      if (receive_.count(r) == 0) continue;
      MPI_Aint lower = 0, extent = 0, true_lower = 0, true_extent = 0;
      PMPI_Type_get_extent(receive_.type(r), &lower, &extent);
      PMPI_Type_get_true_extent(receive_.type(r), &true_lower, &true_extent);
      const MPI_Aint start = receive_.offsets[static_cast<std::size_t>(r)] + true_lower;
      low = std::min(low, start);
      high = std::max(high, start + static_cast<MPI_Aint>(receive_.count(r) - 1) * extent + true_extent);
    }
    own_copy_.resize(static_cast<std::size_t>(high - low) + 1);
    std::memcpy(own_copy_.data(), static_cast<const std::byte*>(receive_.base) + low,
                static_cast<std::size_t>(high - low));
    send_ = receive_;
    send_.base = own_copy_.data() - low;
  }

  const bool w_form_;
  Side send_;
  const Side receive_;
  std::vector<int> mine_;    // this site's ranks
  std::vector<int> others_;  // the other sites' ranks, site order then rank order
  std::vector<int> local_send_counts_, local_send_displacements_, local_receive_counts_,
      local_receive_displacements_;
  std::vector<MPI_Datatype> local_send_types_, local_receive_types_;
  Phase phase_ = Phase::kPost;
  std::vector<std::byte> own_copy_;   // MPI_IN_PLACE: the receive buffer's blocks as they were
  std::vector<std::byte> outgoing_;   // this rank's header and blocks for the other sites
  int outgoing_size_ = 0;
  std::vector<int> sizes_;            // the leader: every local rank's outgoing size
  std::vector<int> gathered_displacements_;
  std::vector<std::byte> gathered_;   // the leader: every local rank's `outgoing_`
  std::vector<TransferAssembler> transfers_;  // the leader, per site index: its message
  std::vector<bool> taken_;
  std::vector<std::byte> scattered_;  // the leader: every local rank's blocks from other sites
  std::vector<int> scatter_counts_, scatter_displacements_;
  std::vector<std::byte> incoming_;   // this rank's blocks from the other sites, packed
  int incoming_size_ = 0;
};

}  // namespace

int SiteCollectives::ialltoallv(const void* send, const int send_counts[], const int send_displacements[],
                                MPI_Datatype send_type, void* receive, const int receive_counts[],
                                const int receive_displacements[], MPI_Datatype receive_type, MPI_Comm comm,
                                MPI_Request* request) {
  Spanning* spanning = site_path(comm, Collective::kIalltoallv);
  if (!spanning) {
    return PMPI_Ialltoallv(send, send_counts, send_displacements, send_type, receive, receive_counts,
                           receive_displacements, receive_type, comm, request);
  }
  const int ranks = static_cast<int>(spanning->world_of_rank.size());
  Side receiving(receive, ranks, receive_counts, receive_displacements, nullptr, receive_type);
  Side sending = send == MPI_IN_PLACE ? Side(send, ranks, receive_counts, receive_displacements, nullptr, receive_type)
                                      : Side(send, ranks, send_counts, send_displacements, nullptr, send_type);
  return front_end_.start_collective(std::make_unique<SiteIalltoallw>(false, std::move(sending), std::move(receiving),
                                                                      operation_site(*spanning, comm)),
                                     comm, request);
}

int SiteCollectives::ialltoallw(const void* send, const int send_counts[], const int send_displacements[],
                                const MPI_Datatype send_types[], void* receive, const int receive_counts[],
                                const int receive_displacements[], const MPI_Datatype receive_types[], MPI_Comm comm,
                                MPI_Request* request) {
  Spanning* spanning = site_path(comm, Collective::kIalltoallw);
  if (!spanning) {
    return PMPI_Ialltoallw(send, send_counts, send_displacements, send_types, receive, receive_counts,
                           receive_displacements, receive_types, comm, request);
  }
  const int ranks = static_cast<int>(spanning->world_of_rank.size());
  Side receiving(receive, ranks, receive_counts, receive_displacements, receive_types, MPI_DATATYPE_NULL);
  Side sending = send == MPI_IN_PLACE
                     ? Side(send, ranks, receive_counts, receive_displacements, receive_types, MPI_DATATYPE_NULL)
                     : Side(send, ranks, send_counts, send_displacements, send_types, MPI_DATATYPE_NULL);
  return front_end_.start_collective(std::make_unique<SiteIalltoallw>(true, std::move(sending), std::move(receiving),
                                                                      operation_site(*spanning, comm)),
                                     comm, request);
}

}  // namespace lp::mpi
