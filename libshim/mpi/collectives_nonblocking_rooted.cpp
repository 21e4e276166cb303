// MPI_Igather, MPI_Iscatter and MPI_Iscatterv across sites: the two levels of the blocking
// Gather and Scatter(v) (collectives_gather.cpp, the same messages) as LongPipe requests
// (site_operation.h), under the posting-order rule of collectives_nonblocking.cpp. README.md,
// "Collectives".
#include <cstdint>
#include <cstring>
#include <utility>

#include "collective_blocks.h"
#include "collective_buffers.h"
#include "collectives.h"
#include "site_operation.h"

namespace lp::mpi {
namespace {

using blocks::at;
using blocks::extent_of;
using blocks::PackedReader;

// The root's site gathers straight into the root's buffer (Igatherv, the root's types and
// displacements; MPI_IN_PLACE passes through); every other site's leader gathers its ranks' packed
// blocks (all of one size: Gather's) and sends them to the root in one message, which the root
// unpacks into those ranks' places. Each rank posts its one collective on the sub-communicator at
// once. As the blocking Gather, each rank completes with its own outcome.
class SiteIgather final : public SiteOperation {
 public:
  SiteIgather(const void* send, int send_count, MPI_Datatype send_type, void* receive, int receive_count,
              MPI_Datatype receive_type, int root, const OperationSite& site)
      : SiteOperation(site),
        send_(send),
        send_count_(send_count),
        send_type_(send_type),
        receive_(receive),
        receive_count_(receive_count),
        receive_type_(receive_type),
        root_(root),
        root_site_(layout_.site_index_of(root)) {
    PMPI_Comm_rank(comm_, &rank_);
    const std::vector<int> here = ranks_at(layout_.my_site_index());
    if (rank_ == root_) {
      for (int r : here) {
        local_counts_.push_back(receive_count_);
        local_displacements_.push_back(r * receive_count_);
      }
    }
    if (layout_.my_site_index() == root_site_) return;
    const int rc = pack_append(send_, send_count_, send_type_, comm_, &mine_);  // the data as it is now
    if (rc != MPI_SUCCESS) fail(rc);
    if (!layout_.is_leader()) return;
    const int my_size = static_cast<int>(mine_.size());
    for (std::size_t i = 0; i < here.size(); ++i) {
      local_counts_.push_back(my_size);
      local_displacements_.push_back(static_cast<int>(i) * my_size);
    }
    site_blocks_.resize(here.size() * mine_.size());
  }
  bool waits_on_open_mpi() const override { return phase_ != Phase::kExchange; }

 private:
  enum class Phase { kPost, kGathering, kExchange };

  bool step() override {
    switch (phase_) {
      case Phase::kPost: {
        if (!first_in_line()) return false;
        int rc = MPI_SUCCESS;
        if (layout_.my_site_index() == root_site_) {
          rc = PMPI_Igatherv(send_, send_count_, send_type_, receive_, local_counts_.data(),
                             local_displacements_.data(), receive_type_, layout_.local_rank_of(root_), local_,
                             new_local_request());
        } else {
          rc = PMPI_Igatherv(mine_.data(), static_cast<int>(mine_.size()), MPI_BYTE, site_blocks_.data(),
                             local_counts_.data(), local_displacements_.data(), MPI_BYTE, 0, local_,
                             new_local_request());
        }
        if (rc != MPI_SUCCESS) fail(rc);
        done_posting();
        phase_ = Phase::kGathering;
        return true;
      }
      case Phase::kGathering:
        if (!local_complete()) return false;
        if (!failed() && rank_ == root_) {
          transfers_.resize(static_cast<std::size_t>(layout_.site_count()));
          unpacked_.assign(transfers_.size(), false);
          phase_ = Phase::kExchange;
          return true;
        }
        if (!failed() && layout_.my_site_index() != root_site_ && layout_.is_leader()) {
          send(world_of(root_), site_blocks_);
        }
        finish();
        return true;
      case Phase::kExchange: {  // the root: the other sites' blocks
        const MPI_Aint extent = extent_of(receive_type_);
        for (int site = 0; site < layout_.site_count() && !failed(); ++site) {
          const auto at_site = static_cast<std::size_t>(site);
          if (site == root_site_ || unpacked_[at_site]) continue;
          if (!take(leader_world(site), &transfers_[at_site])) return false;
          if (failed()) break;
          const std::vector<std::byte> packed = transfers_[at_site].take();
          PackedReader reader(packed.data(), packed.size());
          for (int r : ranks_at(site)) {
            const int rc = reader.next(at(receive_, r * receive_count_ * extent), receive_count_, receive_type_,
                                       comm_);
            if (rc != MPI_SUCCESS) fail(rc);
          }
          unpacked_[at_site] = true;
        }
        finish();
        return true;
      }
    }
    return false;
  }

