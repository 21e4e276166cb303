// CommunicatorInfo: what the front end knows of one communicator: its LongPipe context id (equal
// on every member; assigned at creation) and where its peers are. "Peers" are the ranks a send
// names: the communicator's group, or the remote group of an intercommunicator.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "context_id.h"
#include "native_receive_order.h"

namespace lp::mpi {

struct CommunicatorInfo {
  int context = 0;
  std::uint64_t lineage = 0;  // what its children's context ids derive from (context_id.h)
  std::uint64_t creations = 0;  // calls collective over it that made a communicator, so far
  // Made by MPI_Comm_idup (registered when its request completes, not at a call every member
  // makes in order): its site sub-communicator for the collectives is made at its first blocking
  // collective across sites; nonblocking ones before it are Open MPI's (collectives.cpp).
  bool site_comm_when_blocking = false;
  std::vector<int> world_of_peer;              // peer rank -> MPI_COMM_WORLD rank (-1: not in this world)
  std::unordered_map<int, int> peer_of_world;  // the inverse
  std::vector<int> remote_world_of_peer;       // world rank if at another site, else -1 (one load per send)
  bool spans_sites = false;                    // some peer is at another site than this process
  NativeReceiveOrder native_receives;          // LongPipe-side receives Open MPI messages may match
  // Lifetime: requests and matched messages of the front end's naming this communicator; once
  // MPI_Comm_free'd (freed) it is forgotten when the last of them goes.
  int references = 0;
  bool freed = false;

  CommunicatorInfo() = default;
  CommunicatorInfo(int context_id, std::vector<int> world_ranks, const std::vector<int>& site_of_world, int my_site)
      : context(context_id), world_of_peer(std::move(world_ranks)) {
    for (int peer = 0; peer < static_cast<int>(world_of_peer.size()); ++peer) {
      const int world = world_of_peer[static_cast<std::size_t>(peer)];
      if (world < 0) continue;
      peer_of_world.emplace(world, peer);
      if (site_of_world.at(static_cast<std::size_t>(world)) != my_site) spans_sites = true;
    }
    for (int world : world_of_peer) {
      const bool remote = world >= 0 && site_of_world.at(static_cast<std::size_t>(world)) != my_site;
      remote_world_of_peer.push_back(remote ? world : -1);
    }
  }

  // The world rank of `peer` if it is at another site than this process, else -1.
  int remote_world_rank(int peer) const {
    if (static_cast<unsigned>(peer) >= remote_world_of_peer.size()) return -1;  // also negative peers
    return remote_world_of_peer[static_cast<std::size_t>(peer)];
  }
  int peer_rank_of(int world) const {
    auto it = peer_of_world.find(world);
    return it == peer_of_world.end() ? -1 : it->second;
  }
};

}  // namespace lp::mpi
