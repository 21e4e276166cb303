#include "site_layout.h"

#include <stdexcept>
#include <unordered_map>

namespace lp::mpi {

SiteLayout::SiteLayout(const std::vector<int>& site_of_rank, int my_rank) : my_rank_(my_rank) {
  if (my_rank < 0 || static_cast<std::size_t>(my_rank) >= site_of_rank.size()) {
    throw std::invalid_argument("SiteLayout: rank out of range");
  }
  std::unordered_map<int, int> index_of_site;  // site number -> index (order of lowest rank)
  std::vector<int> members;                    // ranks seen so far per site index
  for (int rank = 0; rank < static_cast<int>(site_of_rank.size()); ++rank) {
    const auto [it, fresh] = index_of_site.emplace(site_of_rank[static_cast<std::size_t>(rank)], site_count());
    if (fresh) {
      leaders_.push_back(rank);
      members.push_back(0);
    }
    const int index = it->second;
    if (rank > 0 && index != index_of_rank_.back() && !fresh) blocked_ = false;  // back to an earlier site
    index_of_rank_.push_back(index);
    local_rank_.push_back(members[static_cast<std::size_t>(index)]++);
  }
}

}  // namespace lp::mpi
