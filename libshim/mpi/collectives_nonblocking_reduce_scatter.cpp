// MPI_Ireduce_scatter and MPI_Ireduce_scatter_block across sites: the blocking Reduce_scatter's two
// levels (collectives_exchange.cpp) as a LongPipe request (site_operation.h), under the
// posting-order rule of collectives_nonblocking.cpp. docs/mpi-collectives.md.
//
// Each site reduces the whole vector to its leader (Ireduce); the leaders send each other site's
// leader the pieces of its ranks, combine every site's partial of their own site's pieces in site
// order, and scatter them in the site (the leader's status, Ibcast, then Iscatterv).
#include <climits>
#include <utility>

#include "collective_blocks.h"
#include "collective_buffers.h"
#include "collectives.h"
#include "site_operation.h"

namespace lp::mpi {
namespace {

using blocks::at;
using blocks::extent_of;

class SiteIreduceScatter final : public SiteOperation {
 public:
  SiteIreduceScatter(const void* send, void* receive, std::vector<int> counts, MPI_Datatype type, MPI_Op op,
                     const OperationSite& site)
      : SiteOperation(site), receive_(receive), counts_(std::move(counts)), type_(type), op_(op) {
    PMPI_Comm_rank(comm_, &rank_);
    for (int r = 0; r < size(); ++r) {
      first_.push_back(total_);
      total_ += counts_[static_cast<std::size_t>(r)];  // fits in an int: checked by the caller
    }
    for (int r : ranks_at(layout_.my_site_index())) {
      local_counts_.push_back(counts_[static_cast<std::size_t>(r)]);
      local_first_.push_back(site_elements_);
      site_elements_ += counts_[static_cast<std::size_t>(r)];
    }
    input_ = send == MPI_IN_PLACE ? receive_ : send;  // MPI_IN_PLACE: the whole vector is in `receive`
    if (send == MPI_IN_PLACE && !layout_.is_leader()) {
      // The site's scatter, posted at once, overwrites `receive`: reduce from a copy.
      own_copy_ = std::make_unique<TypedScratch>(total_, type_);
      int rc = MPI_SUCCESS;
      const std::vector<std::byte> packed = pack(receive_, total_, type_, comm_, &rc);
      if (rc == MPI_SUCCESS) rc = unpack(packed, own_copy_->base(), total_, type_, comm_);
      if (rc != MPI_SUCCESS) fail(rc);
      input_ = own_copy_->base();
    }
  }
  bool waits_on_open_mpi() const override { return phase_ != Phase::kExchange; }

 private:
  enum class Phase { kPost, kReducing, kExchange, kScattering };

  bool step() override {
    switch (phase_) {
      case Phase::kPost: {
        if (!first_in_line()) return false;
        if (layout_.is_leader()) {
          partial_ = std::make_unique<TypedScratch>(total_, type_);
          const int rc = PMPI_Ireduce(input_, partial_->base(), total_, type_, op_, 0, local_, new_local_request());
          if (rc != MPI_SUCCESS) fail(rc);
          phase_ = Phase::kReducing;
        } else {
          const int rc = PMPI_Ireduce(input_, nullptr, total_, type_, op_, 0, local_, new_local_request());
          if (rc != MPI_SUCCESS) fail(rc);
          scatter(nullptr);
          phase_ = Phase::kScattering;
        }
        return true;
      }
      case Phase::kReducing: {
        if (!local_complete()) return false;
        partials_.resize(static_cast<std::size_t>(layout_.site_count()));
        transfers_.resize(partials_.size());
        for (int site = 0; site < layout_.site_count() && !failed(); ++site) {
          std::vector<std::byte> packed;
          pieces_for(site, &packed);
          if (failed()) break;
          if (site != layout_.my_site_index()) {
            send(leader_world(site), packed);
          } else {
            keep(site, packed);
          }
        }
        phase_ = Phase::kExchange;
        return true;
      }
      case Phase::kExchange: {
        for (int site = 0; site < layout_.site_count() && !failed(); ++site) {
          const auto at_site = static_cast<std::size_t>(site);
          if (partials_[at_site]) continue;
          if (!take(leader_world(site), &transfers_[at_site])) return false;
          if (!failed()) keep(site, transfers_[at_site].take());
        }
        void* result = nullptr;
        if (!failed()) {
          std::vector<void*> partial;
          for (const auto& p : partials_) partial.push_back(p->base());
          result = partial[0];
          const int rc = site_elements_ > 0
                             ? combine_in_site_order(partial, result, site_elements_, type_, op_, comm_)
                             : MPI_SUCCESS;
          if (rc != MPI_SUCCESS) fail(rc);
        }
        scatter(result);  // also after an error: the site's other ranks are let go, with it
        phase_ = Phase::kScattering;
        return true;
      }
      case Phase::kScattering:
        if (!finished_locally()) return false;
        finish();
        return true;
    }
    return false;
  }

