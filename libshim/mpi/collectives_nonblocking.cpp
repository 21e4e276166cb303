// MPI_Ibarrier, MPI_Ibcast and MPI_Iallreduce across sites: the same two levels as the blocking
// collectives (collectives.cpp), as a LongPipe request whose state machine every progress step
// moves on (FrontEnd::start_collective). Inside a site: Open MPI's nonblocking collectives on the
// site sub-communicator; across: the leaders' messages on the communicator's private context,
// taken without waiting (FrontEnd::try_take_bytes). The call returns at once. README.md,
// "Collectives". What every such collective shares: site_operation.h; the ones with data per rank:
// collectives_nonblocking_data.cpp, collectives_nonblocking_rooted.cpp,
// collectives_nonblocking_alltoall.cpp, collectives_nonblocking_reduce_scatter.cpp.
//
// Every member posts its collectives on the sub-communicator in call order (Open MPI matches them by
// order). A non-leader posts all of its at once; a leader posts the last one only after the exchange,
// so it keeps its place in Spanning::posting_order meanwhile and later collectives wait behind it.
#include <utility>

#include "collective_buffers.h"
#include "collectives.h"
#include "site_operation.h"

namespace lp::mpi {
namespace {

// Everyone of the site arrives (Ibarrier), the leaders tell each other, the site is let go (the
// leader's status, Ibcast).
class SiteIbarrier final : public SiteOperation {
 public:
  using SiteOperation::SiteOperation;
  bool waits_on_open_mpi() const override { return phase_ != Phase::kExchange; }

 private:
  enum class Phase { kPost, kArriving, kExchange, kReleasing };

  bool step() override {
    switch (phase_) {
      case Phase::kPost:
        if (!first_in_line()) return false;
        if (const int rc = PMPI_Ibarrier(local_, new_local_request()); rc != MPI_SUCCESS) fail(rc);
        if (layout_.is_leader()) {
          phase_ = Phase::kArriving;
        } else {  // the release needs nothing from this rank: post it now
          post_site_status();
          done_posting();
          phase_ = Phase::kReleasing;
        }
        return true;
      case Phase::kArriving:
        if (!local_complete()) return false;
        for (int site = 0; site < layout_.site_count() && !failed(); ++site) {
          if (site != layout_.my_site_index()) send(leader_world(site), {});
        }
        transfers_.resize(static_cast<std::size_t>(layout_.site_count()));
        phase_ = Phase::kExchange;
        return true;
      case Phase::kExchange:
        for (int site = 0; site < layout_.site_count() && !failed(); ++site) {
          if (site != layout_.my_site_index() && !take(leader_world(site), &transfers_[static_cast<std::size_t>(site)])) {
            return false;
          }
        }
        post_site_status();  // also after an error: the site's other ranks are let go, with it
        done_posting();
        phase_ = Phase::kReleasing;
        return true;
      case Phase::kReleasing:
        if (!finished_locally()) return false;
        finish();
        return true;
    }
    return false;
  }

  Phase phase_ = Phase::kPost;
  std::vector<TransferAssembler> transfers_;  // per site index: its leader's (empty) message
};

// The root sends to every other site's leader at once; each site broadcasts (Ibcast) from the root
// or its leader, the leader after the root's message came.
class SiteIbcast final : public SiteOperation {
 public:
  SiteIbcast(void* buffer, int count, MPI_Datatype type, int root, FrontEnd& front_end, MPI_Comm comm,
             MPI_Comm local, const SiteLayout& layout, const std::vector<int>& world_of_rank, int context, int tag,
             std::shared_ptr<std::deque<const void*>> posting_order)
      : SiteOperation(front_end, comm, local, layout, world_of_rank, context, tag, std::move(posting_order)),
        buffer_(buffer),
        count_(count),
        type_(type),
        root_(root) {
    const int root_site = layout_.site_index_of(root_);
    int rank = 0;
    PMPI_Comm_rank(comm_, &rank);
    if (rank == root_) {  // the data as it is now: sent before the call returns
      int rc = MPI_SUCCESS;
      const std::vector<std::byte> packed = pack(buffer_, count_, type_, comm_, &rc);
      if (rc != MPI_SUCCESS) fail(rc);
      for (int site = 0; site < layout_.site_count() && !failed(); ++site) {
        if (site != root_site) send(leader_world(site), packed);
      }
    }
    phase_ = layout_.my_site_index() != root_site && layout_.is_leader() ? Phase::kReceive : Phase::kPost;
  }
  bool waits_on_open_mpi() const override { return phase_ != Phase::kReceive; }