  const void* const send_;
  const int send_count_;
  const MPI_Datatype send_type_;
  void* const receive_;
  const int receive_count_;
  const MPI_Datatype receive_type_;
  const int root_;
  const int root_site_;
  int rank_ = 0;
  Phase phase_ = Phase::kPost;
  std::vector<int> local_counts_;  // the gathering rank's, local order
  std::vector<int> local_displacements_;
  std::vector<std::byte> mine_;         // other sites: this rank's block, packed
  std::vector<std::byte> site_blocks_;  // other sites' leaders: their ranks' packed blocks
  std::vector<TransferAssembler> transfers_;
  std::vector<bool> unpacked_;
};

// The root sends every other site's leader that site's blocks, packed, behind a header of their
// sizes (int32, local rank order), during the call; then Open MPI scatters inside the root's site
// from the root's buffer (MPI_IN_PLACE passes through), and inside each other site the leader's
// status (Ibcast) and then the blocks from the leader's copy of the message (MPI_BYTE), each rank
// unpacking its own block with its own type.
class SiteIscatterv final : public SiteOperation {
 public:
  SiteIscatterv(const void* send_buffer, const int* counts, const int* displacements, MPI_Datatype send_type,
                void* receive, int receive_count, MPI_Datatype receive_type, int root, const OperationSite& site)
      : SiteOperation(site),
        send_(send_buffer),
        send_type_(send_type),
        receive_(receive),
        receive_count_(receive_count),
        receive_type_(receive_type),
        root_(root),
        root_site_(layout_.site_index_of(root)) {
    int rank = 0;
    PMPI_Comm_rank(comm_, &rank);
    const int me = layout_.my_site_index();
    if (rank == root_) {
      const MPI_Aint extent = extent_of(send_type_);
      for (int site = 0; site < layout_.site_count() && !failed(); ++site) {
        if (site == me) continue;
        const std::vector<int> ranks = ranks_at(site);
        std::vector<std::byte> message(ranks.size() * sizeof(std::int32_t));
        for (std::size_t i = 0; i < ranks.size() && !failed(); ++i) {
          const int r = ranks[i];
          const std::size_t start = message.size();
          const int rc = pack_append(at(send_, displacements[r] * extent), counts[r], send_type_, comm_, &message);
          if (rc != MPI_SUCCESS) fail(rc);
          const auto size = static_cast<std::int32_t>(message.size() - start);
          std::memcpy(message.data() + i * sizeof size, &size, sizeof size);
        }
        if (!failed()) send(leader_world(site), message);
      }
      for (int r : ranks_at(me)) {
        local_counts_.push_back(counts[r]);
        local_displacements_.push_back(displacements[r]);
      }
    }
    sizes_.assign(ranks_at(me).size(), 0);
    offsets_.assign(sizes_.size(), 0);
    phase_ = me != root_site_ && layout_.is_leader() ? Phase::kReceive : Phase::kPost;
  }
  bool waits_on_open_mpi() const override { return phase_ != Phase::kReceive; }

 private:
  enum class Phase { kReceive, kPost, kScattering };

  bool step() override {
    switch (phase_) {
      case Phase::kReceive: {
        if (!take(world_of(root_), &transfer_)) return false;
        if (!failed()) read_header();
        phase_ = Phase::kPost;  // also after an error: the site's other ranks are let go, with it
        return true;
      }
      case Phase::kPost: {
        if (!first_in_line()) return false;
        int rc = MPI_SUCCESS;
        if (layout_.my_site_index() == root_site_) {
          rc = PMPI_Iscatterv(send_, local_counts_.data(), local_displacements_.data(), send_type_, receive_,
                              receive_count_, receive_type_, layout_.local_rank_of(root_), local_,
                              new_local_request());
        } else if (layout_.is_leader()) {
          post_site_status();
          // The leader keeps its own block where it is (MPI_IN_PLACE) and unpacks it from the message.
          rc = PMPI_Iscatterv(blocks(), sizes_.data(), offsets_.data(), MPI_BYTE, MPI_IN_PLACE, 0, MPI_BYTE, 0,
                              local_, new_local_request());
        } else {
          post_site_status();
          int expected = 0;
          rc = PMPI_Pack_size(receive_count_, receive_type_, comm_, &expected);
          block_.resize(static_cast<std::size_t>(expected));
          if (rc == MPI_SUCCESS) {
            rc = PMPI_Iscatterv(nullptr, nullptr, nullptr, MPI_BYTE, block_.data(), expected, MPI_BYTE, 0, local_,
                                new_local_request());
          }
        }
        if (rc != MPI_SUCCESS) fail(rc);
        done_posting();
        phase_ = Phase::kScattering;
        return true;
      }
      case Phase::kScattering: {
        if (!finished_locally()) return false;
        if (!failed() && layout_.my_site_index() != root_site_) {
          PackedReader reader = layout_.is_leader()
                                    ? PackedReader(blocks() + offsets_[0], static_cast<std::size_t>(sizes_[0]))
                                    : PackedReader(block_.data(), block_.size());
          const int rc = reader.next(receive_, receive_count_, receive_type_, comm_);
          if (rc != MPI_SUCCESS) fail(rc);
        }
        finish();
        return true;
      }
    }
    return false;
  }

