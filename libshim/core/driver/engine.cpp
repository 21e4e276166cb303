// lp::Engine: its set-up (carrier, datagram port, statistics signal), the application's calls, and
// the goodbye's drain at shut-down. The progress thread's turn: progress_loop.cpp.
#include "driver/engine_impl.h"

#include <sched.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <thread>

#include "system_call.h"
#include "wire/host_port.h"
#include "carrier/gateway/gateway_carrier.h"
#include "carrier/gateway/gateway_socket.h"
#include "carrier/tcp/tcp_carrier.h"
#include "carrier/tcp/tcp_socket.h"

namespace lp {
namespace {

using Clock = std::chrono::steady_clock;

// Bytes dropped from one connection per turn of the goodbye's drain, so that one busy peer does not
// keep the others' ends from being read.
constexpr std::size_t kGoodbyeDrainBudget = 1u << 20;

// SIGUSR1 -> this eventfd -> the progress thread writes LONGPIPE_STATS (no work in the handler).
std::atomic<int> g_stats_signal_fd{-1};

void on_stats_signal(int) {
  const int saved = errno;
  const int fd = g_stats_signal_fd.load(std::memory_order_relaxed);
  if (fd >= 0) {
    const std::uint64_t one = 1;
    [[maybe_unused]] auto ignored = ::write(fd, &one, sizeof one);
  }
  errno = saved;
}

std::string machine_hostname() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

std::string endpoint_name(const Config& config, const std::string& site, std::uint16_t port) {
  const HostPort listen = parse_host_port(config.listen, false);
  return (site.empty() ? "" : site + "/") +
         (listen.host.empty() || listen.host == "0.0.0.0" ? machine_hostname() : listen.host) + ":" +
         std::to_string(port);
}

// Behind a gateway every stream is TCP: the gateway forwards byte streams, not datagrams. (Config
// refuses LONGPIPE_CARRIER=udp with a gateway; this catches a Config built in code.)
Config through_gateway(Config config) {
  if (config.gateway.empty()) return config;
  if (config.carrier == CarrierChoice::kUdp) {
    throw ConfigError("LONGPIPE_CARRIER=udp with LONGPIPE_GATEWAY (" + config.gateway +
                      "): a gateway forwards TCP streams only; use tcp or auto");
  }
  config.carrier = CarrierChoice::kTcp;
  return config;
}

std::unique_ptr<Carrier> make_carrier(const Config& config) {
  if (config.gateway.empty()) return std::make_unique<TcpCarrier>(config);
  return std::make_unique<GatewayCarrier>(config);
}

}  // namespace

Engine::Impl::Impl(Config config)
    : config_(through_gateway(std::move(config))),
      site_(Engine::gateway_site(config_)),
      carrier_(make_carrier(config_)),
      local_endpoint_(endpoint_name(config_, site_, carrier_->port())),
      mailbox_(config_.window_full, {config_.window_messages, config_.window_bytes}),
      endpoint_(config_, local_endpoint_, [] { return Authenticator::make_nonce(); }),
      stats_signal_fd_(SystemCall("eventfd", ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC))),
      path_keeper_(config_) {
  if (!site_.empty()) udp_note_ = "LONGPIPE_CARRIER: tcp through LONGPIPE_GATEWAY (a gateway forwards streams, not datagrams)";
  loop_.add(carrier_->listen_fd(), &listen_tag_, true, false);
  loop_.add(mailbox_.wake_fd(), &wake_tag_, true, false);
  loop_.add(stats_signal_fd_.get(), &stats_tag_, true, false);
  loop_.add(names_.event_fd(), &names_tag_, true, false);
  if (config_.carrier != CarrierChoice::kTcp) {
    try {
      datagrams_ = std::make_unique<DatagramPort>(config_, carrier_->port());
      loop_.add(datagrams_->fd(), &datagram_tag_, true, false);
    } catch (const SystemError& e) {
      if (config_.carrier == CarrierChoice::kUdp) throw;
      // auto: this engine offers TCP only (carrier_choice.h), and says why.
      datagrams_.reset();
      udp_note_ = std::string("LONGPIPE_CARRIER=auto without datagrams: ") + e.what();
    }
  }
  endpoint_.set_window_lookup([](const Connection& connection) {
    if (connection.link && connection.carried_large_spill) connection.link->keep_grown_window();
    return connection.link ? connection.link->stream_window() : StreamWindow{};
  });
  endpoint_.set_carrier_capability(datagrams_ != nullptr, [this](const Connection& connection, const std::string& peer,
                                                                 bool dialler) {
    const auto rtt = connection.handshake_rtt == Clock::duration{}
                         ? std::nullopt
                         : std::optional(std::chrono::duration_cast<std::chrono::microseconds>(connection.handshake_rtt));
    return connection.link && path_keeper_.prefers_datagrams(path_cache_key(connection.link->peer_address(), peer), rtt, dialler);
  }, [this](const std::string& peer) {
    // The key the connection will have (its peer's address), as the dial will resolve it. A name
    // not yet looked up (names_ never waits) or that does not resolve: nothing is known of the path
    // yet; the dial asks again once it has the address (Endpoint::judge_again_with_address).
    try {
      const auto resolved = names_.find(parse_host_port(peer, true), Clock::now());
      if (!resolved || !resolved->ok()) return DialJudgement::kAtHandshake;
      return path_keeper_.judge_before_dial(path_cache_key(address_text(resolved->address), peer));
    } catch (const std::exception&) {
      return DialJudgement::kAtHandshake;  // the dial will fail and say why
    }
  });
  if (!config_.stats_path.empty()) {
    // Only if nobody (the application) handles SIGUSR1 already.
    struct sigaction current {};
    if (::sigaction(SIGUSR1, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
      g_stats_signal_fd.store(stats_signal_fd_.get());
      struct sigaction action {};
      action.sa_handler = on_stats_signal;
      action.sa_flags = SA_RESTART;
      sigemptyset(&action.sa_mask);
      ::sigaction(SIGUSR1, &action, nullptr);
    }
  }
  application_cpu_ = ::sched_getcpu();
  pin_plan_ = plan_pinning(config_.pin, application_cpu_);  // here: the progress thread reads no environment
}

Engine::Impl::~Impl() {
  if (g_stats_signal_fd.load() == stats_signal_fd_.get()) g_stats_signal_fd.store(-1);
}

void Engine::Impl::send(const std::string& peer, Message message) {
  if (message.body.size() > config_.max_message) {
    throw std::invalid_argument("message of " + std::to_string(message.body.size()) +
                                " bytes exceeds LONGPIPE_MAX_MESSAGE (" + std::to_string(config_.max_message) + ")");
  }
  parse_host_port(peer, true);  // throws std::invalid_argument with the endpoint text
  if (peer == local_endpoint_) {
    // A message to our own endpoint needs no session (a connection to ourselves would be both the
    // dialler and the acceptor of one session): it goes straight to the receive queue, in order.
    message.peer_endpoint = local_endpoint_;
    std::vector<Message> batch;
    batch.push_back(std::move(message));
    mailbox_.deliver(batch);
    return;
  }
  QueuedMessage queued{{}, message.body.size()};
  queued.packed = pack_message(std::move(message));
  mailbox_.send(peer, std::move(queued));
}

bool Engine::Impl::try_send(const std::string& peer, Message& message) {
  if (message.body.size() > config_.max_message || peer == local_endpoint_) {
    send(peer, std::move(message));  // refused with its reason, or no session: never waits
    return true;
  }
  parse_host_port(peer, true);
  const std::size_t bytes = message.body.size();
  return mailbox_.try_send(peer, bytes, [&] { return QueuedMessage{pack_message(std::move(message)), bytes}; });
}

void Engine::Impl::write_stats_file() const {
  if (config_.stats_path.empty()) return;
  const std::string temporary = config_.stats_path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    if (!out) return;  // statistics are best effort; never take the application down for them
    out << stats_json() << "\n";
  }
  std::rename(temporary.c_str(), config_.stats_path.c_str());
}

