// NameResolver: peers' host names looked up off the progress thread. getaddrinfo blocks (for the
// site resolver's whole timeout when a name server does not answer), and the progress thread
// serves every session of the process: it must never wait for one peer's name. A numeric address
// needs no lookup and comes back at once; a name is handed to a worker thread (a few, started as
// needed) and the thread goes on; the answer comes back through take_answers() once event_fd() is
// readable, and stays cached for the next dials. A stuck lookup holds one worker: the others serve
// the next names, and the dials waiting for the stuck name meet their attempt deadline as a dial
// that never connects does.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "wire/host_port.h"

namespace lp {

struct ResolvedName {
  sockaddr_storage address{};
  socklen_t length = 0;  // 0: not resolved (`error` says why)
  std::string error;
  bool ok() const { return length != 0; }
};

using NameLookup = std::function<ResolvedName(const HostPort&)>;

// getaddrinfo (blocking): the first address of `where`.
ResolvedName system_name_lookup(const HostPort& where);
// The lookup engines made from now on use (tests: a fake that blocks); an empty one: the system's.
void set_name_lookup_for_testing(NameLookup lookup);
// An IPv4 or IPv6 literal, without a lookup; nullopt for a name.
std::optional<ResolvedName> numeric_name(const HostPort& where);
// "a.b.c.d:port" or "[v6]:port": the endpoint text of a resolved address (what a dial is given).
std::string numeric_endpoint(const ResolvedName& resolved);

class NameResolver {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::size_t kMaxWorkers = 4;
  // An answer is used this long; after it the name is looked up again (the old answer serves
  // meanwhile). A failed lookup is retried after kRetryFailed.
  static constexpr std::chrono::seconds kFresh{30};
  static constexpr std::chrono::seconds kRetryFailed{1};

  // The lookup set by set_name_lookup_for_testing, else the system's.
  NameResolver();
  explicit NameResolver(NameLookup lookup);
  // Does not wait for lookups in progress: their workers finish them and drop the answers.
  ~NameResolver();
  NameResolver(const NameResolver&) = delete;
  NameResolver& operator=(const NameResolver&) = delete;

  // The address of `where`, if known (a numeric host always); else starts its lookup (unless one
  // is in progress) and returns nullopt. Never blocks.
  std::optional<ResolvedName> find(const HostPort& where, Clock::time_point now);
  // Readable while answers wait.
  int event_fd() const;
  // Moves the answers that came into the cache; false if none came.
  bool take_answers(Clock::time_point now);

  struct State;  // shared with the workers (name_resolver.cpp)

 private:
  struct Entry {
    std::optional<ResolvedName> answer;
    Clock::time_point answered;
    bool asked = false;  // a lookup is in progress
  };
  std::shared_ptr<State> state_;
  std::map<std::string, Entry> cache_;  // by "host:port"
};

}  // namespace lp
