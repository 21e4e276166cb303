// MPI_Ireduce, MPI_Iallgather and MPI_Iallgatherv across sites: the two levels of the blocking
// Reduce (collectives.cpp) and Allgather(v) (collectives_gather.cpp) as LongPipe requests
// (site_operation.h), under the posting-order rule of collectives_nonblocking.cpp. README.md,
// "Collectives".
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
using blocks::UniformBlocks;

// The root's site reduces to the root (Ireduce); every other site reduces to its leader, which sends
// the partial result to the root; the root combines all in site order (as combine_partials). Each
// rank posts its one collective on the sub-communicator at once. As the blocking Reduce, no status
// goes round a site: each rank completes with its own outcome.
class SiteIreduce final : public SiteOperation {
 public:
  SiteIreduce(const void* send, void* receive, int count, MPI_Datatype type, MPI_Op op, int root,
              const OperationSite& site)
      : SiteOperation(site), send_(send), receive_(receive), count_(count), type_(type), op_(op), root_(root) {
    PMPI_Comm_rank(comm_, &rank_);
  }
  bool waits_on_open_mpi() const override { return phase_ != Phase::kExchange; }

 private:
  enum class Phase { kPost, kReducing, kExchange };

  bool step() override {
    switch (phase_) {
      case Phase::kPost: {
        if (!first_in_line()) return false;
        const bool root_site = layout_.my_site_index() == layout_.site_index_of(root_);
        void* into = nullptr;
        if (rank_ == root_) {
          into = receive_;  // MPI_IN_PLACE passes through
        } else if (!root_site && layout_.is_leader()) {
          partial_ = std::make_unique<TypedScratch>(count_, type_);
          into = partial_->base();
        }
        const int local_root = root_site ? layout_.local_rank_of(root_) : 0;
        const int rc = PMPI_Ireduce(send_, into, count_, type_, op_, local_root, local_, new_local_request());
        if (rc != MPI_SUCCESS) fail(rc);
        done_posting();
        phase_ = Phase::kReducing;
        return true;
      }
      case Phase::kReducing: {
        if (!local_complete()) return false;
        if (!failed() && rank_ == root_) {
          transfers_.resize(static_cast<std::size_t>(layout_.site_count()));
          received_.resize(transfers_.size());
          phase_ = Phase::kExchange;
          return true;
        }
        if (!failed() && partial_) {
          int rc = MPI_SUCCESS;
          const std::vector<std::byte> packed = pack(partial_->base(), count_, type_, comm_, &rc);
          if (rc != MPI_SUCCESS) fail(rc);
          if (!failed()) send(world_of(root_), packed);
        }
        finish();
        return true;
      }
      case Phase::kExchange: {
        std::vector<void*> partial(static_cast<std::size_t>(layout_.site_count()), receive_);
        for (int site = 0; site < layout_.site_count() && !failed(); ++site) {
          const auto at_site = static_cast<std::size_t>(site);
          if (site == layout_.my_site_index()) continue;
          if (!received_[at_site]) {
            if (!take(leader_world(site), &transfers_[at_site])) return false;
            if (failed()) break;
            received_[at_site] = std::make_unique<TypedScratch>(count_, type_);
            const int rc = unpack(transfers_[at_site].take(), received_[at_site]->base(), count_, type_, comm_);
            if (rc != MPI_SUCCESS) fail(rc);
          }
          partial[at_site] = received_[at_site]->base();
        }
        if (!failed()) {
          const int rc = combine_in_site_order(partial, receive_, count_, type_, op_, comm_);
          if (rc != MPI_SUCCESS) fail(rc);
        }
        finish();
        return true;
      }
    }
    return false;
  }

  const void* const send_;
  void* const receive_;
  const int count_;
  const MPI_Datatype type_;
  const MPI_Op op_;
  const int root_;
  int rank_ = 0;
  Phase phase_ = Phase::kPost;
  std::unique_ptr<TypedScratch> partial_;                // other sites' leaders: their site's result
  std::vector<std::unique_ptr<TypedScratch>> received_;  // the root, per site index: its partial
  std::vector<TransferAssembler> transfers_;             // the root, per site index: as it arrives
};

