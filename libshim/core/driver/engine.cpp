// The driver: the one progress thread of an engine. It reads the clock, feeds carrier events and
// application requests to the endpoint, drains the endpoint's commands into the carrier and its
// events into the mailbox, and waits in the event loop until the one next deadline.
#include "engine.h"

#include <sched.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <thread>

#include "driver/datagram_port.h"
#include "session/endpoint.h"
#include "driver/event_loop.h"
#include "wire/host_port.h"
#include "driver/mailbox.h"
#include "driver/path_keeper.h"
#include "system_call.h"
#include "carrier/tcp/tcp_carrier.h"
#include "carrier/tcp/tcp_path_info.h"
#include "carrier/tcp/tcp_socket.h"
#include "driver/thread_pinning.h"

namespace lp {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Bytes read from one connection before the others get a turn.
constexpr std::size_t kReadBudget = 4u << 20;
// After its goodbye an exiting engine reads and drops what still arrives until each peer closed its
// end (drain_after_goodbye), never longer than this: a vanished peer must not hold an exiting
// process. A live peer closes on reading the goodbye, one round trip after it left; this covers
// the geostationary round trip (540 ms) with room for a loaded host.
constexpr milliseconds kGoodbyeDrainLimit{1500};
// Bytes dropped from one connection per turn of that drain, so that one busy peer does not keep
// the others' ends from being read.
constexpr std::size_t kGoodbyeDrainBudget = 1u << 20;
// Bytes read from a connection that has not authenticated, per turn: the largest handshake frames
// (HELLO, AUTH and a sealed IDENTIFY) fit, so an unauthenticated peer makes us buffer no more.
constexpr std::size_t kHandshakeReadBudget = 1024;

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

std::string endpoint_name(const Config& config, std::uint16_t port) {
  const HostPort listen = parse_host_port(config.listen, false);
  return (listen.host.empty() || listen.host == "0.0.0.0" ? machine_hostname() : listen.host) + ":" +
         std::to_string(port);
}

// Each regular stream's congestion control as it is now ("cubic,bbr"): a stream may have switched to
// LONGPIPE_CONGESTION_FALLBACK since it connected, and its note says when and why.
void describe_stream_congestion(Session& session) {
  std::string congestion;
  std::string notes;
  for (const Connection* stream : session.streams().streams()) {
    if (stream == nullptr || !stream->link) continue;
    // The spill streams all take stream 0's (config.cpp): listed, they would only repeat it.
    if (!StreamScheduler::is_spill_slot(stream->stream)) {
      congestion += (congestion.empty() ? "" : ",") + stream->link->tuning().congestion;
    }
    notes += stream->link->tuning().note;
  }
  session.counters().tuning.congestion = congestion;
  session.counters().tuning.note = notes;
}

}  // namespace

class Engine::Impl {
 public:
  explicit Impl(Config config);
  ~Impl();

  void start() { thread_ = std::thread([this] { run(); }); }
  void stop() {
    mailbox_.request_stop();
    if (thread_.joinable()) thread_.join();
  }
  void send(const std::string& peer, Message message);
  bool try_send(const std::string& peer, Message& message);
  void write_stats_file() const;
  std::string stats_json() const {
    SocketTuning listen = carrier_->listen_tuning();
    listen.note += udp_note_;
    return mailbox_.stats_json(local_endpoint_, listen);
  }

  Config config_;
  std::unique_ptr<Carrier> carrier_;  // TCP today; the driver sees only the interface
  std::unique_ptr<DatagramPort> datagrams_;  // LONGPIPE_CARRIER=udp: the UDP socket beside it
  std::string local_endpoint_;
  Mailbox mailbox_;

 private:
  // Tags for event-loop sources that are not connections.
  enum class Source { kListen, kWake, kStatsSignal, kDatagrams };

