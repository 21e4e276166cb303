// Host names looked up without blocking the caller's loop. getaddrinfo blocks (for the site
// resolver's whole timeout when a name server does not answer), and both the engine's progress
// thread and the site gateway's loop serve many peers at once: neither may wait for one peer's
// name. A numeric address needs no lookup (numeric_name); a name goes to LookupWorkers, a few
// threads started as needed, and its answer comes back through take() once event_fd() is
// readable. A stuck lookup holds one worker; the others serve the next names.
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace lp {

struct ResolvedName {
  sockaddr_storage address{};
  socklen_t length = 0;  // 0: not resolved (`error` says why)
  std::string error;
  bool ok() const { return length != 0; }
};

// getaddrinfo (blocking): the first address of host:port.
ResolvedName lookup_name(const std::string& host, std::uint16_t port);
// An IPv4 or IPv6 literal, without a lookup; nullopt for a name.
std::optional<ResolvedName> numeric_name(const std::string& host, std::uint16_t port);
// "a.b.c.d:port" or "[v6]:port": the endpoint text of a resolved address.
std::string numeric_endpoint(const ResolvedName& resolved);

class LookupWorkers {
 public:
  // Runs on a worker thread; may block. An exception becomes the answer's error.
  using Lookup = std::function<ResolvedName(const std::string& host, std::uint16_t port)>;
  static constexpr std::size_t kMaxWorkers = 4;

  explicit LookupWorkers(Lookup lookup);
  // Does not wait for lookups in progress: their workers finish them and drop the answers.
  ~LookupWorkers();
  LookupWorkers(const LookupWorkers&) = delete;
  LookupWorkers& operator=(const LookupWorkers&) = delete;

  // Queues the lookup of host:port; its answer comes back with `id`. Never blocks. False when no
  // worker is running and none can start now (nothing queued: the caller asks again later).
  bool ask(std::uint64_t id, std::string host, std::uint16_t port);
  // Readable while answers wait.
  int event_fd() const;
  // The answers so far (and the event descriptor read empty).
  std::vector<std::pair<std::uint64_t, ResolvedName>> take();

  struct State;  // shared with the workers (name_lookup.cpp)

 private:
  std::shared_ptr<State> state_;
};

}  // namespace lp