// Each site's leader gathers its ranks' blocks into their places (Igatherv), sends them packed to
// every other leader and unpacks theirs; then each site broadcasts the leader's status and the
// whole result (Ibcast, an indexed type of every rank's block). MPI_IN_PLACE: each rank's block is
// in its place of `receive` (a non-leader sends it from a copy: the broadcast, posted at once,
// overwrites `receive`).
class SiteIallgatherv final : public SiteOperation {
 public:
  SiteIallgatherv(const void* send, int send_count, MPI_Datatype send_type, void* receive, std::vector<int> counts,
                  std::vector<int> displacements, MPI_Datatype receive_type, const OperationSite& site)
      : SiteOperation(site),
        send_(send),
        send_count_(send_count),
        send_type_(send_type),
        receive_(receive),
        counts_(std::move(counts)),
        displacements_(std::move(displacements)),
        receive_type_(receive_type),
        extent_(extent_of(receive_type)) {
    int rank = 0;
    PMPI_Comm_rank(comm_, &rank);
    const auto me = static_cast<std::size_t>(rank);
    if (!layout_.is_leader() && send_ == MPI_IN_PLACE) {
      own_copy_ = std::make_unique<TypedScratch>(counts_[me], receive_type_);
      int rc = MPI_SUCCESS;
      const std::vector<std::byte> packed =
          pack(at(receive_, displacements_[me] * extent_), counts_[me], receive_type_, comm_, &rc);
      if (rc == MPI_SUCCESS) rc = unpack(packed, own_copy_->base(), counts_[me], receive_type_, comm_);
      if (rc != MPI_SUCCESS) fail(rc);
      send_ = own_copy_->base();
      send_count_ = counts_[me];
      send_type_ = receive_type_;
    }
    for (int r : ranks_at(layout_.my_site_index())) {
      local_counts_.push_back(counts_[static_cast<std::size_t>(r)]);
      local_displacements_.push_back(displacements_[static_cast<std::size_t>(r)]);
    }
    int rc = PMPI_Type_indexed(size(), counts_.data(), displacements_.data(), receive_type_, &everything_);
    if (rc == MPI_SUCCESS) rc = PMPI_Type_commit(&everything_);
    if (rc != MPI_SUCCESS) fail(rc);
  }
  ~SiteIallgatherv() override {
    if (everything_ != MPI_DATATYPE_NULL) PMPI_Type_free(&everything_);
  }
  bool waits_on_open_mpi() const override { return phase_ != Phase::kExchange; }

 private:
  enum class Phase { kPost, kGathering, kExchange, kBroadcasting };

  bool step() override {
    switch (phase_) {
      case Phase::kPost: {
        if (!first_in_line()) return false;
        const bool leader = layout_.is_leader();
        const int rc = PMPI_Igatherv(send_, send_count_, send_type_, leader ? receive_ : nullptr,
                                     leader ? local_counts_.data() : nullptr,
                                     leader ? local_displacements_.data() : nullptr, receive_type_, 0, local_,
                                     new_local_request());
        if (rc != MPI_SUCCESS) fail(rc);
        if (leader) {
          phase_ = Phase::kGathering;
        } else {
          post_status_and_result(receive_, 1, everything_);
          phase_ = Phase::kBroadcasting;
        }
        return true;
      }
      case Phase::kGathering: {
        if (!local_complete()) return false;
        std::vector<std::byte> site_blocks;
        for (int r : ranks_at(layout_.my_site_index())) {
          if (failed()) break;
          const auto i = static_cast<std::size_t>(r);
          const int rc = pack_append(at(receive_, displacements_[i] * extent_), counts_[i], receive_type_, comm_,
                                     &site_blocks);
          if (rc != MPI_SUCCESS) fail(rc);
        }
        for (int site = 0; site < layout_.site_count() && !failed(); ++site) {
          if (site != layout_.my_site_index()) send(leader_world(site), site_blocks);
        }
        transfers_.resize(static_cast<std::size_t>(layout_.site_count()));
        unpacked_.assign(transfers_.size(), false);
        phase_ = Phase::kExchange;
        return true;
      }
      case Phase::kExchange: {
        for (int site = 0; site < layout_.site_count() && !failed(); ++site) {
          const auto at_site = static_cast<std::size_t>(site);
          if (site == layout_.my_site_index() || unpacked_[at_site]) continue;
          if (!take(leader_world(site), &transfers_[at_site])) return false;
          if (failed()) break;
          const std::vector<std::byte> packed = transfers_[at_site].take();
          PackedReader reader(packed.data(), packed.size());
          for (int r : ranks_at(site)) {
            const auto i = static_cast<std::size_t>(r);
            const int rc = reader.next(at(receive_, displacements_[i] * extent_), counts_[i], receive_type_, comm_);
            if (rc != MPI_SUCCESS) fail(rc);
          }
          unpacked_[at_site] = true;
        }
        // Also after an error: the site's other ranks are let go, with it.
        post_status_and_result(receive_, 1, everything_);
        phase_ = Phase::kBroadcasting;
        return true;
      }
      case Phase::kBroadcasting:
        if (!finished_locally()) return false;
        finish();
        return true;
    }
    return false;
  }

