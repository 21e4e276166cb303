// MPI_Ialltoall across sites: the blocking Alltoall's two levels (collectives_exchange.cpp) as a
// LongPipe request (site_operation.h), under the posting-order rule of collectives_nonblocking.cpp.
// docs/mpi-collectives.md.
//
// Every block has the same type signature, so the same packed size: nobody needs to be told sizes.
// Each rank packs its blocks for the other sites during the call (site order, then rank order) and
// Open MPI gathers them to its leader (Igather) while it exchanges the blocks between the site's own
// ranks (Ialltoallv on the sub-communicator). The leader sends each other site's leader one message:
// its ranks' blocks for that site, source by source. Once the other sites' messages are here it
// regroups them by destination and scatters them (the leader's status, Ibcast, then Iscatter); each
// rank unpacks its blocks in place. MPI_IN_PLACE: the blocks are sent from a copy of `receive`.
#include <algorithm>
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

class SiteIalltoall final : public SiteOperation {
 public:
  SiteIalltoall(const void* send, int send_count, MPI_Datatype send_type, void* receive, int receive_count,
                MPI_Datatype receive_type, const OperationSite& site)
      : SiteOperation(site),
        send_(send),
        send_count_(send_count),
        send_type_(send_type),
        receive_(receive),
        receive_count_(receive_count),
        receive_type_(receive_type) {
    const int me = layout_.my_site_index();
    mine_ = ranks_at(me);
    if (send_ == MPI_IN_PLACE) {  // send from a copy of `receive`, which the exchange overwrites
      const int count = size() * receive_count_;
      own_copy_ = std::make_unique<TypedScratch>(count, receive_type_);
      int rc = MPI_SUCCESS;
      const std::vector<std::byte> packed = pack(receive_, count, receive_type_, comm_, &rc);
      if (rc == MPI_SUCCESS) rc = unpack(packed, own_copy_->base(), count, receive_type_, comm_);
      if (rc != MPI_SUCCESS) fail(rc);
      send_ = own_copy_->base();
      send_count_ = receive_count_;
      send_type_ = receive_type_;
    }
    const MPI_Aint send_extent = extent_of(send_type_);
    int rc = PMPI_Pack_size(receive_count_, receive_type_, comm_, &block_bytes_);
    for (int site = 0; site < layout_.site_count() && rc == MPI_SUCCESS; ++site) {
      if (site == me) continue;
      for (int r : ranks_at(site)) {  // the data as it is now
        const std::size_t before = outgoing_.size();
        rc = pack_append(at(send_, r * send_count_ * send_extent), send_count_, send_type_, comm_, &outgoing_);
        if (rc == MPI_SUCCESS && outgoing_.size() - before != static_cast<std::size_t>(block_bytes_)) {
          rc = MPI_ERR_TRUNCATE;  // the type signatures differ
        }
      }
    }
    if (rc != MPI_SUCCESS) fail(rc);
    // After an error too: the sizes every rank of the site expects in the collectives below.
    outgoing_.resize(static_cast<std::size_t>(others()) * static_cast<std::size_t>(block_bytes_));
    for (int r : mine_) {
      send_counts_.push_back(send_count_);
      send_displacements_.push_back(r * send_count_);
      receive_counts_.push_back(receive_count_);
      receive_displacements_.push_back(r * receive_count_);
    }
    if (layout_.is_leader()) gathered_.resize(mine_.size() * outgoing_.size());
    incoming_.resize(outgoing_.size());
  }
  bool waits_on_open_mpi() const override { return phase_ != Phase::kExchange; }

 private:
  enum class Phase { kPost, kGathering, kExchange, kScattering };

  // The ranks at other sites.
  int others() const { return size() - static_cast<int>(mine_.size()); }

