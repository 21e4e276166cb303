// Gateway: the loop, the engine side (frames in and out, the room to send, peers given up on) and
// reloading the peers. The local side: gateway_local.cpp.
#include "shell/gateway.h"

#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <array>
#include <csignal>
#include <cstdio>
#include <iostream>

#include "event_fd.h"
#include "shell/sockets.h"
#include "system_call.h"

namespace lpd {
namespace {

constexpr std::uint64_t kListenerToken = 1, kReceiveToken = 2, kRoomToken = 3, kSignalToken = 4, kResolverToken = 5;
constexpr std::size_t kFramesPerTurn = 4096;  // engine input per turn, so local sockets get turns too

std::uint64_t random_instance() {
  std::uint64_t value = 0;
  if (::getrandom(&value, sizeof value, 0) != static_cast<ssize_t>(sizeof value)) {
    value = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
            (static_cast<std::uint64_t>(::getpid()) << 32);
  }
  return value;
}

void watch(int epoll, int fd, std::uint64_t token) {
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.u64 = token;
  lp::SystemCall("epoll_ctl", ::epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event));
}

RelayLimits limits_of(const GatewayConfig& config) {
  RelayLimits limits;
  limits.stream_window = config.stream_window;
  limits.max_streams = config.max_streams;
  return limits;
}

}  // namespace

Gateway::Gateway(GatewayConfig config, std::string config_path, Resolver::Lookup lookup)
    : config_(std::move(config)), config_path_(std::move(config_path)), resolver_(std::move(lookup)) {
  relay_ = std::make_unique<Relay>(config_.site, random_instance(), limits_of(config_));
  engine_ = std::make_unique<lp::Engine>(lp::Config::from_variables(config_.engine_variables()));
  listener_ = listen_unix(config_.socket);
  epoll_ = lp::FileDescriptor(lp::SystemCall("epoll_create1", ::epoll_create1(EPOLL_CLOEXEC)));
  relay_->set_peers(config_.peer_map());
  relay_->set_routes(config_.route_map());
  relay_->set_relays(config_.relays);
  const std::string status = relay_->status_json();
  const auto instance = status.find("\"instance\":\"");
  log("site " + config_.site + " gateway at " + engine_->local_endpoint() + ", socket " + config_.socket + ", " +
      std::to_string(config_.peers.size()) + " peers, instance " + status.substr(instance + 12, 16));
}

Gateway::~Gateway() {
  if (listener_) ::unlink(config_.socket.c_str());
}

void Gateway::log(const std::string& line) const {
  std::fprintf(stderr, "longpiped %s: %s\n", config_.site.c_str(), line.c_str());
}

void Gateway::run(int signal_fd) {
  watch(epoll_.get(), listener_.get(), kListenerToken);
  watch(epoll_.get(), engine_->receive_event_fd(), kReceiveToken);
  watch(epoll_.get(), engine_->room_event_fd(), kRoomToken);
  watch(epoll_.get(), signal_fd, kSignalToken);
  watch(epoll_.get(), resolver_.event_fd(), kResolverToken);
  pump();
  std::array<epoll_event, 256> events{};
  for (;;) {
    // At least twice a second: deadlines, and peers the engine gave up on (no descriptor says so).
    auto timeout = std::chrono::milliseconds(500);
    const auto now = Clock::now();
    for (const auto& [token, conn] : conns_) {
      if (conn.deadline != Clock::time_point::max()) {
        timeout = std::min(timeout, std::chrono::ceil<std::chrono::milliseconds>(std::max(conn.deadline - now, Clock::duration::zero())));
      }
    }
    const int n = ::epoll_wait(epoll_.get(), events.data(), static_cast<int>(events.size()), static_cast<int>(timeout.count()));
    if (n < 0 && errno != EINTR) throw lp::SystemError("epoll_wait", errno);
    for (int i = 0; i < n; ++i) {
      const std::uint64_t token = events[static_cast<std::size_t>(i)].data.u64;
      if (token == kListenerToken) {
        accept_clients();
      } else if (token == kReceiveToken) {
        receive_frames();
      } else if (token == kRoomToken) {
        send_held();
      } else if (token == kResolverToken) {
        on_resolved();
      } else if (token == kSignalToken) {
        signalfd_siginfo info{};
        if (::read(signal_fd, &info, sizeof info) != static_cast<ssize_t>(sizeof info)) continue;
        if (info.ssi_signo == SIGHUP) {
          reload();
        } else {
          log("stopping (signal " + std::to_string(info.ssi_signo) + "), resetting " +
              std::to_string(relay_->stream_count()) + " streams");
          // Every forwarded stream ends as a reset, as when a TCP path drops: the processes'
          // sessions re-dial and re-send what is unacknowledged.
          for (auto& [token, conn] : conns_) {
            if (conn.handle != 0) close_abortively(conn.fd);
          }
          return;
        }
      } else {
        on_conn_event(token, events[static_cast<std::size_t>(i)].events);
      }
      pump();
    }
    for (const lp::PeerFailure& failure : engine_->take_peer_failures()) {
      relay_->on_peer_failed(failure.peer_endpoint, failure.reason, false);
    }
    retry_refused_peers(Clock::now());
    expire(Clock::now());
    pump();
  }
}