// The goodbye's close. Closing a socket at once after the goodbye can lose the last ACK: the peer,
// before reading our ACK and goodbye, may still write to us (a re-send, a keep-alive); our closed
// socket answers with RST, and the peer's engine closes that connection without reading the ACK
// queued in front of the goodbye. So each established connection writes what it holds, ends its
// sending (FIN after the goodbye), and reads and drops what still comes until the peer closes its
// end (it does on reading the goodbye), or until `deadline`. Only these descriptors are watched:
// the listener, the wake-up and the datagram socket stay out (nothing more is accepted or sent).
void Engine::Impl::drain_after_goodbye(Clock::time_point deadline) {
  struct Draining {
    Connection* connection = nullptr;
    bool finished_sending = false;
    bool ended = false;  // the peer closed or reset its end, or a write failed: nothing to wait for
  };
  std::vector<Draining> draining;
  for (auto& [raw, connection] : endpoint_.connections()) {
    if (connection->state == ConnectionState::kEstablished && connection->link) draining.push_back({connection.get()});
  }
  if (draining.empty()) return;
  EventLoop drain;
  // Writes what the connection still holds; once all left, ends the sending. False: it failed.
  const auto write_rest = [](Draining& entry) {
    Connection& connection = *entry.connection;
    if (connection.pending_output() > 0) {
      std::string ignored;
      std::size_t written = 0;
      const IoStatus status = connection.link->write(connection.unsent(), false, written, ignored);
      connection.consume(written);
      if (status == IoStatus::kError) return false;
    }
    if (connection.pending_output() == 0 && !entry.finished_sending) {
      connection.link->finish_sending();
      entry.finished_sending = true;
    }
    return true;
  };
  std::size_t open = 0;
  for (Draining& entry : draining) {
    if (!write_rest(entry)) continue;
    try {
      drain.add(entry.connection->link->poll_fd(), &entry, true, !entry.finished_sending);
      ++open;
    } catch (const SystemError&) {
      // Not watched: closed at once, as before.
    }
  }
  while (open > 0 && Clock::now() < deadline) {
    for (const LoopEvent& event : drain.wait(deadline)) {
      Draining& entry = *static_cast<Draining*>(event.tag);
      if (entry.ended) continue;
      Connection& connection = *entry.connection;
      bool over = false;
      if (event.writable) {
        over = !write_rest(entry);
        if (!over && entry.finished_sending) drain.modify(connection.link->poll_fd(), &entry, true, false);
      }
      if (!over && event.readable) over = connection.link->discard_input(kGoodbyeDrainBudget) != IoStatus::kOk;
      if (over) {
        entry.ended = true;
        drain.remove(connection.link->poll_fd());
        --open;
      }
    }
  }
}

