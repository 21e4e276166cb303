// SiteCollectives: the blocking MPI collectives listed below, on intra-communicators
// whose ranks span sites, done in two levels so that the long link is crossed once per call:
// Open MPI's collective inside each site (on a per-site sub-communicator), one exchange between
// the sites' leaders over LongPipe, Open MPI's collective inside each site again. Everything else
// (communicators inside one site, intercommunicators, communicators LongPipe does not know,
// LONGPIPE_COLLECTIVES=native) goes to PMPI_* unchanged. docs/mpi-collectives.md.
//
// Runs in the application's thread inside the MPI call, like the rest of the front end.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "collective_statistics.h"
#include "exchange_blocks.h"
#include "front_end.h"
#include "mpi_api.h"
#include "site_communicator.h"
#include "site_layout.h"

namespace lp::mpi {

struct OperationSite;

class SiteCollectives {
 public:
  // Reads LONGPIPE_COLLECTIVES (throws lp::ConfigError on a bad value).
  explicit SiteCollectives(FrontEnd& front_end);
  // Frees the cached site sub-communicators and writes the statistics (before PMPI_Finalize).
  ~SiteCollectives();
  SiteCollectives(const SiteCollectives&) = delete;
  SiteCollectives& operator=(const SiteCollectives&) = delete;

