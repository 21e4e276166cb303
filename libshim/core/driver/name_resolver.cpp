#include "driver/name_resolver.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "event_fd.h"
#include "file_descriptor.h"

namespace lp {
namespace {

std::mutex g_testing_mutex;
NameLookup g_testing_lookup;  // empty: the system's

std::string key_of(const HostPort& where) { return where.host + ":" + std::to_string(where.port); }

}  // namespace

ResolvedName system_name_lookup(const HostPort& where) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(where.port);
  ResolvedName resolved;
  const int status = ::getaddrinfo(where.host.c_str(), port.c_str(), &hints, &found);
  if (status != 0 || found == nullptr) {
    resolved.error = "cannot resolve '" + where.host + "': " + ::gai_strerror(status);
    return resolved;
  }
  std::memcpy(&resolved.address, found->ai_addr, found->ai_addrlen);
  resolved.length = found->ai_addrlen;
  ::freeaddrinfo(found);
  return resolved;
}

void set_name_lookup_for_testing(NameLookup lookup) {
  std::lock_guard lock(g_testing_mutex);
  g_testing_lookup = std::move(lookup);
}

std::optional<ResolvedName> numeric_name(const HostPort& where) {
  ResolvedName resolved;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&resolved.address);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&resolved.address);
  if (::inet_pton(AF_INET, where.host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(where.port);
    resolved.length = sizeof(sockaddr_in);
    return resolved;
  }
  if (::inet_pton(AF_INET6, where.host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(where.port);
    resolved.length = sizeof(sockaddr_in6);
    return resolved;
  }
  return std::nullopt;
}

std::string numeric_endpoint(const ResolvedName& resolved) {
  char text[INET6_ADDRSTRLEN] = {};
  if (resolved.address.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&resolved.address);
    ::inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof text);
    return "[" + std::string(text) + "]:" + std::to_string(ntohs(v6->sin6_port));
  }
  const auto* v4 = reinterpret_cast<const sockaddr_in*>(&resolved.address);
  ::inet_ntop(AF_INET, &v4->sin_addr, text, sizeof text);
  return std::string(text) + ":" + std::to_string(ntohs(v4->sin_port));
}

// Shared with the workers, which outlive the resolver while a lookup of theirs is in progress.
struct NameResolver::State {
  explicit State(NameLookup fn) : lookup(std::move(fn)), event(make_eventfd()) {}
  const NameLookup lookup;
  const FileDescriptor event;
  std::mutex mutex;
  std::condition_variable wanted;
  std::deque<std::pair<std::string, HostPort>> queue;
  std::vector<std::pair<std::string, ResolvedName>> answers;
  std::size_t workers = 0, idle = 0;
  bool stopping = false;
};

namespace {

void work(const std::shared_ptr<NameResolver::State>& state) {
  std::unique_lock lock(state->mutex);
  for (;;) {
    ++state->idle;
    state->wanted.wait(lock, [&] { return state->stopping || !state->queue.empty(); });
    --state->idle;
    if (state->stopping) break;
    auto [key, where] = std::move(state->queue.front());
    state->queue.pop_front();
    lock.unlock();
    ResolvedName resolved;
    try {
      resolved = state->lookup(where);
    } catch (const std::exception& e) {
      resolved.error = std::string("cannot resolve '") + where.host + "': " + e.what();
    }
    lock.lock();
    if (state->stopping) break;
    state->answers.emplace_back(std::move(key), std::move(resolved));
    signal_eventfd(state->event.get());
  }
  --state->workers;
}

NameLookup chosen_lookup() {
  std::lock_guard lock(g_testing_mutex);
  return g_testing_lookup ? g_testing_lookup : NameLookup(system_name_lookup);
}

}  // namespace

NameResolver::NameResolver() : NameResolver(chosen_lookup()) {}

NameResolver::NameResolver(NameLookup lookup) : state_(std::make_shared<State>(std::move(lookup))) {}

NameResolver::~NameResolver() {
  std::lock_guard lock(state_->mutex);
  state_->stopping = true;
  state_->queue.clear();
  state_->wanted.notify_all();
}

std::optional<ResolvedName> NameResolver::find(const HostPort& where, Clock::time_point now) {
  if (auto numeric = numeric_name(where)) return numeric;
  const std::string key = key_of(where);
  Entry& entry = cache_[key];
  const bool stale = !entry.answer || now - entry.answered >= (entry.answer->ok() ? Clock::duration(kFresh)
                                                                                  : Clock::duration(kRetryFailed));
  if (stale && !entry.asked) {
    std::lock_guard lock(state_->mutex);
    bool queued = false;
    if (state_->idle > 0) {
      state_->wanted.notify_one();
      queued = true;
    } else if (state_->workers < kMaxWorkers) {
      try {
        std::thread([state = state_] { work(state); }).detach();
        ++state_->workers;
        queued = true;
      } catch (const std::system_error&) {
        // No thread now: the next dial asks again.
      }
    } else {
      queued = true;  // the next worker free takes it
    }
    if (queued) {
      state_->queue.emplace_back(key, where);
      entry.asked = true;
    }
  }
  // A stale answer serves while its successor is looked up; a failed one only while fresh (the
  // dial then fails with its reason, as a dial to a name that does not resolve always did).
  if (entry.answer && (entry.answer->ok() || !stale)) return entry.answer;
  return std::nullopt;
}

int NameResolver::event_fd() const { return state_->event.get(); }

bool NameResolver::take_answers(Clock::time_point now) {
  drain_eventfd(state_->event.get());
  std::vector<std::pair<std::string, ResolvedName>> answers;
  {
    std::lock_guard lock(state_->mutex);
    answers = std::exchange(state_->answers, {});
  }
  for (auto& [key, resolved] : answers) {
    Entry& entry = cache_[key];
    entry.asked = false;
    // A failed refresh keeps the last good answer (the name server may be down a moment).
    if (resolved.ok() || !entry.answer || !entry.answer->ok()) entry.answer = std::move(resolved);
    entry.answered = now;
  }
  return !answers.empty();
}

}  // namespace lp