void Gateway::retry_refused_peers(Clock::time_point now) {
  if (now < next_peer_retry_) return;
  next_peer_retry_ = now + kRetryRefusedPeer;
  for (const auto& [site, endpoint] : relay_->refused_peers()) {
    engine_->retry_peer(endpoint);
    relay_->retry_refused(site);
  }
}

void Gateway::receive_frames() {
  for (std::size_t i = 0; i < kFramesPerTurn; ++i) {
    auto frame = engine_->try_receive();
    if (!frame) return;
    relay_->on_frame(frame->peer_endpoint, *frame);
  }
}

void Gateway::send_held() {
  lp::drain_eventfd(engine_->room_event_fd());
  for (auto it = held_.begin(); it != held_.end();) {
    Transmit& held = it->second;
    try {
      if (!engine_->try_send(held.endpoint, held.message)) {
        ++it;
        continue;
      }
      relay_->set_blocked(it->first, false);
    } catch (const lp::PeerFailed& e) {
      relay_->on_peer_failed(held.endpoint, e.what(), true);  // blocks the site until its HELLO
    } catch (const std::exception& e) {
      log("frame to " + held.site + " dropped: " + e.what());
      relay_->set_blocked(it->first, false);
    }
    it = held_.erase(it);
  }
}

void Gateway::pump() {
  for (bool progress = true; progress;) {
    progress = false;
    while (auto transmit = relay_->poll_transmit()) {
      progress = true;
      try {
        if (!engine_->try_send(transmit->endpoint, transmit->message)) {
          relay_->set_blocked(transmit->site, true);
          held_.emplace(transmit->site, std::move(*transmit));
        }
      } catch (const lp::PeerFailed& e) {
        relay_->on_peer_failed(transmit->endpoint, e.what(), true);  // blocks the site until its HELLO
      } catch (const std::exception& e) {
        log("frame to " + transmit->site + " dropped: " + e.what());
      }
    }
    while (auto action = relay_->poll_local()) {
      progress = true;
      carry_out(*action);
    }
  }
  for (Handle handle : relay_->take_dirty()) {
    if (const auto token = token_of_.find(handle); token != token_of_.end()) update_interest(token->second);
  }
  for (const std::string& line : relay_->take_log()) log(line);
}

void Gateway::reload() {
  try {
    GatewayConfig fresh = read_config(config_path_);
    if (fresh.site != config_.site || fresh.socket != config_.socket || fresh.listen != config_.listen ||
        fresh.key_file != config_.key_file || fresh.stream_window != config_.stream_window ||
        fresh.max_streams != config_.max_streams || fresh.engine != config_.engine) {
      log("reload: only peer, route, relay and allow-uid lines apply at once; the other changes need a restart");
    }
    // Routes and relays apply to new streams; the streams already open keep their path.
    relay_->set_peers(fresh.peer_map());
    relay_->set_routes(fresh.route_map());
    relay_->set_relays(fresh.relays);
    config_.peers = fresh.peers;
    config_.routes = fresh.routes;
    config_.relays = fresh.relays;
    config_.allow_uids = fresh.allow_uids;
    log("reloaded " + config_path_ + ": " + std::to_string(config_.peers.size()) + " peers, " +
        std::to_string(config_.routes.size()) + " routes");
  } catch (const std::exception& e) {
    log("reload failed, keeping the running config: " + std::string(e.what()));
  }
}

}  // namespace lpd
