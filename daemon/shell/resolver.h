// Resolver: host name lookups off the gateway's loop. getaddrinfo blocks (for the site resolver's
// whole timeout when a name does not resolve), so the loop parses numeric addresses itself
// (numeric_address) and hands names to resolve(), then goes on; a few worker threads, started as
// needed, look them up, and each result comes back through take_results() once event_fd() is
// readable. A stuck lookup holds one worker; the others serve the next names, and the loop, its
// streams and its sessions never wait.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "relay/names.h"

namespace lpd {

struct Resolved {
  sockaddr_storage address{};
  socklen_t length = 0;  // 0: not resolved (`error` says why)
  std::string error;
};

// An IPv4 or IPv6 literal, without a lookup; nullopt for a name.
std::optional<Resolved> numeric_address(const HostPort& where);
// getaddrinfo (blocking): the first address of `where`.
Resolved system_lookup(const HostPort& where);

class Resolver {
 public:
  using Lookup = std::function<Resolved(const HostPort&)>;
  static constexpr std::size_t kMaxWorkers = 4;

  explicit Resolver(Lookup lookup = system_lookup);
  // Does not wait for lookups in progress: their workers finish them and drop the results.
  ~Resolver();
  Resolver(const Resolver&) = delete;
  Resolver& operator=(const Resolver&) = delete;

  // Looks `where` up on a worker; the result comes back with `id`. Never blocks.
  void resolve(std::uint64_t id, HostPort where);
  // Readable while results wait.
  int event_fd() const;
  // The results so far (and the event descriptor read empty).
  std::vector<std::pair<std::uint64_t, Resolved>> take_results();

  struct State;  // shared with the workers (resolver.cpp)

 private:
  std::shared_ptr<State> state_;
};

}  // namespace lpd