  const void* send_;
  int send_count_;
  MPI_Datatype send_type_;
  void* const receive_;
  const std::vector<int> counts_;
  const std::vector<int> displacements_;
  const MPI_Datatype receive_type_;
  const MPI_Aint extent_;
  std::vector<int> local_counts_;         // this site's ranks' counts and displacements, local order
  std::vector<int> local_displacements_;
  MPI_Datatype everything_ = MPI_DATATYPE_NULL;
  Phase phase_ = Phase::kPost;
  std::unique_ptr<TypedScratch> own_copy_;    // non-leader, MPI_IN_PLACE
  std::vector<TransferAssembler> transfers_;  // leaders, per site index: its blocks, as they arrive
  std::vector<bool> unpacked_;                // leaders, per site index: its blocks are in place
};

}  // namespace

OperationSite SiteCollectives::operation_site(Spanning& spanning, MPI_Comm comm) {
  return OperationSite{front_end_,         comm, spanning.local, spanning.layout, spanning.world_of_rank,
                       private_context(spanning), next_tag(spanning), spanning.posting_order};
}

int SiteCollectives::ireduce(const void* send, void* receive, int count, MPI_Datatype type, MPI_Op op, int root,
                             MPI_Comm comm, MPI_Request* request) {
  Spanning* spanning = site_path(comm, Collective::kIreduce, op);
  if (!spanning) return PMPI_Ireduce(send, receive, count, type, op, root, comm, request);
  return front_end_.start_collective(
      std::make_unique<SiteIreduce>(send, receive, count, type, op, root, operation_site(*spanning, comm)), comm,
      request);
}

int SiteCollectives::iallgather(const void* send, int send_count, MPI_Datatype send_type, void* receive,
                                int receive_count, MPI_Datatype receive_type, MPI_Comm comm, MPI_Request* request) {
  Spanning* spanning = site_path(comm, Collective::kIallgather);
  if (!spanning) {
    return PMPI_Iallgather(send, send_count, send_type, receive, receive_count, receive_type, comm, request);
  }
  UniformBlocks blocks(static_cast<int>(spanning->world_of_rank.size()), receive_count);
  return front_end_.start_collective(
      std::make_unique<SiteIallgatherv>(send, send_count, send_type, receive, std::move(blocks.counts),
                                        std::move(blocks.displacements), receive_type,
                                        operation_site(*spanning, comm)),
      comm, request);
}

int SiteCollectives::iallgatherv(const void* send, int send_count, MPI_Datatype send_type, void* receive,
                                 const int receive_counts[], const int displacements[], MPI_Datatype receive_type,
                                 MPI_Comm comm, MPI_Request* request) {
  Spanning* spanning = site_path(comm, Collective::kIallgatherv);
  if (!spanning) {
    return PMPI_Iallgatherv(send, send_count, send_type, receive, receive_counts, displacements, receive_type, comm,
                            request);
  }
  const std::size_t ranks = spanning->world_of_rank.size();
  return front_end_.start_collective(
      std::make_unique<SiteIallgatherv>(send, send_count, send_type, receive,
                                        std::vector<int>(receive_counts, receive_counts + ranks),
                                        std::vector<int>(displacements, displacements + ranks), receive_type,
                                        operation_site(*spanning, comm)),
      comm, request);
}

}  // namespace lp::mpi
