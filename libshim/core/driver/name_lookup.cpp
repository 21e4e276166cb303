#include "name_lookup.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <tuple>

#include "event_fd.h"
#include "file_descriptor.h"

namespace lp {

ResolvedName lookup_name(const std::string& host, std::uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  ResolvedName resolved;
  const int status = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
  if (status != 0 || found == nullptr) {
    resolved.error = "cannot resolve '" + host + "': " + ::gai_strerror(status);
    return resolved;
  }
  std::memcpy(&resolved.address, found->ai_addr, found->ai_addrlen);
  resolved.length = found->ai_addrlen;
  ::freeaddrinfo(found);
  return resolved;
}

std::optional<ResolvedName> numeric_name(const std::string& host, std::uint16_t port) {
  ResolvedName resolved;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&resolved.address);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&resolved.address);
  if (::inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    resolved.length = sizeof(sockaddr_in);
    return resolved;
  }
  if (::inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
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

// Shared with the workers, which outlive LookupWorkers while a lookup of theirs is in progress.
struct LookupWorkers::State {
  explicit State(Lookup fn) : lookup(std::move(fn)), event(make_eventfd()) {}
  const Lookup lookup;
  const FileDescriptor event;
  std::mutex mutex;
  std::condition_variable wanted;
  std::deque<std::tuple<std::uint64_t, std::string, std::uint16_t>> queue;
  std::vector<std::pair<std::uint64_t, ResolvedName>> answers;
  std::size_t workers = 0, idle = 0;
  bool stopping = false;
};

namespace {

void work(const std::shared_ptr<LookupWorkers::State>& state) {
  std::unique_lock lock(state->mutex);
  for (;;) {
    ++state->idle;
    state->wanted.wait(lock, [&] { return state->stopping || !state->queue.empty(); });
    --state->idle;
    if (state->stopping) break;
    auto [id, host, port] = std::move(state->queue.front());
    state->queue.pop_front();
    lock.unlock();
    ResolvedName resolved;
    try {
      resolved = state->lookup(host, port);
    } catch (const std::exception& e) {
      resolved = ResolvedName{};
      resolved.error = "cannot resolve '" + host + "': " + e.what();
    }
    lock.lock();
    if (state->stopping) break;
    state->answers.emplace_back(id, std::move(resolved));
    signal_eventfd(state->event.get());
  }
  --state->workers;
}

}  // namespace

LookupWorkers::LookupWorkers(Lookup lookup) : state_(std::make_shared<State>(std::move(lookup))) {}

LookupWorkers::~LookupWorkers() {
  std::lock_guard lock(state_->mutex);
  state_->stopping = true;
  state_->queue.clear();
  state_->wanted.notify_all();
}

bool LookupWorkers::ask(std::uint64_t id, std::string host, std::uint16_t port) {
  std::lock_guard lock(state_->mutex);
  if (state_->idle > 0) {
    state_->wanted.notify_one();
  } else if (state_->workers < kMaxWorkers) {
    try {
      std::thread([state = state_] { work(state); }).detach();
      ++state_->workers;
    } catch (const std::system_error&) {
      if (state_->workers == 0) return false;  // nobody would ever take it
    }
  }  // else: the next worker free takes it
  state_->queue.emplace_back(id, std::move(host), port);
  return true;
}

int LookupWorkers::event_fd() const { return state_->event.get(); }

std::vector<std::pair<std::uint64_t, ResolvedName>> LookupWorkers::take() {
  drain_eventfd(state_->event.get());
  std::lock_guard lock(state_->mutex);
  return std::exchange(state_->answers, {});
}

}  // namespace lp