  int barrier(MPI_Comm comm);
  int bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm);
  int reduce(const void* send, void* receive, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm);
  int allreduce(const void* send, void* receive, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);
  // Gather(v), Scatter(v), Allgather(v): collectives_gather.cpp.
  int gather(const void* send, int send_count, MPI_Datatype send_type, void* receive, int receive_count,
             MPI_Datatype receive_type, int root, MPI_Comm comm);
  int gatherv(const void* send, int send_count, MPI_Datatype send_type, void* receive, const int receive_counts[],
              const int displacements[], MPI_Datatype receive_type, int root, MPI_Comm comm);
  int scatter(const void* send, int send_count, MPI_Datatype send_type, void* receive, int receive_count,
              MPI_Datatype receive_type, int root, MPI_Comm comm);
  int scatterv(const void* send, const int send_counts[], const int displacements[], MPI_Datatype send_type,
               void* receive, int receive_count, MPI_Datatype receive_type, int root, MPI_Comm comm);
  int allgather(const void* send, int send_count, MPI_Datatype send_type, void* receive, int receive_count,
                MPI_Datatype receive_type, MPI_Comm comm);
  int allgatherv(const void* send, int send_count, MPI_Datatype send_type, void* receive, const int receive_counts[],
                 const int displacements[], MPI_Datatype receive_type, MPI_Comm comm);
  // Alltoall(v/w), Reduce_scatter(_block), Scan, Exscan: collectives_exchange.cpp.
  int alltoall(const void* send, int send_count, MPI_Datatype send_type, void* receive, int receive_count,
               MPI_Datatype receive_type, MPI_Comm comm);
  int alltoallv(const void* send, const int send_counts[], const int send_displacements[], MPI_Datatype send_type,
                void* receive, const int receive_counts[], const int receive_displacements[],
                MPI_Datatype receive_type, MPI_Comm comm);
  int alltoallw(const void* send, const int send_counts[], const int send_displacements[],
                const MPI_Datatype send_types[], void* receive, const int receive_counts[],
                const int receive_displacements[], const MPI_Datatype receive_types[], MPI_Comm comm);
  int reduce_scatter(const void* send, void* receive, const int receive_counts[], MPI_Datatype type, MPI_Op op,
                     MPI_Comm comm);
  int reduce_scatter_block(const void* send, void* receive, int receive_count, MPI_Datatype type, MPI_Op op,
                           MPI_Comm comm);
  int scan(const void* send, void* receive, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);
  int exscan(const void* send, void* receive, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);
  // The nonblocking ones: collectives_nonblocking*.cpp. A LongPipe request (FrontEnd::
  // start_collective) that every progress step moves on; the call returns at once.
  int ibarrier(MPI_Comm comm, MPI_Request* request);
  int ibcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request* request);
  int iallreduce(const void* send, void* receive, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                 MPI_Request* request);
  // Ireduce, Igather, Iscatter(v), Iallgather(v): collectives_nonblocking_data.cpp, the same way.
  int ireduce(const void* send, void* receive, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm,
              MPI_Request* request);
  int igather(const void* send, int send_count, MPI_Datatype send_type, void* receive, int receive_count,
              MPI_Datatype receive_type, int root, MPI_Comm comm, MPI_Request* request);
  int iscatter(const void* send, int send_count, MPI_Datatype send_type, void* receive, int receive_count,
               MPI_Datatype receive_type, int root, MPI_Comm comm, MPI_Request* request);
  int iscatterv(const void* send, const int send_counts[], const int displacements[], MPI_Datatype send_type,
                void* receive, int receive_count, MPI_Datatype receive_type, int root, MPI_Comm comm,
                MPI_Request* request);
  int iallgather(const void* send, int send_count, MPI_Datatype send_type, void* receive, int receive_count,
                 MPI_Datatype receive_type, MPI_Comm comm, MPI_Request* request);
  int iallgatherv(const void* send, int send_count, MPI_Datatype send_type, void* receive, const int receive_counts[],
                  const int displacements[], MPI_Datatype receive_type, MPI_Comm comm, MPI_Request* request);
  // Ialltoall: collectives_nonblocking_alltoall.cpp.
  int ialltoall(const void* send, int send_count, MPI_Datatype send_type, void* receive, int receive_count,
                MPI_Datatype receive_type, MPI_Comm comm, MPI_Request* request);
  // Ireduce_scatter(_block): collectives_nonblocking_reduce_scatter.cpp.
  int ireduce_scatter(const void* send, void* receive, const int receive_counts[], MPI_Datatype type, MPI_Op op,
                      MPI_Comm comm, MPI_Request* request);
  int ireduce_scatter_block(const void* send, void* receive, int receive_count, MPI_Datatype type, MPI_Op op,
                            MPI_Comm comm, MPI_Request* request);
  // Igatherv: collectives_nonblocking_gatherv.cpp. Ialltoallv/w: collectives_nonblocking_alltoallw.cpp.
  // Iscan, Iexscan: collectives_nonblocking_scan.cpp.
  int igatherv(const void* send, int send_count, MPI_Datatype send_type, void* receive, const int receive_counts[],
               const int displacements[], MPI_Datatype receive_type, int root, MPI_Comm comm, MPI_Request* request);
  int ialltoallv(const void* send, const int send_counts[], const int send_displacements[], MPI_Datatype send_type,
                 void* receive, const int receive_counts[], const int receive_displacements[],
                 MPI_Datatype receive_type, MPI_Comm comm, MPI_Request* request);
  int ialltoallw(const void* send, const int send_counts[], const int send_displacements[],
                 const MPI_Datatype send_types[], void* receive, const int receive_counts[],
                 const int receive_displacements[], const MPI_Datatype receive_types[], MPI_Comm comm,
                 MPI_Request* request);
  int iscan(const void* send, void* receive, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
            MPI_Request* request);
  int iexscan(const void* send, void* receive, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
              MPI_Request* request);

  // What a collective with an algorithm of its own (the neighbourhood collectives,
  // collectives_neighbor.cpp) needs of a spanning communicator: its site sub-communicator, where
  // each rank is, the LongPipe context of its collective messages and the tag of this call. Copied:
  // a nonblocking collective may outlive the communicator's cache entry (MPI_Comm_free).
  struct SiteChannel {
    MPI_Comm local;
    SiteLayout layout;
    std::vector<int> world_of_rank;
    int context;
    int tag;
  };
  // The channel if `collective` on `comm` takes the site path (counted in the statistics either
  // way); nullopt: Open MPI's path. `nonblocking`: the call may not create the cache entry.
  std::optional<SiteChannel> site_channel(MPI_Comm comm, Collective collective, bool nonblocking);
  // A call that Open MPI serves whatever the communicator (a communicator without topology).
  void count_native(Collective collective) { statistics_.count(collective, CollectivePath::kNative); }

  // `comm` was just created (collective over it): if it spans sites, make its site sub-communicator
  // now, so that a nonblocking collective never has to (making it waits for the site's ranks).
  void prepare(MPI_Comm comm);
  // `comm` is being freed: free its site sub-communicator.
  void forget(MPI_Comm comm);
  // A forked child: the sub-communicators are the parent's; drop them without MPI calls.
  void abandon_after_fork();

 private:
  // What a spanning communicator caches, made by prepare when the communicator is registered (an
  // idup one: at its first blocking site-path collective).
  struct Spanning {
    Spanning(int context_id, MPI_Comm local_comm, SiteLayout site_layout, std::vector<int> world_ranks)
        : context(context_id), local(local_comm), layout(std::move(site_layout)), world_of_rank(std::move(world_ranks)) {}
    int context;                 // the communicator's LongPipe context id (a reused handle has another)
    MPI_Comm local;              // this site's ranks, ordered by rank (leader = local rank 0)
    SiteLayout layout;
    std::vector<int> world_of_rank;
    int sequence = 0;            // collectives done on it: the tag of the next one's messages
    // Nonblocking collectives that have yet to post (some of) their collectives on `local`, in call
    // order: every member must post those in the same order, and a leader posts its last one only
    // after the exchange, so later collectives on `local` wait until this is empty (settle()).
    std::shared_ptr<std::deque<const void*>> posting_order = std::make_shared<std::deque<const void*>>();
  };

  // The communicator's cache entry (made on first use) if it is an intra-communicator that spans
  // sites and the setting is `site`, else nullptr.
  // `may_create`: the call is one every member makes in order (creation, a blocking collective).
  Spanning* spanning_of(MPI_Comm comm, bool may_create);
  // The communicator's cache entry if this collective takes the site path, else nullptr.
  // `needs_rank_order` (Scan, Exscan): only if each site's ranks are consecutive (whatever the op).
  Spanning* site_path(MPI_Comm comm, Collective collective, MPI_Op op = MPI_OP_NULL, bool needs_rank_order = false);
  // LongPipe context of the leaders' messages on `spanning` (negative: never a communicator's).
  static int private_context(const Spanning& spanning) { return -1 - spanning.context; }
  static int next_tag(Spanning& spanning);
  // One Gather/Scatter/Allgather(v) on a spanning communicator (collectives_gather.cpp); takes its tag.
  struct TwoLevel;
  TwoLevel two_level(Spanning& spanning, MPI_Comm comm);
  // Where a nonblocking collective on `spanning` runs (site_operation.h); takes its tag.
  OperationSite operation_site(Spanning& spanning, MPI_Comm comm);
  // Before a blocking collective on `spanning->local`, or freeing it: makes progress until the
  // nonblocking collectives before it have posted theirs (collectives_nonblocking.cpp).
  void settle(Spanning& spanning);

  // The site's ranks wait for their leader (PMPI_Bcast of its status on the site's communicator)
  // and return its status: after an error of the leader's (MPI_ERRORS_RETURN) none is left waiting.
  static int release_site(const SiteLayout& layout, MPI_Comm local, int leader_status, MPI_Comm comm);

  // Leaders: each sends its site's partial result to every other leader (or to `root` only) and
  // combines what arrives in site order (docs/mpi-collectives.md, "Order of reduction") into `result`.
  int combine_partials(Spanning& spanning, int tag, void* mine, void* result, int count, MPI_Datatype type,
                       MPI_Op op, MPI_Comm comm, int root);

  // collectives_exchange.cpp: the site-path bodies of Alltoall(v/w), Reduce_scatter(_block), Scan
  // and Exscan (`send` may be MPI_IN_PLACE; `exclusive`: Exscan).
  int alltoall_across_sites(Spanning& spanning, const ExchangeBlocks& send, const ExchangeBlocks& receive,
                            bool in_place, MPI_Comm comm);
  int reduce_scatter_across_sites(Spanning& spanning, const void* send, void* receive, const int* receive_counts,
                                  MPI_Datatype type, MPI_Op op, MPI_Comm comm);
  int scan_across_sites(Spanning& spanning, const void* send, void* receive, int count, MPI_Datatype type, MPI_Op op,
                        MPI_Comm comm, bool exclusive);

  FrontEnd& front_end_;
  CollectivePath setting_;
  CollectiveStatistics statistics_;
  std::unordered_map<MPI_Comm, std::unique_ptr<Spanning>> spanning_;
  SiteCommunicators site_communicators_;  // makes each Spanning's `local`
};

}  // namespace lp::mpi
