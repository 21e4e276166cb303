// MPI_Iscan and MPI_Iexscan across sites: the two levels of the blocking Scan and Exscan
// (collectives_reduce_scan.cpp) as LongPipe requests (site_operation.h), under the posting-order rule
// of collectives_nonblocking.cpp. Taken only where each site's ranks are consecutive in the
// communicator (SiteCollectives::site_path with needs_rank_order), so site order is rank order.
// docs/mpi-collectives.md.
//
// Every rank posts at once: Open MPI's Iscan (Iexscan) on the site sub-communicator, and, on every
// site but the last, an Ireduce of the same input to the leader (the site's total; Open MPI keeps
// rank order for a non-commutative operation). The leader of site s sends its total to the leaders
// of every later site, takes the totals of the sites before it and combines them in site order,
// t0 op t1 op ... op t(s-1): the prefix of its site. The site's last step is the leader's status
// and the prefix (Ibcast); each rank then puts the prefix on the left of its own result. Iexscan:
// the site's first rank gets the prefix itself; rank 0 of the communicator (site 0's first rank)
// gets nothing, its receive buffer stays untouched (Open MPI's local Iexscan writes a scratch
// buffer there).
#include <memory>

#include "collective_buffers.h"
#include "collectives.h"
#include "site_operation.h"

namespace lp::mpi {
namespace {

class SiteIscan final : public SiteOperation {
 public:
  SiteIscan(const void* send, void* receive, int count, MPI_Datatype type, MPI_Op op, bool exclusive,
            const OperationSite& site)
      : SiteOperation(site),
        send_(send),
        receive_(receive),
        count_(count),
        type_(type),
        op_(op),
        exclusive_(exclusive),
        me_(layout_.my_site_index()),
        last_site_(me_ == layout_.site_count() - 1) {
    if (send_ == MPI_IN_PLACE) {  // the input is in `receive`, which the local scan overwrites
      own_copy_ = std::make_unique<TypedScratch>(count_, type_);
      int rc = MPI_SUCCESS;
      const std::vector<std::byte> packed = pack(receive_, count_, type_, comm_, &rc);
      if (rc == MPI_SUCCESS) rc = unpack(packed, own_copy_->base(), count_, type_, comm_);
      if (rc != MPI_SUCCESS) fail(rc);
      send_ = own_copy_->base();
    }
    if (exclusive_ && layout_.is_leader()) local_result_ = std::make_unique<TypedScratch>(count_, type_);
    if (!last_site_ && layout_.is_leader()) total_ = std::make_unique<TypedScratch>(count_, type_);
    if (me_ > 0) prefix_ = std::make_unique<TypedScratch>(count_, type_);
  }
  bool waits_on_open_mpi() const override { return phase_ != Phase::kExchange; }

 private:
  enum class Phase { kPost, kReducing, kExchange, kFinishing };