  bool step() override {
    switch (phase_) {
      case Phase::kPost: {
        if (!first_in_line()) return false;
        const int bytes = static_cast<int>(outgoing_.size());
        int rc = PMPI_Igather(outgoing_.data(), bytes, MPI_BYTE, gathered_.data(), bytes, MPI_BYTE, 0, local_,
                              new_local_request());
        if (rc != MPI_SUCCESS) fail(rc);
        rc = PMPI_Ialltoallv(send_, send_counts_.data(), send_displacements_.data(), send_type_, receive_,
                             receive_counts_.data(), receive_displacements_.data(), receive_type_, local_,
                             new_local_request());
        if (rc != MPI_SUCCESS) fail(rc);
        if (layout_.is_leader()) {
          phase_ = Phase::kGathering;
        } else {
          scatter();
          phase_ = Phase::kScattering;
        }
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

  // The leader: to each other site's leader, every local rank's blocks for that site's ranks.
  void send_messages() {
    const auto block = static_cast<std::size_t>(block_bytes_);
    const std::size_t per_rank = outgoing_.size();
    std::size_t before = 0;  // blocks of each local rank for the sites before this one
    for (int site = 0; site < layout_.site_count() && !failed(); ++site) {
      if (site == layout_.my_site_index()) continue;
      const std::size_t theirs = ranks_at(site).size() * block;
      std::vector<std::byte> message;
      for (std::size_t local = 0; local < mine_.size(); ++local) {
        const std::byte* from = gathered_.data() + local * per_rank + before;
        message.insert(message.end(), from, from + theirs);
      }
      send(leader_world(site), message);
      before += theirs;
    }
  }

  // The leader: the blocks from the other sites' messages, by destination (local rank), each
  // destination's in site order, then source rank order: what Iscatter hands out.
  void regroup() {
    const auto block = static_cast<std::size_t>(block_bytes_);
    const std::size_t per_rank = incoming_.size();
    scattered_.assign(mine_.size() * per_rank, std::byte{});
    std::size_t before = 0;  // blocks from the sites before this one, per destination
    for (int site = 0; site < layout_.site_count(); ++site) {
      if (site == layout_.my_site_index()) continue;
      const std::vector<std::byte> message = transfers_[static_cast<std::size_t>(site)].take();
      const std::size_t sources = ranks_at(site).size();
      if (message.size() != sources * mine_.size() * block) return fail(MPI_ERR_TRUNCATE);
      for (std::size_t source = 0; source < sources; ++source) {
        for (std::size_t local = 0; local < mine_.size(); ++local) {
          const std::byte* from = message.data() + (source * mine_.size() + local) * block;
          std::copy(from, from + block, scattered_.data() + local * per_rank + before + source * block);
        }
      }
      before += sources * block;
    }
  }

  // The leader's status, then each rank's blocks from the other sites; this rank's last posts.
  void scatter() {
    post_site_status();
    const int bytes = static_cast<int>(incoming_.size());
    const int rc = PMPI_Iscatter(scattered_.data(), bytes, MPI_BYTE, incoming_.data(), bytes, MPI_BYTE, 0, local_,
                                 new_local_request());
    if (rc != MPI_SUCCESS) fail(rc);
    done_posting();
  }

  void unpack_mine() {
    const MPI_Aint extent = extent_of(receive_type_);
    PackedReader reader(incoming_.data(), incoming_.size());
    for (int site = 0; site < layout_.site_count() && !failed(); ++site) {
      if (site == layout_.my_site_index()) continue;
      for (int r : ranks_at(site)) {
        const int rc = reader.next(at(receive_, r * receive_count_ * extent), receive_count_, receive_type_, comm_);
        if (rc != MPI_SUCCESS) return fail(rc);
      }
    }
  }

  const void* send_;
  int send_count_;
  MPI_Datatype send_type_;
  void* const receive_;
  const int receive_count_;
  const MPI_Datatype receive_type_;
  int block_bytes_ = 0;  // one block, packed
  std::vector<int> mine_;  // this site's ranks
  std::vector<int> send_counts_, send_displacements_, receive_counts_, receive_displacements_;  // within the site
  Phase phase_ = Phase::kPost;
  std::unique_ptr<TypedScratch> own_copy_;  // MPI_IN_PLACE: what this rank sends
  std::vector<std::byte> outgoing_;   // this rank's blocks for the other sites, packed
  std::vector<std::byte> gathered_;   // the leader: every local rank's `outgoing_`
  std::vector<TransferAssembler> transfers_;  // the leader, per site index: its message
  std::vector<bool> taken_;
  std::vector<std::byte> scattered_;  // the leader: every local rank's `incoming_`
  std::vector<std::byte> incoming_;   // this rank's blocks from the other sites, packed
};

}  // namespace

int SiteCollectives::ialltoall(const void* send, int send_count, MPI_Datatype send_type, void* receive,
                               int receive_count, MPI_Datatype receive_type, MPI_Comm comm, MPI_Request* request) {
  Spanning* spanning = site_path(comm, Collective::kIalltoall);
  if (!spanning) {
    return PMPI_Ialltoall(send, send_count, send_type, receive, receive_count, receive_type, comm, request);
  }
  return front_end_.start_collective(
      std::make_unique<SiteIalltoall>(send, send_count, send_type, receive, receive_count, receive_type,
                                      operation_site(*spanning, comm)),
      comm, request);
}

}  // namespace lp::mpi
