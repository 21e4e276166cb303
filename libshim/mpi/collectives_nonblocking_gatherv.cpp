// MPI_Igatherv across sites: the two levels of the blocking Gatherv (collectives_gather.cpp, the
// same message) as a LongPipe request (site_operation.h), under the posting-order rule of
// collectives_nonblocking.cpp. docs/mpi-collectives.md.
//
// The root's site gathers straight into the root's buffer (Igatherv with the root's counts,
// displacements and type; MPI_IN_PLACE passes through). At every other site only each rank knows
// its block's size, so the site first gathers the packed sizes to the leader (Igather of one int),
// then the packed blocks (Igatherv of bytes): every rank posts both at once, the leader the second
// once the sizes are here (it keeps its place in the posting order meanwhile). The leader sends the
// blocks to the root in one message; the root unpacks each rank's block at its displacement with
// its count, which MPI has match the sender's. As the blocking Gatherv, each rank completes with
// its own outcome.
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

class SiteIgatherv final : public SiteOperation {
 public:
  SiteIgatherv(const void* send, int send_count, MPI_Datatype send_type, void* receive, const int* receive_counts,
               const int* displacements, MPI_Datatype receive_type, int root, const OperationSite& site)
      : SiteOperation(site),
        send_(send),
        send_count_(send_count),
        send_type_(send_type),
        receive_(receive),
        receive_type_(receive_type),
        root_(root),
        root_site_(layout_.site_index_of(root)),
        here_(ranks_at(layout_.my_site_index())) {
    PMPI_Comm_rank(comm_, &rank_);
    if (rank_ == root_) {  // the counts and displacements, kept until the request completes
      receive_counts_.assign(receive_counts, receive_counts + size());
      displacements_.assign(displacements, displacements + size());
      for (int r : here_) {
        local_counts_.push_back(receive_counts_[static_cast<std::size_t>(r)]);
        local_displacements_.push_back(displacements_[static_cast<std::size_t>(r)]);
      }
    }
    if (layout_.my_site_index() == root_site_) return;
    const int rc = pack_append(send_, send_count_, send_type_, comm_, &mine_);  // the data as it is now
    if (rc != MPI_SUCCESS) fail(rc);
    my_size_ = static_cast<int>(mine_.size());
    if (layout_.is_leader()) sizes_.resize(here_.size());
  }
  bool waits_on_open_mpi() const override { return phase_ != Phase::kExchange; }

 private:
  enum class Phase { kPost, kSizes, kGathering, kExchange };

  bool step() override {
    switch (phase_) {
      case Phase::kPost: {
        if (!first_in_line()) return false;
        if (layout_.my_site_index() == root_site_) {
          const int rc = PMPI_Igatherv(send_, send_count_, send_type_, receive_, local_counts_.data(),
                                       local_displacements_.data(), receive_type_, layout_.local_rank_of(root_),
                                       local_, new_local_request());
          if (rc != MPI_SUCCESS) fail(rc);
          done_posting();
          phase_ = Phase::kGathering;
          return true;
        }
        int rc = PMPI_Igather(&my_size_, 1, MPI_INT, sizes_.data(), 1, MPI_INT, 0, local_, new_local_request());
        if (rc != MPI_SUCCESS) fail(rc);
        if (layout_.is_leader()) {
          phase_ = Phase::kSizes;
          return true;
        }
        rc = PMPI_Igatherv(mine_.data(), my_size_, MPI_BYTE, nullptr, nullptr, nullptr, MPI_BYTE, 0, local_,
                           new_local_request());
        if (rc != MPI_SUCCESS) fail(rc);
        done_posting();
        phase_ = Phase::kGathering;
        return true;
      }
      case Phase::kSizes: {  // another site's leader: gather the blocks, now that their sizes are known
        if (!local_complete()) return false;
        int total = 0;
        for (int bytes : sizes_) {
          size_displacements_.push_back(total);
          total += bytes;
        }
        site_blocks_.resize(static_cast<std::size_t>(total));
        const int rc = PMPI_Igatherv(mine_.data(), my_size_, MPI_BYTE, site_blocks_.data(), sizes_.data(),
                                     size_displacements_.data(), MPI_BYTE, 0, local_, new_local_request());
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
            const auto index = static_cast<std::size_t>(r);
            const int rc = reader.next(at(receive_, displacements_[index] * extent), receive_counts_[index],
                                       receive_type_, comm_);
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
  const MPI_Datatype receive_type_;
  const int root_;
  const int root_site_;
  const std::vector<int> here_;  // this site's ranks
  int rank_ = 0;
  Phase phase_ = Phase::kPost;
  std::vector<int> receive_counts_, displacements_;        // the root's, per rank
  std::vector<int> local_counts_, local_displacements_;    // the root's, this site's ranks
  std::vector<std::byte> mine_;  // other sites: this rank's block, packed
  int my_size_ = 0;              // its size (the Igather's send buffer)
  std::vector<int> sizes_;       // other sites' leaders: their ranks' packed sizes
  std::vector<int> size_displacements_;
  std::vector<std::byte> site_blocks_;  // other sites' leaders: their ranks' packed blocks
  std::vector<TransferAssembler> transfers_;
  std::vector<bool> unpacked_;
};

}  // namespace

int SiteCollectives::igatherv(const void* send, int send_count, MPI_Datatype send_type, void* receive,
                              const int receive_counts[], const int displacements[], MPI_Datatype receive_type,
                              int root, MPI_Comm comm, MPI_Request* request) {
  Spanning* spanning = site_path(comm, Collective::kIgatherv);
  if (!spanning) {
    return PMPI_Igatherv(send, send_count, send_type, receive, receive_counts, displacements, receive_type, root,
                         comm, request);
  }
  return front_end_.start_collective(
      std::make_unique<SiteIgatherv>(send, send_count, send_type, receive, receive_counts, displacements,
                                     receive_type, root, operation_site(*spanning, comm)),
      comm, request);
}

}  // namespace lp::mpi