  // The leader: the sizes of its ranks' blocks from the message's header (all 0 if it is malformed).
  void read_header() {
    message_ = transfer_.take();
    const std::size_t header = sizes_.size() * sizeof(std::int32_t);
    if (message_.size() < header) return fail(MPI_ERR_TRUNCATE);
    std::vector<std::int32_t> sizes(sizes_.size());
    std::memcpy(sizes.data(), message_.data(), header);
    std::size_t total = header;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      offsets_[i] = static_cast<int>(total - header);
      total += static_cast<std::size_t>(sizes[i]);
    }
    if (total != message_.size()) return fail(MPI_ERR_TRUNCATE);
    for (std::size_t i = 0; i < sizes.size(); ++i) sizes_[i] = sizes[i];
  }
  std::byte* blocks() {
    const std::size_t header = sizes_.size() * sizeof(std::int32_t);
    return message_.size() > header ? message_.data() + header : nullptr;
  }

  const void* const send_;
  const MPI_Datatype send_type_;
  void* const receive_;
  const int receive_count_;
  const MPI_Datatype receive_type_;
  const int root_;
  const int root_site_;
  Phase phase_ = Phase::kPost;
  std::vector<int> local_counts_;  // the root: its site's ranks' counts and displacements
  std::vector<int> local_displacements_;
  TransferAssembler transfer_;     // other sites' leaders: the root's message
  std::vector<std::byte> message_;
  std::vector<int> sizes_;         // other sites' leaders: their ranks' blocks in `message_`
  std::vector<int> offsets_;
  std::vector<std::byte> block_;   // other sites' ranks but the leader: their packed block
};

}  // namespace

int SiteCollectives::igather(const void* send, int send_count, MPI_Datatype send_type, void* receive,
                             int receive_count, MPI_Datatype receive_type, int root, MPI_Comm comm,
                             MPI_Request* request) {
  Spanning* spanning = site_path(comm, Collective::kIgather);
  if (!spanning) {
    return PMPI_Igather(send, send_count, send_type, receive, receive_count, receive_type, root, comm, request);
  }
  return front_end_.start_collective(
      std::make_unique<SiteIgather>(send, send_count, send_type, receive, receive_count, receive_type, root,
                                    operation_site(*spanning, comm)),
      comm, request);
}

int SiteCollectives::iscatter(const void* send, int send_count, MPI_Datatype send_type, void* receive,
                              int receive_count, MPI_Datatype receive_type, int root, MPI_Comm comm,
                              MPI_Request* request) {
  Spanning* spanning = site_path(comm, Collective::kIscatter);
  if (!spanning) {
    return PMPI_Iscatter(send, send_count, send_type, receive, receive_count, receive_type, root, comm, request);
  }
  int rank = 0;
  PMPI_Comm_rank(comm, &rank);
  const blocks::UniformBlocks uniform(rank == root ? static_cast<int>(spanning->world_of_rank.size()) : 0,
                                      send_count);  // the root's only
  return front_end_.start_collective(
      std::make_unique<SiteIscatterv>(send, uniform.counts.data(), uniform.displacements.data(), send_type, receive,
                                      receive_count, receive_type, root, operation_site(*spanning, comm)),
      comm, request);
}

int SiteCollectives::iscatterv(const void* send, const int send_counts[], const int displacements[],
                               MPI_Datatype send_type, void* receive, int receive_count, MPI_Datatype receive_type,
                               int root, MPI_Comm comm, MPI_Request* request) {
  Spanning* spanning = site_path(comm, Collective::kIscatterv);
  if (!spanning) {
    return PMPI_Iscatterv(send, send_counts, displacements, send_type, receive, receive_count, receive_type, root,
                          comm, request);
  }
  return front_end_.start_collective(
      std::make_unique<SiteIscatterv>(send, send_counts, displacements, send_type, receive, receive_count,
                                      receive_type, root, operation_site(*spanning, comm)),
      comm, request);
}

}  // namespace lp::mpi
