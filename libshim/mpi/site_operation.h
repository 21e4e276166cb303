// SiteOperation: what every site-path nonblocking collective (collectives_nonblocking*.cpp) has:
// where it runs, its Open MPI requests on the site sub-communicator, its place in the posting
// order, its outcome. A LongPipe request (FrontEnd::start_collective) moves its state machine on at
// every progress step; collectives_nonblocking.cpp explains the posting-order rule.
#pragma once

#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include "collective_buffers.h"
#include "front_end.h"
#include "mpi_api.h"
#include "site_layout.h"
#include "wire_format.h"

namespace lp::mpi {

// Where one site-path nonblocking collective runs (SiteCollectives::operation_site).
struct OperationSite {
  FrontEnd& front_end;
  MPI_Comm comm;
  MPI_Comm local;  // this site's ranks (leader = local rank 0)
  const SiteLayout& layout;
  const std::vector<int>& world_of_rank;
  int context;     // LongPipe context of the leaders' messages
  int tag;         // this collective's messages on it
  std::shared_ptr<std::deque<const void*>> posting_order;
};

// ((p0 op p1) op p2) ... of the sites' partial results `partial` (one per site index, in site
// order: SiteCollectives::combine_partials), into `result`. Overwrites all but the first partial.
inline int combine_in_site_order(const std::vector<void*>& partial, void* result, int count, MPI_Datatype type,
                                 MPI_Op op, MPI_Comm comm) {
  void* accumulated = partial[0];
  for (std::size_t site = 1; site < partial.size(); ++site) {
    // PMPI_Reduce_local(in, inout): inout = in op inout, so the earlier sites stay on the left.
    const int rc = PMPI_Reduce_local(accumulated, partial[site], count, type, op);
    if (rc != MPI_SUCCESS) return rc;
    accumulated = partial[site];
  }
  if (accumulated == result) return MPI_SUCCESS;
  int rc = MPI_SUCCESS;
  const std::vector<std::byte> packed = pack(accumulated, count, type, comm, &rc);
  return rc == MPI_SUCCESS ? unpack(packed, result, count, type, comm) : rc;
}

// What every site-path nonblocking collective has: where it runs, its Open MPI requests on the site
// sub-communicator, its place in the posting order, its outcome.
class SiteOperation : public PendingCollective {
 public:
  SiteOperation(FrontEnd& front_end, MPI_Comm comm, MPI_Comm local, const SiteLayout& layout,
                const std::vector<int>& world_of_rank, int context, int tag,
                std::shared_ptr<std::deque<const void*>> posting_order)
      : front_end_(front_end),
        comm_(comm),
        local_(local),
        layout_(layout),
        world_of_rank_(world_of_rank),
        context_(context),
        tag_(tag),
        posting_order_(std::move(posting_order)) {
    posting_order_->push_back(this);
  }
  explicit SiteOperation(const OperationSite& site)
      : SiteOperation(site.front_end, site.comm, site.local, site.layout, site.world_of_rank, site.context, site.tag,
                      site.posting_order) {}
  ~SiteOperation() override { done_posting(); }

  bool advance(int* error, int* failed_world) final {
    while (!complete_ && step()) {
    }
    *error = error_;
    *failed_world = failed_world_;
    return complete_;
  }

 protected:
  // One move of the state machine: false if nothing could be done now.
  virtual bool step() = 0;

  // Whether this collective may post on the sub-communicator now (the earlier ones have).
  bool first_in_line() const { return !posting_order_->empty() && posting_order_->front() == this; }
  // This collective has posted its last collective on the sub-communicator.
  void done_posting() {
    for (auto it = posting_order_->begin(); it != posting_order_->end(); ++it) {
      if (*it != this) continue;
      posting_order_->erase(it);
      return;
    }
  }
  // Whether every Open MPI request posted so far is complete (an error is kept, the rest go on).
  bool local_complete() {
    if (local_requests_.empty()) return true;
    int flag = 0;
    std::vector<MPI_Status> statuses(local_requests_.size());
    const int rc = PMPI_Testall(static_cast<int>(local_requests_.size()), local_requests_.data(), &flag,
                                statuses.data());
    if (!flag) return false;
    if (rc != MPI_SUCCESS) fail(rc);
    local_requests_.clear();
    return true;
  }
  MPI_Request* new_local_request() { return &local_requests_.emplace_back(MPI_REQUEST_NULL); }
  // The leader's outcome to its site (PMPI_Ibcast on the sub-communicator): posted by the other
  // ranks during the call, by the leader after the exchange; as the blocking collectives do, the
  // site's ranks then complete with the leader's error instead of success.
  void post_site_status() {
    if (layout_.is_leader()) site_status_ = error_;
    const int rc = PMPI_Ibcast(&site_status_, 1, MPI_INT, 0, local_, new_local_request());
    if (rc != MPI_SUCCESS) fail(rc);
  }
  // The site's last step of a collective whose result the leader holds: its status, then the
  // result (`count` x `type` at `buffer`) from the leader to the site; this rank's last posts.
  void post_status_and_result(void* buffer, int count, MPI_Datatype type) {
    post_site_status();
    const int rc = PMPI_Ibcast(buffer, count, type, 0, local_, new_local_request());
    if (rc != MPI_SUCCESS) fail(rc);
    done_posting();
  }
  // Once every Open MPI request is complete: true, with the leader's error taken over.
  bool finished_locally() {
    if (!local_complete()) return false;
    if (site_status_ != MPI_SUCCESS) fail(site_status_);
    return true;
  }
  void fail(int rc, int world = -1) {
    if (error_ != MPI_SUCCESS) return;  // the first error is the one reported
    error_ = rc;
    failed_world_ = world;
  }
  bool failed() const { return error_ != MPI_SUCCESS; }
  void finish() { complete_ = true; }

  int size() const { return static_cast<int>(world_of_rank_.size()); }
  int world_of(int rank) const { return world_of_rank_[static_cast<std::size_t>(rank)]; }
  // The ranks of site `site` in rank order, which is their order in the site's sub-communicator.
  std::vector<int> ranks_at(int site) const {
    std::vector<int> ranks;
    for (int r = 0; r < size(); ++r) {
      if (layout_.site_index_of(r) == site) ranks.push_back(r);
    }
    return ranks;
  }
  int leader_world(int site) const { return world_of(layout_.leader(site)); }
  int send(int world, const std::vector<std::byte>& body) {
    const int rc = front_end_.send_bytes(world, context_, tag_, body, comm_);
    if (rc != MPI_SUCCESS) fail(rc, world);
    return rc;
  }
  // Whether the transfer of `world` for this collective is all here (false: not yet). Unreachable
  // or malformed: true, the failure recorded.
  bool take(int world, TransferAssembler* transfer) {
    int rc = MPI_SUCCESS;
    if (!front_end_.try_take_bytes(world, context_, tag_, transfer, &rc)) return false;
    if (rc != MPI_SUCCESS) fail(rc, rc == MPI_ERR_OTHER ? world : -1);
    return true;
  }

  FrontEnd& front_end_;
  const MPI_Comm comm_;
  const MPI_Comm local_;
  const SiteLayout layout_;
  const std::vector<int> world_of_rank_;

 private:
  const int context_;
  const int tag_;
  std::shared_ptr<std::deque<const void*>> posting_order_;
  std::vector<MPI_Request> local_requests_;
  int site_status_ = MPI_SUCCESS;  // PMPI_Ibcast buffer of post_site_status
  int error_ = MPI_SUCCESS;
  int failed_world_ = -1;
  bool complete_ = false;
};

}  // namespace lp::mpi
