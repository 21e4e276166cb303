#include "shell/resolver.h"

#include "event_fd.h"

namespace lpd {

void Resolver::resolve(std::uint64_t id, const HostPort& where) {
  if (workers_.ask(id, where.host, where.port)) return;
  Resolved refused;
  refused.error = "cannot resolve '" + where.host + "': no thread to look it up";
  refused_.emplace_back(id, std::move(refused));
  lp::signal_eventfd(workers_.event_fd());
}

std::vector<std::pair<std::uint64_t, Resolved>> Resolver::take_results() {
  auto results = workers_.take();
  for (auto& refused : refused_) results.push_back(std::move(refused));
  refused_.clear();
  return results;
}

}  // namespace lpd