  // The leader: the pieces of `partial_` for the ranks of `site`, packed in rank order.
  void pieces_for(int site, std::vector<std::byte>* packed) {
    const MPI_Aint extent = extent_of(type_);
    for (int r : ranks_at(site)) {
      const auto i = static_cast<std::size_t>(r);
      const int rc = pack_append(at(partial_->base(), first_[i] * extent), counts_[i], type_, comm_, packed);
      if (rc != MPI_SUCCESS) return fail(rc);
    }
  }
  // The leader: `site`'s partial of this site's pieces.
  void keep(int site, const std::vector<std::byte>& packed) {
    auto& scratch = partials_[static_cast<std::size_t>(site)];
    scratch = std::make_unique<TypedScratch>(site_elements_, type_);
    const int rc = unpack(packed, scratch->base(), site_elements_, type_, comm_);
    if (rc != MPI_SUCCESS) fail(rc);
  }
  // The leader's status, then each rank's piece (from `result` at the leader); this rank's last posts.
  void scatter(void* result) {
    post_site_status();
    TypedScratch* nothing = nullptr;
    if (layout_.is_leader() && !result) {  // after an error: something to scatter from all the same
      empty_ = std::make_unique<TypedScratch>(site_elements_, type_);
      nothing = empty_.get();
    }
    const bool leader = layout_.is_leader();
    const int rc = PMPI_Iscatterv(leader ? (result ? result : nothing->base()) : nullptr,
                                  leader ? local_counts_.data() : nullptr, leader ? local_first_.data() : nullptr,
                                  type_, receive_, counts_[static_cast<std::size_t>(rank_)], type_, 0, local_,
                                  new_local_request());
    if (rc != MPI_SUCCESS) fail(rc);
    done_posting();
  }

  void* const receive_;
  const std::vector<int> counts_;
  const MPI_Datatype type_;
  const MPI_Op op_;
  int rank_ = 0;
  const void* input_ = nullptr;
  int total_ = 0;                                          // elements of the whole vector
  std::vector<int> first_;                                 // each rank's first element in it
  std::vector<int> local_counts_, local_first_;            // this site's pieces, local order
  int site_elements_ = 0;                                  // ... all of them
  Phase phase_ = Phase::kPost;
  std::unique_ptr<TypedScratch> own_copy_;                 // non-leader, MPI_IN_PLACE
  std::unique_ptr<TypedScratch> partial_;                  // the leader: its site's reduction
  std::vector<std::unique_ptr<TypedScratch>> partials_;    // the leader, per site: this site's pieces
  std::vector<TransferAssembler> transfers_;
  std::unique_ptr<TypedScratch> empty_;
};

// Whether the whole vector's element count fits in an int (MPI's counts).
bool fits(const std::vector<int>& counts) {
  long long total = 0;
  for (int c : counts) total += c;
  return total <= INT_MAX;
}

}  // namespace

int SiteCollectives::ireduce_scatter(const void* send, void* receive, const int receive_counts[], MPI_Datatype type,
                                     MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  Spanning* spanning = site_path(comm, Collective::kIreduceScatter, op);
  if (!spanning) return PMPI_Ireduce_scatter(send, receive, receive_counts, type, op, comm, request);
  std::vector<int> counts(receive_counts, receive_counts + spanning->world_of_rank.size());
  if (!fits(counts)) return MPI_ERR_COUNT;  // every rank sees the same counts: all return
  return front_end_.start_collective(std::make_unique<SiteIreduceScatter>(send, receive, std::move(counts), type, op,
                                                                          operation_site(*spanning, comm)),
                                     comm, request);
}

int SiteCollectives::ireduce_scatter_block(const void* send, void* receive, int receive_count, MPI_Datatype type,
                                           MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  Spanning* spanning = site_path(comm, Collective::kIreduceScatterBlock, op);
  if (!spanning) return PMPI_Ireduce_scatter_block(send, receive, receive_count, type, op, comm, request);
  std::vector<int> counts(spanning->world_of_rank.size(), receive_count);
  if (!fits(counts)) return MPI_ERR_COUNT;
  return front_end_.start_collective(std::make_unique<SiteIreduceScatter>(send, receive, std::move(counts), type, op,
                                                                          operation_site(*spanning, comm)),
                                     comm, request);
}

}  // namespace lp::mpi
