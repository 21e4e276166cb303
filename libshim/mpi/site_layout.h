// SiteLayout: where the ranks of one communicator are, as the two-level collectives need it. Pure:
// built from the site of each rank of the communicator (collectives.cpp gathers them).
//
// Sites are ordered by their lowest rank in the communicator ("site index" 0, 1, ...). For
// MPI_COMM_WORLD that is the site numbering itself (sites are numbered by first appearance). Every
// member computes the same order, so partial reductions are combined in the same order everywhere.
// A site's leader is its lowest rank.
#pragma once

#include <vector>

namespace lp::mpi {

class SiteLayout {
 public:
  SiteLayout(const std::vector<int>& site_of_rank, int my_rank);

  int site_count() const { return static_cast<int>(leaders_.size()); }
  int my_site_index() const { return index_of_rank_[static_cast<std::size_t>(my_rank_)]; }
  int site_index_of(int rank) const { return index_of_rank_[static_cast<std::size_t>(rank)]; }
  // The lowest rank of the site with index `site_index`.
  int leader(int site_index) const { return leaders_[static_cast<std::size_t>(site_index)]; }
  bool is_leader() const { return leader(my_site_index()) == my_rank_; }
  // Rank of `rank` in its site's sub-communicator (split by site index, ordered by rank).
  int local_rank_of(int rank) const { return local_rank_[static_cast<std::size_t>(rank)]; }
  // Each site's ranks are consecutive, so rank order is site order: a non-commutative reduction may
  // be done per site, then across sites.
  bool blocked() const { return blocked_; }

 private:
  int my_rank_;
  std::vector<int> index_of_rank_;
  std::vector<int> leaders_;
  std::vector<int> local_rank_;
  bool blocked_ = true;
};

// The ranks of each site (by site index), in rank order, of a communicator of `size` ranks.
inline std::vector<std::vector<int>> ranks_by_site(const SiteLayout& layout, int size) {
  std::vector<std::vector<int>> members(static_cast<std::size_t>(layout.site_count()));
  for (int rank = 0; rank < size; ++rank) members[static_cast<std::size_t>(layout.site_index_of(rank))].push_back(rank);
  return members;
}

}  // namespace lp::mpi
