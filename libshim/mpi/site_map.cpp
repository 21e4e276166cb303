#include "site_map.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <numeric>
#include <sstream>

#include "config.h"

namespace lp::mpi {
namespace {

std::vector<int> renumber_by_first_appearance(const std::vector<int>& labels) {
  std::map<int, int> renamed;
  std::vector<int> result;
  result.reserve(labels.size());
  for (int label : labels) {
    auto [it, inserted] = renamed.emplace(label, static_cast<int>(renamed.size()));
    result.push_back(it->second);
  }
  return result;
}

}  // namespace

std::optional<std::vector<int>> SiteMap::parse_setting(const std::string& value, int world_size) {
  if (value.empty() || value == "auto") return std::nullopt;
  const std::string accepted = "'auto' or a comma-separated list of " + std::to_string(world_size) +
                               " site numbers (0 to " + std::to_string(world_size - 1) +
                               "), one per rank of MPI_COMM_WORLD, e.g. '0,0,1,1'";
  auto fail = [&] { throw ConfigError("LONGPIPE_MPI_SITES='" + value + "' is invalid: expected " + accepted); };
  std::vector<int> sites;
  std::stringstream in(value);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty()) fail();
    char* end = nullptr;
    errno = 0;
    const long site = std::strtol(item.c_str(), &end, 10);
    if (errno != 0 || *end != '\0' || site < 0 || site >= world_size) fail();
    sites.push_back(static_cast<int>(site));
  }
  if (static_cast<int>(sites.size()) != world_size || value.back() == ',') fail();
  return renumber_by_first_appearance(sites);
}

double SiteMap::parse_rtt_threshold(const std::string& value) {
  if (value.empty()) return kDefaultSiteRttMs;
  char* end = nullptr;
  errno = 0;
  const double ms = std::strtod(value.c_str(), &end);
  if (errno != 0 || end == value.c_str() || *end != '\0' || !(ms >= kMinSiteRttMs && ms <= kMaxSiteRttMs)) {
    std::ostringstream accepted;
    accepted << "a round trip in milliseconds from " << kMinSiteRttMs << " to " << kMaxSiteRttMs;
    throw ConfigError("LONGPIPE_MPI_SITE_RTT_MS='" + value + "' is invalid: expected " + accepted.str());
  }
  return ms;
}

std::vector<std::string> SiteMap::distinct_hosts(const std::vector<std::string>& host_of_rank) {
  std::vector<std::string> hosts;
  for (const auto& host : host_of_rank) {
    if (std::find(hosts.begin(), hosts.end(), host) == hosts.end()) hosts.push_back(host);
  }
  return hosts;
}

std::vector<int> SiteMap::group_hosts(std::size_t host_count, const std::vector<double>& rtt_ms, double threshold_ms) {
  std::vector<std::size_t> parent(host_count);
  std::iota(parent.begin(), parent.end(), 0);
  auto root = [&](std::size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  for (std::size_t i = 0; i < host_count; ++i) {
    for (std::size_t j = i + 1; j < host_count; ++j) {
      const double a = rtt_ms.at(i * host_count + j);
      const double b = rtt_ms.at(j * host_count + i);
      const double rtt = std::max(a, b);  // unmeasured entries are negative
      if (rtt >= 0 && rtt < threshold_ms) parent[root(j)] = root(i);
    }
  }
  std::vector<int> roots;
  for (std::size_t i = 0; i < host_count; ++i) roots.push_back(static_cast<int>(root(i)));
  return renumber_by_first_appearance(roots);
}

std::vector<int> SiteMap::sites_of_ranks(const std::vector<std::string>& host_of_rank,
                                         const std::vector<std::string>& hosts, const std::vector<int>& site_of_host) {
  std::vector<int> sites;
  for (const auto& host : host_of_rank) {
    const auto index = std::find(hosts.begin(), hosts.end(), host) - hosts.begin();
    sites.push_back(site_of_host.at(static_cast<std::size_t>(index)));
  }
  return renumber_by_first_appearance(sites);
}

SiteMap::SiteMap(std::vector<int> site_of_rank) : site_of_rank_(std::move(site_of_rank)) {
  for (int site : site_of_rank_) site_count_ = std::max(site_count_, site + 1);
}

std::string SiteMap::describe() const {
  std::ostringstream out;
  for (int site = 0; site < site_count_; ++site) {
    if (site > 0) out << "; ";
    out << "site " << site << ": ranks";
    const char* separator = " ";
    for (std::size_t rank = 0; rank < site_of_rank_.size(); ++rank) {
      if (site_of_rank_[rank] != site) continue;
      out << separator << rank;
      separator = ",";
    }
  }
  return out.str();
}

}  // namespace lp::mpi