  void run();
  void handle_event(const LoopEvent& event, Clock::time_point now);
  void read_from(Connection& connection, Clock::time_point now);
  void apply_requests(Clock::time_point now, bool& stopping);
  void service(Session& session, Clock::time_point now, bool reading_paused);
  MailboxSlot& slot(Session& session);
  // Carries out what the endpoint decided: opens links, retunes, writes, closes.
  void drain_commands(Clock::time_point now);
  void flush(Connection& connection, Clock::time_point now);
  void set_interest(Connection& connection);
  void sweep_closed();
  void drain_after_goodbye(Clock::time_point deadline);
  void flush_datagrams();
  Clock::time_point next_deadline(Clock::time_point now) const;

  EventLoop loop_;
  Endpoint endpoint_;
  FileDescriptor stats_signal_fd_;  // SIGUSR1 -> progress thread
  int application_cpu_ = -1;
  PinPlan pin_plan_;
  std::thread thread_;
  Source listen_tag_ = Source::kListen, wake_tag_ = Source::kWake, stats_tag_ = Source::kStatsSignal;
  Source datagram_tag_ = Source::kDatagrams;
  bool datagrams_blocked_ = false;  // the UDP socket was full: watching for writability
  std::string udp_note_;            // auto: why the UDP socket could not be bound
  bool reading_paused_ = false;
  EndpointStatistics published_;
  PathKeeper path_keeper_;  // measured path state, warm-start cache
  // The endpoint's counters with the path cache's (published when either changed).
  EndpointStatistics endpoint_statistics() const;
  // Writes connections whose small writes were held back to coalesce (coalesce_delay) and are due.
  void flush_coalesced(Clock::time_point now);
};

