// CommunicatorInfo: what the front end knows of one communicator: its LongPipe context id (equal
// on every member; assigned at creation) and where its peers are. "Peers" are the ranks a send
// names: the communicator's group, or the remote group of an intercommunicator.
#pragma once

#include <unordered_map>
#include <vector>

namespace lp::mpi {

struct CommunicatorInfo {
  int context = 0;
  std::vector<int> world_of_peer;              // peer rank -> MPI_COMM_WORLD rank (-1: not in this world)
  std::unordered_map<int, int> peer_of_world;  // the inverse
  bool spans_sites = false;                    // some peer is at another site than this process
  int pending_wildcard_receives = 0;           // LongPipe-side MPI_ANY_SOURCE receives not matched yet

  CommunicatorInfo() = default;
  CommunicatorInfo(int context_id, std::vector<int> world_ranks, const std::vector<int>& site_of_world, int my_site)
      : context(context_id), world_of_peer(std::move(world_ranks)) {
    for (int peer = 0; peer < static_cast<int>(world_of_peer.size()); ++peer) {
      const int world = world_of_peer[static_cast<std::size_t>(peer)];
      if (world < 0) continue;
      peer_of_world.emplace(world, peer);
      if (site_of_world.at(static_cast<std::size_t>(world)) != my_site) spans_sites = true;
    }
  }

  // The world rank of `peer` if it is at another site than `my_site`, else -1.
  int remote_world_rank(int peer, const std::vector<int>& site_of_world, int my_site) const {
    if (!spans_sites || peer < 0 || peer >= static_cast<int>(world_of_peer.size())) return -1;
    const int world = world_of_peer[static_cast<std::size_t>(peer)];
    return world >= 0 && site_of_world[static_cast<std::size_t>(world)] != my_site ? world : -1;
  }
  int peer_rank_of(int world) const {
    auto it = peer_of_world.find(world);
    return it == peer_of_world.end() ? -1 : it->second;
  }
};

}  // namespace lp::mpi