EndpointStatistics Engine::Impl::endpoint_statistics() const {
  EndpointStatistics statistics = endpoint_.statistics();
  path_keeper_.add_statistics(statistics);
  if (datagrams_) {
    const DatagramPen::Counters& pen = datagrams_->pen_counters();
    statistics.held_datagrams = pen.held;
    statistics.held_datagrams_released = pen.released;
    statistics.held_datagrams_expired = pen.expired;
    statistics.held_datagrams_overflowed = pen.overflowed;
  }
  return statistics;
}

// --- Engine ------------------------------------------------------------------------------------

Engine::Engine(Config config) : impl_(std::make_unique<Impl>(std::move(config))) { impl_->start(); }

Engine::~Engine() {
  if (!impl_) return;
  impl_->mailbox_.flush(impl_->config_.linger);
  impl_->stop();
  impl_->write_stats_file();
}

std::string Engine::local_endpoint() const { return impl_->local_endpoint_; }
std::string Engine::gateway_site(const Config& config) {
  return config.gateway.empty() ? std::string() : ask_gateway_site(config.gateway);
}
void Engine::send(const std::string& peer_endpoint, Message message) { impl_->send(peer_endpoint, std::move(message)); }
bool Engine::try_send(const std::string& peer_endpoint, Message& message) {
  return impl_->try_send(peer_endpoint, message);
}
int Engine::room_event_fd() const { return impl_->mailbox_.room_event_fd(); }
std::optional<Message> Engine::try_receive() { return impl_->mailbox_.try_receive(); }
int Engine::receive_event_fd() const { return impl_->mailbox_.receive_event_fd(); }
bool Engine::wait_receive(std::chrono::milliseconds timeout) { return impl_->mailbox_.wait_receive(timeout); }
bool Engine::flush(std::chrono::milliseconds timeout) { return impl_->mailbox_.flush(timeout); }
std::vector<PeerFailure> Engine::take_peer_failures() { return impl_->mailbox_.take_peer_failures(); }
void Engine::retry_peer(const std::string& peer_endpoint) { impl_->mailbox_.retry(peer_endpoint); }
std::string Engine::stats_json() const { return impl_->stats_json(); }
void Engine::reset_connections_for_testing() { impl_->mailbox_.request_reset(); }

void Engine::abandon_after_fork() {
  // The progress thread and its locks exist only in the parent: touching them could deadlock.
  // Keep the state on purpose (exec() closes the descriptors: all are close-on-exec), reachable
  // from here so that leak checkers do not report it.
  static auto* abandoned = new std::vector<Impl*>();
  abandoned->push_back(impl_.release());
}

}  // namespace lp