Engine::Impl::Impl(Config config)
    : config_(std::move(config)),
      carrier_(std::make_unique<TcpCarrier>(config_)),
      local_endpoint_(endpoint_name(config_, carrier_->port())),
      mailbox_(config_.window_full, {config_.window_messages, config_.window_bytes}),
      endpoint_(config_, local_endpoint_, [] { return Authenticator::make_nonce(); }),
      stats_signal_fd_(SystemCall("eventfd", ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC))),
      path_keeper_(config_) {
  loop_.add(carrier_->listen_fd(), &listen_tag_, true, false);
  loop_.add(mailbox_.wake_fd(), &wake_tag_, true, false);
  loop_.add(stats_signal_fd_.get(), &stats_tag_, true, false);
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
    // The key the connection will have (its peer's address), resolved as the dial will resolve it.
    try {
      socklen_t length = 0;
      const sockaddr_storage address = resolve(parse_host_port(peer, true), length);
      return path_keeper_.judge_before_dial(path_cache_key(address_text(address), peer));
    } catch (const std::exception&) {
      return DialJudgement::kAtHandshake;  // the dial will fail and say why; until then nothing is known of the path
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

// --- progress thread ---------------------------------------------------------------------------

void Engine::Impl::run() {
  mailbox_.publish_progress_thread(pin_current_thread(pin_plan_) + "; " +
                                   use_batch_scheduling_for_current_thread());
  bool stopping = false;
  auto turn_started = Clock::now();
  while (true) {
    const auto waiting_from = Clock::now();
    const auto deadline = next_deadline(waiting_from);
    const auto& events = loop_.wait(deadline);
    mailbox_.note_progress_wakeup();
    const auto now = Clock::now();
    // Before anything is read or judged: how long this thread watched no socket beyond what it
    // chose to (its last turn, plus any overrun of the wait). Long means it did not run (a frozen
    // or starved host, wherever the thread was), which no silence of the peer should be blamed for.
    // A deadline already past when the wait began (work due at once) is no overrun.
    Clock::duration overrun = Clock::duration::zero();
    if (deadline != Clock::time_point::max()) overrun = std::max(overrun, now - std::max(deadline, waiting_from));
    endpoint_.note_wake(now, (waiting_from - turn_started) + overrun);
    turn_started = now;
    for (const LoopEvent& event : events) {
      handle_event(event, now);
      drain_commands(now);
    }
    // Datagrams read before the IDENTIFY they travelled with: their sessions have keys now.
    if (datagrams_) datagrams_->release_held(endpoint_, endpoint_.received());
    apply_requests(now, stopping);
    if (stopping) break;
    for (auto& [peer, session] : endpoint_.sessions()) service(*session, now, reading_paused_);
    endpoint_.expire_handshakes(now);
    drain_commands(now);
    flush_coalesced(now);
    flush_datagrams();
    sweep_closed();
    for (Session* session : endpoint_.reclaimable()) {
      const std::string peer = session->peer();
      if (mailbox_.forget_unnamed(session->mailbox ? session->mailbox : mailbox_.slot_for(peer))) {
        endpoint_.erase_session(peer);
      }
    }
  }
  const auto now = Clock::now();
  endpoint_.say_goodbye(now);
  flush_datagrams();  // the ACKs owed on datagram sessions (say_goodbye)
  drain_commands(now);
  drain_after_goodbye(now + kGoodbyeDrainLimit);
  endpoint_.close_all("engine shutting down", false, now);
  sweep_closed();
  path_keeper_.save(endpoint_.sessions());
  mailbox_.publish_endpoint(endpoint_statistics());
  mailbox_.stopped();
}

void Engine::Impl::handle_event(const LoopEvent& event, Clock::time_point now) {
  if (event.tag == &listen_tag_) {
    while (auto link = carrier_->accept()) {
      Connection* connection = endpoint_.on_accepted(std::move(link), now);
      if (connection == nullptr) continue;
      try {
        loop_.add(connection->link->poll_fd(), connection, true, false);
      } catch (const SystemError&) {
        connection->link.reset();
        endpoint_.on_carrier_error(*connection, "epoll_ctl failed", now);
      }
    }
  } else if (event.tag == &wake_tag_) {
    mailbox_.drain_wake();
  } else if (event.tag == &datagram_tag_) {
    if (event.readable) {
      datagrams_->on_readable(endpoint_, endpoint_.received());  // delivered by drain_commands
    }
    if (event.writable) flush_datagrams();
  } else if (event.tag == &stats_tag_) {
    std::uint64_t value = 0;
    [[maybe_unused]] auto ignored = ::read(stats_signal_fd_.get(), &value, sizeof value);
    write_stats_file();
  } else {
    auto& connection = *static_cast<Connection*>(event.tag);
    if (connection.state == ConnectionState::kClosed) return;
    if (connection.state == ConnectionState::kConnecting) {
      if (event.writable || event.failed) endpoint_.on_connected(connection, connection.link->take_connect_error(), now);
      return;
    }
    if (event.readable) read_from(connection, now);
    if (connection.state != ConnectionState::kClosed && event.writable) flush(connection, now);
  }
}

void Engine::Impl::read_from(Connection& connection, Clock::time_point now) {
  std::string error;
  std::size_t bytes = 0;
  const IoStatus status = connection.link->read(
      connection.reader(), connection.authenticated() ? kReadBudget : kHandshakeReadBudget, bytes, error);
  endpoint_.on_read(connection, status, error, now);  // what it received is delivered by drain_commands
  if (bytes > 0 && connection.state == ConnectionState::kEstablished) connection.link->after_read();
}

void Engine::Impl::apply_requests(Clock::time_point now, bool& stopping) {
  Mailbox::Requests requests = mailbox_.take_requests();
  stopping = requests.stop;
  for (auto& fresh : requests.new_slots) endpoint_.session_for(fresh->peer, now).mailbox = fresh;
  if (requests.reset) endpoint_.close_all("reset for testing", true, now);
  // Reading is paused while the application is behind on receiving: the carrier then pushes back
  // on the sender instead of this process buffering without bound.
  if (datagrams_ && requests.reading_paused != reading_paused_) {
    // The socket's buffer fills and drops: the peer's ARQ re-sends once reading resumes.
    loop_.modify(datagrams_->fd(), &datagram_tag_, !requests.reading_paused, datagrams_blocked_);
  }
  reading_paused_ = requests.reading_paused;
  for (auto& [raw, connection] : endpoint_.connections()) {
    if (connection->state != ConnectionState::kClosed && connection->link && connection->read_paused != reading_paused_) {
      connection->read_paused = reading_paused_;
      set_interest(*connection);
    }
  }
}

MailboxSlot& Engine::Impl::slot(Session& session) {
  if (!session.mailbox) session.mailbox = mailbox_.slot_for(session.peer());
  return *session.mailbox;
}

void Engine::Impl::service(Session& session, Clock::time_point now, bool reading_paused) {
  if (session.failed()) return;
  if (!session.may_dial() && slot(session).named_by_application.load(std::memory_order_relaxed)) {
    session.allow_dialling();
  }
  if (DatagramChannel* channel = session.datagram()) {
    Arq& arq = session.arq();
    mailbox_.move_outbox(
        slot(session), [&](std::size_t bytes) { return channel->can_accept(arq, bytes); },
        [&](ArqPayload packed) { channel->submit(arq, std::move(packed)); });
  } else if (session.carrier_agreed() || config_.carrier != CarrierChoice::kAuto || session.tcp_certain()) {
    // auto: messages wait in the outbox until the ends agreed how they travel (whole, or in units),
    // unless the session is TCP whatever the peer says (the dialler chose tcp: carrier_choice.h).
    mailbox_.move_outbox(slot(session), session.arq());
  }
  endpoint_.service(session, now, reading_paused);
  if (session.failed()) return;  // published by drain_commands
  SessionStatistics& counters = session.counters();
  if (Connection* first = session.streams().first();
      first && first->link &&
      (now - session.tcp_info_refreshed >= session.path().sample_interval() || PathKeeper::warm_start_due(session))) {
    counters.tcp = first->link->window_info();
    path_keeper_.refresh(session);
    describe_stream_congestion(session);
    session.tcp_info_refreshed = now;
  }
  counters.arq = session.arq().stats();
  if (const DatagramChannel* channel = session.datagram()) counters.datagram = channel->statistics();
  counters.spill_streams = session.streams().spill_established();
  counters.streams = session.streams().established() - counters.spill_streams;
  counters.connected = session.streams().established() > 0;
  mailbox_.publish(slot(session), counters);
}

void Engine::Impl::drain_commands(Clock::time_point now) {
  for (Connection* connection : endpoint_.take_dials()) {
    if (connection->state == ConnectionState::kClosed) continue;
    try {
      connection->link = carrier_->dial(connection->peer_endpoint, connection->stream);
      connection->writable_interest = true;
      loop_.add(connection->link->poll_fd(), connection, true, true);
    } catch (const std::exception& e) {
      connection->link.reset();
      endpoint_.on_dial_failed(*connection, e.what(), now);
    }
  }
  for (Connection* connection : endpoint_.take_retunes()) {
    if (connection->state != ConnectionState::kClosed && connection->link) connection->link->use_stream(connection->stream);
  }
  for (Connection* connection : endpoint_.take_flushes()) flush(*connection, now);
  for (auto& failure : endpoint_.take_failures()) {
    Session& session = *failure.session;
    mailbox_.fail(slot(session), failure.reason, session.arq().stats().in_flight_messages, session.counters());
  }
  // After the failures: the replaced session's, if any, is reported on the old process's slot.
  for (Session* fresh : endpoint_.take_replacements()) fresh->mailbox = mailbox_.slot_for_newcomer(fresh->peer());
  endpoint_.forget_replaced();
  // Only now, after the replacements: a newcomer's first messages (0.5-RTT data read with its
  // IDENTIFY) would else reach the application while the endpoint's slot is still the failed one
  // of the process before it, and the application's answer would go to that slot.
  mailbox_.deliver(endpoint_.received());
}

void Engine::Impl::flush(Connection& connection, Clock::time_point now) {
  if (connection.state == ConnectionState::kClosed || !connection.link) return;
  if (hold_small_write(connection, now)) {  // coalescing while the window fills (path_keeper.h)
    if (connection.writable_interest) {      // the deadline writes it: no EPOLLOUT spinning meanwhile
      connection.writable_interest = false;
      set_interest(connection);
    }
    return;
  }
  if (connection.pending_output() > 0) {
    std::string error;
    std::size_t written = 0;
    const IoStatus status = connection.link->write(connection.unsent(), connection.state == ConnectionState::kEstablished,
                                                   written, error);
    connection.consume(written);
    if (status == IoStatus::kError) {
      endpoint_.on_carrier_error(connection, error, now);
      return;
    }
  }
  const bool want = connection.pending_output() > 0 || connection.state == ConnectionState::kConnecting;
  if (want != connection.writable_interest) {
    connection.writable_interest = want;
    set_interest(connection);
  }
}

void Engine::Impl::flush_datagrams() {
  if (!datagrams_) return;
  const bool blocked = !datagrams_->flush(endpoint_);
  if (blocked != datagrams_blocked_) {
    datagrams_blocked_ = blocked;
    loop_.modify(datagrams_->fd(), &datagram_tag_, !reading_paused_, blocked);
  }
}

void Engine::Impl::set_interest(Connection& connection) {
  if (!connection.link || connection.state == ConnectionState::kClosed) return;
  loop_.modify(connection.link->poll_fd(), &connection, !connection.read_paused, connection.writable_interest);
}

void Engine::Impl::sweep_closed() {
  for (Connection* connection : endpoint_.take_closed()) {
    if (connection->link) {
      if (connection->flush_before_close && connection->pending_output() > 0) {
        std::string ignored;
        std::size_t written = 0;
        connection->link->write(connection->unsent(), false, written, ignored);
      }
      if (connection->abort_on_close) connection->link->abort_on_close();
      loop_.remove(connection->link->poll_fd());
      connection->link.reset();
    }
    endpoint_.erase(connection);
  }
  const EndpointStatistics statistics = endpoint_statistics();
  if (statistics != published_) {
    published_ = statistics;
    mailbox_.publish_endpoint(statistics);
  }
}

// The goodbye's close. Closing a socket at once after the goodbye lost the last ACK (ASan runs of
// engine_loopback_test's newcomer case, a third of them): the peer, before reading our ACK and goodbye, still
// wrote to us (a re-send, a keep-alive); our closed socket answered with RST, the peer's next send
// failed and its engine closed that connection without reading the ACK queued in front of the
// goodbye. So each established connection writes what it holds, ends its sending (FIN after the
// goodbye), and reads and drops what still comes until the peer closed its end (it does on reading
// the goodbye), or until `deadline`. Only these descriptors are watched: the listener, the wake-up
// and the datagram socket stay out of this wait (nothing more is accepted or sent).
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

void Engine::Impl::flush_coalesced(Clock::time_point now) {
  for (auto& [raw, connection] : endpoint_.connections()) {
    if (connection->coalesce_until != Clock::time_point{} && now >= connection->coalesce_until) flush(*connection, now);
  }
}

Clock::time_point Engine::Impl::next_deadline(Clock::time_point now) const {
  Clock::time_point wake = endpoint_.next_deadline(now);
  for (const auto& [raw, connection] : endpoint_.connections()) {
    if (connection->coalesce_until != Clock::time_point{}) wake = std::min(wake, connection->coalesce_until);
  }
  for (const auto& [peer, session] : endpoint_.sessions()) {
    if (!session->failed() && session->streams().first() != nullptr) {
      wake = std::min(wake, session->tcp_info_refreshed + session->path().sample_interval());
    }
  }
  return wake;
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
