#include "shell/resolver.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <system_error>
#include <thread>

#include "event_fd.h"
#include "file_descriptor.h"

namespace lpd {

std::optional<Resolved> numeric_address(const HostPort& where) {
  Resolved resolved;
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

Resolved system_lookup(const HostPort& where) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(where.port);
  Resolved resolved;
  if (const int error = ::getaddrinfo(where.host.c_str(), port.c_str(), &hints, &found); error != 0) {
    resolved.error = "resolve " + where.host + ": " + ::gai_strerror(error);
    return resolved;
  }
  std::memcpy(&resolved.address, found->ai_addr, found->ai_addrlen);
  resolved.length = found->ai_addrlen;
  ::freeaddrinfo(found);
  return resolved;
}

// Shared with the workers, which outlive the Resolver while a lookup of theirs is in progress.
struct Resolver::State {
  explicit State(Lookup fn) : lookup(std::move(fn)), event(lp::make_eventfd()) {}
  const Lookup lookup;
  const lp::FileDescriptor event;
  std::mutex mutex;
  std::condition_variable wanted;
  std::deque<std::pair<std::uint64_t, HostPort>> queue;
  std::vector<std::pair<std::uint64_t, Resolved>> results;
  std::size_t workers = 0, idle = 0;
  bool stopping = false;
};

namespace {

void work(const std::shared_ptr<Resolver::State>& state);

}  // namespace

Resolver::Resolver(Lookup lookup) : state_(std::make_shared<State>(std::move(lookup))) {}

Resolver::~Resolver() {
  std::lock_guard lock(state_->mutex);
  state_->stopping = true;
  state_->queue.clear();
  state_->wanted.notify_all();
}

void Resolver::resolve(std::uint64_t id, HostPort where) {
  std::lock_guard lock(state_->mutex);
  state_->queue.emplace_back(id, std::move(where));
  if (state_->idle > 0) {
    state_->wanted.notify_one();
  } else if (state_->workers < kMaxWorkers) {
    try {
      std::thread([state = state_] { work(state); }).detach();
      ++state_->workers;
    } catch (const std::system_error&) {
      // No thread now: a worker that frees up takes it, or the dial's deadline resets the stream.
    }
  }  // else: the next worker free takes it
}

int Resolver::event_fd() const { return state_->event.get(); }

std::vector<std::pair<std::uint64_t, Resolved>> Resolver::take_results() {
  lp::drain_eventfd(state_->event.get());
  std::lock_guard lock(state_->mutex);
  return std::exchange(state_->results, {});
}

namespace {

void work(const std::shared_ptr<Resolver::State>& state) {
  std::unique_lock lock(state->mutex);
  for (;;) {
    ++state->idle;
    state->wanted.wait(lock, [&] { return state->stopping || !state->queue.empty(); });
    --state->idle;
    if (state->stopping) break;
    auto [id, where] = std::move(state->queue.front());
    state->queue.pop_front();
    lock.unlock();
    Resolved resolved = state->lookup(where);
    lock.lock();
    if (state->stopping) break;
    state->results.emplace_back(id, std::move(resolved));
    lp::signal_eventfd(state->event.get());
  }
  --state->workers;
}

}  // namespace

}  // namespace lpd