  bool step() override {
    switch (phase_) {
      case Phase::kPost: {
        if (!first_in_line()) return false;
        void* local_result = local_result_ ? local_result_->base() : receive_;
        int rc = exclusive_ ? PMPI_Iexscan(send_, local_result, count_, type_, op_, local_, new_local_request())
                            : PMPI_Iscan(send_, local_result, count_, type_, op_, local_, new_local_request());
        if (rc != MPI_SUCCESS) fail(rc);
        if (!last_site_) {
          rc = PMPI_Ireduce(send_, total_ ? total_->base() : nullptr, count_, type_, op_, 0, local_,
                            new_local_request());
          if (rc != MPI_SUCCESS) fail(rc);
        }
        if (layout_.is_leader()) {
          phase_ = Phase::kReducing;
        } else {
          post_prefix();
          phase_ = Phase::kFinishing;
        }
        return true;
      }
      case Phase::kReducing:
        if (!local_complete()) return false;
        if (!failed() && !last_site_) {
          int rc = MPI_SUCCESS;
          const std::vector<std::byte> packed = pack(total_->base(), count_, type_, comm_, &rc);
          if (rc != MPI_SUCCESS) fail(rc);
          for (int site = me_ + 1; site < layout_.site_count() && !failed(); ++site) send(leader_world(site), packed);
        }
        transfers_.resize(static_cast<std::size_t>(me_));
        received_.resize(static_cast<std::size_t>(me_));
        phase_ = Phase::kExchange;
        return true;
      case Phase::kExchange:
        for (int site = 0; site < me_ && !failed(); ++site) {
          const auto at = static_cast<std::size_t>(site);
          if (received_[at]) continue;
          if (!take(leader_world(site), &transfers_[at])) return false;
          if (failed()) break;
          received_[at] = std::make_unique<TypedScratch>(count_, type_);
          const int rc = unpack(transfers_[at].take(), received_[at]->base(), count_, type_, comm_);
          if (rc != MPI_SUCCESS) fail(rc);
        }
        if (!failed() && me_ > 0) {
          std::vector<void*> partial;
          for (const auto& total : received_) partial.push_back(total->base());
          const int rc = combine_in_site_order(partial, prefix_->base(), count_, type_, op_, comm_);
          if (rc != MPI_SUCCESS) fail(rc);
        }
        post_prefix();  // also after an error: the site's other ranks are let go, with it
        phase_ = Phase::kFinishing;
        return true;
      case Phase::kFinishing:
        if (!finished_locally()) return false;
        if (!failed() && me_ > 0) apply_prefix();
        finish();
        return true;
    }
    return false;
  }

  // The site's last step: the leader's status, then (after site 0) the prefix.
  void post_prefix() {
    if (me_ == 0) {
      post_site_status();
      done_posting();
    } else {
      post_status_and_result(prefix_->base(), count_, type_);
    }
  }

  // prefix op (this rank's own result); Iexscan's first rank of the site: the prefix alone.
  void apply_prefix() {
    int rc = MPI_SUCCESS;
    if (exclusive_ && layout_.is_leader()) {
      const std::vector<std::byte> packed = pack(prefix_->base(), count_, type_, comm_, &rc);
      if (rc == MPI_SUCCESS) rc = unpack(packed, receive_, count_, type_, comm_);
    } else {
      // PMPI_Reduce_local(in, inout): inout = in op inout, the earlier ranks on the left.
      rc = PMPI_Reduce_local(prefix_->base(), receive_, count_, type_, op_);
    }
    if (rc != MPI_SUCCESS) fail(rc);
  }

  const void* send_;
  void* const receive_;
  const int count_;
  const MPI_Datatype type_;
  const MPI_Op op_;
  const bool exclusive_;
  const int me_;          // this site's index
  const bool last_site_;  // nobody needs this site's total
  Phase phase_ = Phase::kPost;
  std::unique_ptr<TypedScratch> own_copy_;      // MPI_IN_PLACE: this rank's input
  std::unique_ptr<TypedScratch> local_result_;  // Iexscan, the site's first rank: Open MPI's undefined result
  std::unique_ptr<TypedScratch> total_;         // the leader of a site before the last: its site's total
  std::unique_ptr<TypedScratch> prefix_;        // after site 0: the earlier sites' totals, combined
  std::vector<TransferAssembler> transfers_;    // the leader, per earlier site: its total as it arrives
  std::vector<std::unique_ptr<TypedScratch>> received_;  // the leader, per earlier site: its total
};

}  // namespace

int SiteCollectives::iscan(const void* send, void* receive, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                           MPI_Request* request) {
  Spanning* spanning = site_path(comm, Collective::kIscan, op, true);
  if (!spanning) return PMPI_Iscan(send, receive, count, type, op, comm, request);
  return front_end_.start_collective(
      std::make_unique<SiteIscan>(send, receive, count, type, op, false, operation_site(*spanning, comm)), comm,
      request);
}

int SiteCollectives::iexscan(const void* send, void* receive, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                             MPI_Request* request) {
  Spanning* spanning = site_path(comm, Collective::kIexscan, op, true);
  if (!spanning) return PMPI_Iexscan(send, receive, count, type, op, comm, request);
  return front_end_.start_collective(
      std::make_unique<SiteIscan>(send, receive, count, type, op, true, operation_site(*spanning, comm)), comm,
      request);
}

}  // namespace lp::mpi
