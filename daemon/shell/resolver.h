// Resolver: host name lookups off the gateway's loop (lp::LookupWorkers, name_lookup.h, says
// why). The loop parses numeric addresses itself (numeric_address) and hands names to resolve(),
// then goes on; each result comes back with its id through take_results() once event_fd() is
// readable, so the loop, its streams and its sessions never wait for a name.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "name_lookup.h"
#include "relay/names.h"

namespace lpd {

using Resolved = lp::ResolvedName;

// An IPv4 or IPv6 literal, without a lookup; nullopt for a name.
inline std::optional<Resolved> numeric_address(const HostPort& where) {
  return lp::numeric_name(where.host, where.port);
}
// getaddrinfo (blocking): the first address of `where`.
inline Resolved system_lookup(const HostPort& where) { return lp::lookup_name(where.host, where.port); }

class Resolver {
 public:
  using Lookup = std::function<Resolved(const HostPort&)>;

  explicit Resolver(Lookup lookup = system_lookup)
      : workers_([lookup = std::move(lookup)](const std::string& host, std::uint16_t port) {
          return lookup(HostPort{host, port});
        }) {}

  // Looks `where` up on a worker; the result comes back with `id`. Never blocks; when no worker
  // can start, the result is an error at once (the stream is refused, not left waiting).
  void resolve(std::uint64_t id, const HostPort& where);
  // Readable while results wait.
  int event_fd() const { return workers_.event_fd(); }
  // The results so far (and the event descriptor read empty).
  std::vector<std::pair<std::uint64_t, Resolved>> take_results();

 private:
  lp::LookupWorkers workers_;
  std::vector<std::pair<std::uint64_t, Resolved>> refused_;  // asked when no worker could start
};

}  // namespace lpd
