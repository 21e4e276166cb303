// NameResolver: peers' host names looked up off the progress thread (name_lookup.h says why), with
// the answers cached. A numeric address needs no lookup and comes back at once; a name goes to the
// lookup workers and the thread goes on; the answer comes back through take_answers() once
// event_fd() is readable, and stays cached for the next dials. The dials waiting for a stuck name
// meet their attempt deadline as a dial that never connects does.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "name_lookup.h"
#include "wire/host_port.h"

namespace lp {

using NameLookup = std::function<ResolvedName(const HostPort&)>;

// getaddrinfo (blocking): the first address of `where`.
ResolvedName system_name_lookup(const HostPort& where);
// The lookup engines made from now on use (tests: a fake that blocks); an empty one: the system's.
void set_name_lookup_for_testing(NameLookup lookup);
// An IPv4 or IPv6 literal, without a lookup; nullopt for a name.
std::optional<ResolvedName> numeric_name(const HostPort& where);

class NameResolver {
 public:
  using Clock = std::chrono::steady_clock;
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

 private:
  struct Entry {
    std::optional<ResolvedName> answer;
    Clock::time_point answered;
    bool asked = false;  // a lookup is in progress
  };
  LookupWorkers workers_;
  std::map<std::string, Entry> cache_;                 // by "host:port"
  std::map<std::uint64_t, std::string> asked_;         // lookups in progress: their keys
  std::uint64_t next_id_ = 1;
};

}  // namespace lp
