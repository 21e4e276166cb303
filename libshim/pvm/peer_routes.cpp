#include "peer_routes.h"

#include "route_flags.h"

namespace lp::pvm {

const PeerRoutes::Route& PeerRoutes::route(int tid) const {
  static const Route unknown;
  const auto it = entries_.find(tid);
  return it == entries_.end() ? unknown : it->second.route;
}

void PeerRoutes::found_in_directory(int tid, const std::string& endpoint) {
  Entry& entry = entries_[tid];
  if (entry.route.kind != Kind::kUnknown) return;
  entry.route = Route{Kind::kLongPipe, endpoint, false};
}

void PeerRoutes::not_in_directory(int tid) {
  Entry& entry = entries_[tid];
  if (entry.route.kind == Kind::kUnknown) entry.route.kind = Kind::kPvmd;
}

PeerRoutes::Learned PeerRoutes::learned_endpoint(int tid, const std::string& endpoint) {
  Entry& entry = entries_[tid];
  if (entry.given_up) return Learned::kUnchanged;
  switch (entry.route.kind) {
    case Kind::kLongPipe:
      return Learned::kUnchanged;
    case Kind::kUnknown:
      entry.route = Route{Kind::kLongPipe, endpoint, false};
      return Learned::kNowLongPipe;
    case Kind::kPvmd:
      entry.route = Route{Kind::kLongPipe, endpoint, true};
      return Learned::kSendMarkerFirst;
  }
  return Learned::kUnchanged;
}

void PeerRoutes::give_up(int tid) {
  Entry& entry = entries_[tid];
  entry.given_up = true;
  entry.route = Route{Kind::kPvmd, {}, false};
}

std::size_t PeerRoutes::give_up_endpoint(const std::string& endpoint) {
  std::size_t count = 0;
  for (auto& [tid, entry] : entries_) {
    if (entry.route.kind == Kind::kLongPipe && entry.route.endpoint == endpoint) {
      entry.given_up = true;
      entry.route = Route{Kind::kPvmd, {}, false};
      ++count;
    }
  }
  return count;
}

std::uint32_t PeerRoutes::flags_for(int tid) const {
  return route(tid).after_pvmd_route ? kFlagAfterPvmdRoute : 0;
}

}  // namespace lp::pvm
