// PeerRoutes: which way each destination task's messages go, decided per destination.
//
// A destination starts unknown. The first send looks it up in the directory (TaskDirectory): found
// means LongPipe from the very first message; not found means the pvmd route, plus a hello through
// the pvmd that lets a LongPipe task answer with its endpoint later. Learning an endpoint after
// messages already went through the pvmd switches the destination to LongPipe with a marker: the
// caller sends the marker through the pvmd first, and every later LongPipe message carries
// kFlagAfterPvmdRoute, so the receiver holds them until the marker (and so everything sent before
// it) has arrived. Pure state, no I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>

namespace lp::pvm {

class PeerRoutes {
 public:
  enum class Kind { kUnknown, kPvmd, kLongPipe };

  struct Route {
    Kind kind = Kind::kUnknown;
    std::string endpoint;             // for kLongPipe
    bool after_pvmd_route = false;    // LongPipe messages must wait for the route marker
  };

  // What learning an endpoint asks the caller to do.
  enum class Learned {
    kUnchanged,        // already on LongPipe (or given up on): nothing to do
    kNowLongPipe,      // nothing went through the pvmd yet: use LongPipe from now on
    kSendMarkerFirst,  // messages went through the pvmd: send the route marker through it now
  };

  const Route& route(int tid) const;

  // The directory answered the first lookup.
  void found_in_directory(int tid, const std::string& endpoint);
  void not_in_directory(int tid);

  // A hello or a hello answer named the task's endpoint.
  Learned learned_endpoint(int tid, const std::string& endpoint);

  // The engine gave up on the peer: its messages go through the pvmd from now on, for good.
  void give_up(int tid);
  // The same for every task reached at `endpoint`; returns how many there were.
  std::size_t give_up_endpoint(const std::string& endpoint);

  // Flags for the next LongPipe message to `tid` (route_flags.h).
  std::uint32_t flags_for(int tid) const;

 private:
  struct Entry {
    Route route;
    bool given_up = false;
  };
  std::unordered_map<int, Entry> entries_;
};

}  // namespace lp::pvm