 private:
  enum class Phase { kReceive, kPost, kBroadcasting };

  bool step() override {
    switch (phase_) {
      case Phase::kReceive: {
        if (!take(world_of(root_), &transfer_)) return false;
        if (!failed()) {
          const int rc = unpack(transfer_.take(), buffer_, count_, type_, comm_);
          if (rc != MPI_SUCCESS) fail(rc);
        }
        phase_ = Phase::kPost;  // also after an error: the site's other ranks are let go, with it
        return true;
      }
      case Phase::kPost: {
        if (!first_in_line()) return false;
        const bool root_site = layout_.my_site_index() == layout_.site_index_of(root_);
        if (!root_site) post_site_status();  // the root's site has the data from the root itself
        const int local_root = root_site ? layout_.local_rank_of(root_) : 0;
        const int rc = PMPI_Ibcast(buffer_, count_, type_, local_root, local_, new_local_request());
        if (rc != MPI_SUCCESS) fail(rc);
        done_posting();
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

  void* const buffer_;
  const int count_;
  const MPI_Datatype type_;
  const int root_;
  Phase phase_ = Phase::kPost;
  TransferAssembler transfer_;  // other sites' leaders: the root's data
};

// Each site reduces to its leader (Ireduce), the leaders exchange their partial results and combine
// all in site order (as SiteCollectives::combine_partials), each site broadcasts (Ibcast).
class SiteIallreduce final : public SiteOperation {
 public:
  SiteIallreduce(const void* send, void* receive, int count, MPI_Datatype type, MPI_Op op, FrontEnd& front_end,
                 MPI_Comm comm, MPI_Comm local, const SiteLayout& layout, const std::vector<int>& world_of_rank,
                 int context, int tag, std::shared_ptr<std::deque<const void*>> posting_order)
      : SiteOperation(front_end, comm, local, layout, world_of_rank, context, tag, std::move(posting_order)),
        send_(send),
        receive_(receive),
        count_(count),
        type_(type),
        op_(op) {
    if (!layout_.is_leader() && send_ == MPI_IN_PLACE) {
      // This rank's data is in `receive`, which the site's broadcast (posted at once) overwrites:
      // reduce from a copy.
      own_copy_ = std::make_unique<TypedScratch>(count_, type_);
      int rc = MPI_SUCCESS;
      const std::vector<std::byte> packed = pack(receive_, count_, type_, comm_, &rc);
      if (rc == MPI_SUCCESS) rc = unpack(packed, own_copy_->base(), count_, type_, comm_);
      if (rc != MPI_SUCCESS) fail(rc);
      send_ = own_copy_->base();
    }
  }
  bool waits_on_open_mpi() const override { return phase_ != Phase::kExchange; }

 private:
  enum class Phase { kPost, kReducing, kExchange, kBroadcasting };

  bool step() override {
    switch (phase_) {
      case Phase::kPost: {
        if (!first_in_line()) return false;
        int rc = PMPI_Ireduce(send_, layout_.is_leader() ? receive_ : nullptr, count_, type_, op_, 0, local_,
                              new_local_request());  // MPI_IN_PLACE passes through at the leader
        if (rc != MPI_SUCCESS) fail(rc);
        if (layout_.is_leader()) {
          phase_ = Phase::kReducing;
        } else {
          post_status_and_result(receive_, count_, type_);
          phase_ = Phase::kBroadcasting;
        }
        return true;
      }
      case Phase::kReducing: {
        if (!local_complete()) return false;
        int rc = MPI_SUCCESS;
        const std::vector<std::byte> packed = pack(receive_, count_, type_, comm_, &rc);
        if (rc != MPI_SUCCESS) fail(rc);
        for (int site = 0; site < layout_.site_count() && !failed(); ++site) {
          if (site != layout_.my_site_index()) send(leader_world(site), packed);
        }
        received_.resize(static_cast<std::size_t>(layout_.site_count()));
        transfers_.resize(static_cast<std::size_t>(layout_.site_count()));
        phase_ = Phase::kExchange;
        return true;
      }
      case Phase::kExchange: {
        for (int site = 0; site < layout_.site_count() && !failed(); ++site) {
          const auto at = static_cast<std::size_t>(site);
          if (site == layout_.my_site_index() || received_[at]) continue;
          if (!take(leader_world(site), &transfers_[at])) return false;
          if (failed()) break;
          received_[at] = std::make_unique<TypedScratch>(count_, type_);
          const int rc = unpack(transfers_[at].take(), received_[at]->base(), count_, type_, comm_);
          if (rc != MPI_SUCCESS) fail(rc);
        }
        if (!failed()) combine();
        // Also after an error: the site's other ranks take part in the broadcasts (no hang) and
        // complete with the error.
        post_status_and_result(receive_, count_, type_);
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

  // ((p0 op p1) op p2) ... into `receive`, the order of SiteCollectives::combine_partials.
  void combine() {
    std::vector<void*> partial(static_cast<std::size_t>(layout_.site_count()), receive_);
    for (std::size_t site = 0; site < partial.size(); ++site) {
      if (received_[site]) partial[site] = received_[site]->base();
    }
    if (const int rc = combine_in_site_order(partial, receive_, count_, type_, op_, comm_); rc != MPI_SUCCESS) fail(rc);
  }

  const void* send_;
  void* const receive_;
  const int count_;
  const MPI_Datatype type_;
  const MPI_Op op_;
  Phase phase_ = Phase::kPost;
  std::unique_ptr<TypedScratch> own_copy_;                 // non-leader, MPI_IN_PLACE
  std::vector<std::unique_ptr<TypedScratch>> received_;    // per site index: its partial result
  std::vector<TransferAssembler> transfers_;               // per site index: its partial, as it arrives
};

}  // namespace

void SiteCollectives::settle(Spanning& spanning) {
  const auto& posting_order = spanning.posting_order;
  if (!posting_order->empty()) front_end_.progress_until([&] { return posting_order->empty(); });
}

int SiteCollectives::ibarrier(MPI_Comm comm, MPI_Request* request) {
  Spanning* spanning = site_path(comm, Collective::kIbarrier);
  if (!spanning) return PMPI_Ibarrier(comm, request);
  const int tag = next_tag(*spanning);
  return front_end_.start_collective(
      std::make_unique<SiteIbarrier>(front_end_, comm, spanning->local, spanning->layout, spanning->world_of_rank,
                                     private_context(*spanning), tag, spanning->posting_order),
      comm, request);
}

int SiteCollectives::ibcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm,
                            MPI_Request* request) {
  Spanning* spanning = site_path(comm, Collective::kIbcast);
  if (!spanning) return PMPI_Ibcast(buffer, count, type, root, comm, request);
  const int tag = next_tag(*spanning);
  return front_end_.start_collective(
      std::make_unique<SiteIbcast>(buffer, count, type, root, front_end_, comm, spanning->local, spanning->layout,
                                   spanning->world_of_rank, private_context(*spanning), tag, spanning->posting_order),
      comm, request);
}

int SiteCollectives::iallreduce(const void* send, void* receive, int count, MPI_Datatype type, MPI_Op op,
                                MPI_Comm comm, MPI_Request* request) {
  Spanning* spanning = site_path(comm, Collective::kIallreduce, op);
  if (!spanning) return PMPI_Iallreduce(send, receive, count, type, op, comm, request);
  const int tag = next_tag(*spanning);
  return front_end_.start_collective(
      std::make_unique<SiteIallreduce>(send, receive, count, type, op, front_end_, comm, spanning->local,
                                       spanning->layout, spanning->world_of_rank, private_context(*spanning), tag,
                                       spanning->posting_order),
      comm, request);
}

}  // namespace lp::mpi
