#include "engine.h"

#include <sched.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "authenticator.h"
#include "connection.h"
#include "frame_cipher.h"
#include "session.h"
#include "system_call.h"
#include "tcp_socket.h"
#include "thread_pinning.h"

namespace lp {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// The progress thread wakes at least this often for timers (keep-alives, dead peers, dials);
// precise ARQ deadlines (delayed ACKs) shorten the wait further.
constexpr milliseconds kHousekeepingInterval{50};
// Stop encoding new DATA frames for a connection while this much output is waiting for the
// socket: the ARQ keeps the messages, so memory stays bounded by the window.
constexpr std::size_t kOutputHighWater = 1u << 20;
// Bytes read from one connection before the others get a turn.
constexpr std::size_t kReadBudget = 4u << 20;
// Accepted connections that have not authenticated yet: beyond this, new ones are refused.
constexpr std::size_t kMaxHandshakingConnections = 64;
// Bytes read from a connection that has not authenticated, per turn: the largest handshake frames
// (HELLO, AUTH and a sealed IDENTIFY) fit, so an unauthenticated peer makes us buffer no more.
constexpr std::size_t kHandshakeReadBudget = 1024;
// TCP_INFO is read for the statistics at most this often.
constexpr milliseconds kTcpInfoInterval{500};
constexpr int kMaxEpollEvents = 64;

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

void signal_eventfd(int fd) {
  const std::uint64_t one = 1;
  [[maybe_unused]] auto ignored = ::write(fd, &one, sizeof one);
}

void drain_eventfd(int fd) {
  std::uint64_t value = 0;
  [[maybe_unused]] auto ignored = ::read(fd, &value, sizeof value);
}

std::string machine_hostname() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

ArqConfig arq_config_from(const Config& config) {
  ArqConfig arq;
  arq.mode = ArqMode::kReliableCarrier;
  arq.send_window_messages = static_cast<std::uint32_t>(config.window_messages);
  arq.send_window_bytes = config.window_bytes;
  arq.receive_window_messages = static_cast<std::uint32_t>(config.window_messages);
  arq.receive_window_bytes = config.window_bytes;
  arq.initial_rto = config.rto_initial;
  arq.min_rto = config.rto_min;
  arq.max_rto = config.rto_max;
  arq.backoff_factor = config.rto_backoff;
  arq.ack_delay = config.ack_delay;
  arq.ack_every_messages = static_cast<std::uint32_t>(config.ack_every);
  return arq;
}

AckFrame to_wire(const ArqAck& ack) {
  AckFrame frame{ack.cumulative, ack.window_messages, {}};
  for (const auto& range : ack.sack) frame.ranges.push_back({range.begin, range.end});
  return frame;
}

ArqAck from_wire(const AckFrame& frame) {
  ArqAck ack;
  ack.cumulative = frame.cumulative;
  ack.window_messages = frame.window_messages;
  for (const auto& range : frame.ranges) ack.sack.push_back({range.begin, range.end});
  return ack;
}

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out + "\"";
}

double to_ms(ArqDuration d) { return static_cast<double>(d.count()) / 1000.0; }

}  // namespace

// ---------------------------------------------------------------------------------------------

class Engine::Impl {
 public:
  explicit Impl(Config config);
  ~Impl();

  void start();
  void stop();

  std::string local_endpoint() const { return local_endpoint_; }
  void send(const std::string& peer, Message message);
  void deliver_to_self(Message message);
  std::optional<Message> try_receive();
  int receive_event_fd() const { return receive_fd_.get(); }
  bool wait_receive(milliseconds timeout);
  bool flush(milliseconds timeout);
  std::vector<PeerFailure> take_peer_failures();
  std::string stats_json() const;
  void request_reset();
  void write_stats_file() const;
  const Config& config() const { return config_; }

 private:
  // Tags for epoll events that are not connections.
  enum class Source { kListen, kWake, kStatsSignal };

  // --- progress thread ---
  void run();
  void handle_connection_event(Connection& connection, std::uint32_t events, Clock::time_point now);
  void accept_connections(Clock::time_point now);
  void read_from(Connection& connection, Clock::time_point now);
  void handle_frame(Connection& connection, const FrameView& frame, Clock::time_point now);
  void handle_handshake_frame(Connection& connection, const FrameView& frame, Clock::time_point now);
  void handle_session_frame(Connection& connection, const FrameView& frame, Clock::time_point now);
  // Checks the peer's AUTH proof; a wrong one is counted, answered with CLOSE and closed.
  bool proof_accepted(Connection& connection, const FrameView& frame, const std::vector<std::byte>& expected,
                      Clock::time_point now);
  void establish(Connection& connection, Clock::time_point now);
  void dial(Session& session, std::size_t stream, Clock::time_point now);
  void finish_connect(Connection& connection, Clock::time_point now);
  void service(Session& session, Clock::time_point now);
  void pump(Session& session, Clock::time_point now);
  Connection* least_loaded_stream(const Session& session) const;
  // With LONGPIPE_SMALL_MESSAGE: stream 0 for small messages, the next of the others for large
  // ones (even if its output is full); null when no such stream is up (the caller uses any).
  Connection* stream_by_size(Session& session, std::size_t packed_bytes) const;
  bool is_stream_of(const Connection& connection) const;
  void flush_output(Connection& connection);
  void close_connection(Connection& connection, const std::string& why, Clock::time_point now);
  void send_close(Connection& connection, CloseReason reason, const std::string& text, Clock::time_point now);
  void fail_session(Session& session, const std::string& reason);
  void describe_stream_congestion(Session& session);
  void note_malformed(Connection& connection, const std::string& what, Clock::time_point now);
  void note_rejected(Connection& connection);
  void note_refused_frame(Connection& connection, Clock::time_point now);
  // Our sealed IDENTIFY for the connection's session (its first sealed frame).
  void send_identity(Connection& connection, const std::string& peer);
  // Binds the session to `token` (first connection) or checks it; false: another identity.
  static bool identity_matches(Session& session, const std::vector<std::byte>& token);
  void reclaim_sessions();
  Session& session_for(const std::string& peer, Clock::time_point now);
  std::unique_ptr<Session> make_session(std::shared_ptr<SessionShared> shared, Clock::time_point now) const;
  void exchange_with_application(Clock::time_point now, bool& stopping);
  void deliver_received(Session& session, std::vector<Message>& batch);
  void set_interest(Connection& connection);
  void reset_all_connections(Clock::time_point now);
  void say_goodbye(Clock::time_point now);
  void sweep_closed();
  int next_timeout_ms(Clock::time_point now) const;

  Config config_;
  Authenticator authenticator_;
  ArqConfig arq_config_;
  std::string local_endpoint_;
  SocketTuning listen_tuning_;
  FileDescriptor listen_fd_;
  FileDescriptor epoll_fd_;
  FileDescriptor wake_fd_;          // application threads -> progress thread
  FileDescriptor receive_fd_;       // progress thread -> application: messages waiting
  FileDescriptor stats_signal_fd_;  // SIGUSR1 -> progress thread
  int application_cpu_ = -1;
  std::thread thread_;
  Source listen_tag_ = Source::kListen, wake_tag_ = Source::kWake, stats_tag_ = Source::kStatsSignal;

  // --- shared with application threads, guarded by mutex_ ---
  mutable std::mutex mutex_;
  std::condition_variable space_cv_;    // room in an outbox, or a failure
  std::condition_variable receive_cv_;  // a message arrived
  std::condition_variable flushed_cv_;  // acknowledgements arrived, or a failure
  std::map<std::string, std::shared_ptr<SessionShared>> shared_sessions_;
  std::vector<std::shared_ptr<SessionShared>> new_sessions_;
  std::deque<Message> receive_queue_;
  std::size_t receive_bytes_ = 0;
  // The receive queue is bounded like a send window (LONGPIPE_WINDOW_MESSAGES / _BYTES): when the
  // application falls that far behind, reading stops and TCP pushes back on the sending session,
  // whose own window policy then decides (block, fail or drop) for that one peer. Callers hold mutex_.
  bool receive_backlog_full() const {
    return receive_queue_.size() >= config_.window_messages || receive_bytes_ >= config_.window_bytes;
  }
  bool receive_backlog_below_half() const {
    return receive_queue_.size() < config_.window_messages / 2 + 1 && receive_bytes_ < config_.window_bytes / 2;
  }
  std::vector<PeerFailure> failures_;
  bool stopping_ = false;
  bool reset_requested_ = false;
  std::string pinning_;
  std::uint64_t engine_rejected_ = 0;   // connections that failed before naming a session
  std::uint64_t engine_malformed_ = 0;
  std::uint64_t accepted_ = 0;
  std::uint64_t refused_busy_ = 0;
  std::uint64_t engine_refused_frames_ = 0;
  std::uint64_t engine_identity_refused_ = 0;
  // Set by the application thread that signals wake_fd_, cleared by the progress thread after it
  // drained wake_fd_: one eventfd write per burst instead of one per message.
  std::atomic<bool> wake_pending_{false};
  std::atomic<bool> reading_paused_{false};

  // --- progress thread only ---
  std::map<std::string, std::unique_ptr<Session>> sessions_;
  std::map<Connection*, std::unique_ptr<Connection>> connections_;
  std::vector<Connection*> closed_;
  std::size_t handshaking_accepted_ = 0;
  std::uint64_t local_rejected_ = 0, local_malformed_ = 0, local_accepted_ = 0, local_refused_busy_ = 0;
  std::uint64_t local_refused_frames_ = 0, local_identity_refused_ = 0;
  Protection wanted_protection_;
};

Engine::Impl::Impl(Config config)
    : config_(std::move(config)),
      authenticator_(config_.key),
      arq_config_(arq_config_from(config_)),
      wanted_protection_(config_.encryption ? Protection::kEncrypt : Protection::kIntegrityOnly) {
  std::uint16_t port = 0;
  listen_fd_ = listen_tuned(config_, listen_tuning_, port);
  const HostPort listen = parse_host_port(config_.listen, false);
  local_endpoint_ = (listen.host.empty() || listen.host == "0.0.0.0" ? machine_hostname() : listen.host) + ":" +
                    std::to_string(port);
  epoll_fd_ = FileDescriptor(SystemCall("epoll_create1", ::epoll_create1(EPOLL_CLOEXEC)));
  wake_fd_ = FileDescriptor(SystemCall("eventfd", ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)));
  receive_fd_ = FileDescriptor(SystemCall("eventfd", ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)));
  stats_signal_fd_ = FileDescriptor(SystemCall("eventfd", ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)));
  auto add = [&](int fd, void* tag) {
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.ptr = tag;
    SystemCall("epoll_ctl ADD", ::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_ADD, fd, &event));
  };
  add(listen_fd_.get(), &listen_tag_);
  add(wake_fd_.get(), &wake_tag_);
  add(stats_signal_fd_.get(), &stats_tag_);
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
}

Engine::Impl::~Impl() {
  if (g_stats_signal_fd.load() == stats_signal_fd_.get()) g_stats_signal_fd.store(-1);
}

void Engine::Impl::start() { thread_ = std::thread([this] { run(); }); }

void Engine::Impl::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  signal_eventfd(wake_fd_.get());
  if (thread_.joinable()) thread_.join();
}

// --- application side ------------------------------------------------------------------------

void Engine::Impl::send(const std::string& peer, Message message) {
  if (message.body.size() > config_.max_message) {
    throw std::invalid_argument("message of " + std::to_string(message.body.size()) +
                                " bytes exceeds LONGPIPE_MAX_MESSAGE (" + std::to_string(config_.max_message) + ")");
  }
  parse_host_port(peer, true);  // throws std::invalid_argument with the endpoint text
  if (peer == local_endpoint_) {
    deliver_to_self(std::move(message));
    return;
  }
  QueuedMessage queued{{}, message.body.size()};
  queued.packed = pack_message(std::move(message));

  std::unique_lock lock(mutex_);
  auto& shared = shared_sessions_[peer];
  bool created = false;
  if (!shared) {
    shared = std::make_shared<SessionShared>(peer);
    new_sessions_.push_back(shared);
    created = true;
  }
  shared->named_by_application = true;
  auto full = [&] {
    return !shared->outbox.empty() && (shared->outbox.size() >= config_.window_messages ||
                                       shared->outbox_bytes + queued.body_bytes > config_.window_bytes);
  };
  if (shared->failure) throw PeerFailed("peer " + peer + " failed: " + *shared->failure);
  if (full()) {
    switch (config_.window_full) {
      case WindowFullPolicy::kBlock:
        space_cv_.wait(lock, [&] { return !full() || shared->failure || stopping_; });
        if (shared->failure) throw PeerFailed("peer " + peer + " failed: " + *shared->failure);
        break;
      case WindowFullPolicy::kFail:
        throw WindowFull("send window to " + peer + " is full (" + std::to_string(shared->outbox.size()) +
                         " messages queued; LONGPIPE_WINDOW_FULL=fail)");
      case WindowFullPolicy::kDropOldest:
        while (full()) {
          shared->outbox_bytes -= shared->outbox.front().body_bytes;
          shared->outbox.pop_front();
          ++shared->statistics.dropped_by_policy;
        }
        break;
      case WindowFullPolicy::kKeepLatest:
        shared->statistics.dropped_by_policy += shared->outbox.size();
        shared->outbox.clear();
        shared->outbox_bytes = 0;
        break;
    }
  }
  shared->outbox_bytes += queued.body_bytes;
  shared->outbox.push_back(std::move(queued));
  const bool first_in_queue = shared->outbox.size() == 1;
  lock.unlock();
  // One wake-up per burst: the progress thread drains the whole outbox when it runs.
  if ((created || first_in_queue) && !wake_pending_.exchange(true)) signal_eventfd(wake_fd_.get());
}

// A message to our own endpoint needs no session (a connection to ourselves would be both the
// dialler and the acceptor of one session): it goes straight to the receive queue, in order.
void Engine::Impl::deliver_to_self(Message message) {
  message.peer_endpoint = local_endpoint_;
  std::lock_guard lock(mutex_);
  const bool was_empty = receive_queue_.empty();
  receive_bytes_ += message.body.size();
  receive_queue_.push_back(std::move(message));
  if (was_empty) signal_eventfd(receive_fd_.get());
  receive_cv_.notify_all();
}

std::optional<Message> Engine::Impl::try_receive() {
  std::lock_guard lock(mutex_);
  if (receive_queue_.empty()) return std::nullopt;
  Message message = std::move(receive_queue_.front());
  receive_queue_.pop_front();
  receive_bytes_ -= message.body.size();
  if (receive_queue_.empty()) drain_eventfd(receive_fd_.get());
  if (reading_paused_.load() && receive_backlog_below_half() && !wake_pending_.exchange(true)) {
    signal_eventfd(wake_fd_.get());
  }
  return message;
}

bool Engine::Impl::wait_receive(milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return receive_cv_.wait_for(lock, timeout, [&] { return !receive_queue_.empty(); });
}

bool Engine::Impl::flush(milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return flushed_cv_.wait_for(lock, timeout, [&] {
    for (const auto& [peer, shared] : shared_sessions_) {
      if (!shared->failure && (!shared->outbox.empty() || shared->unacknowledged > 0)) return false;
    }
    return true;
  });
}

std::vector<PeerFailure> Engine::Impl::take_peer_failures() {
  std::lock_guard lock(mutex_);
  return std::exchange(failures_, {});
}

void Engine::Impl::request_reset() {
  {
    std::lock_guard lock(mutex_);
    reset_requested_ = true;
  }
  signal_eventfd(wake_fd_.get());
}

std::string Engine::Impl::stats_json() const {
  std::lock_guard lock(mutex_);
  std::ostringstream out;
  out << "{\"local_endpoint\":" << json_string(local_endpoint_) << ",\"progress_thread\":" << json_string(pinning_)
      << ",\"listen_socket\":{\"requested_receive_buffer\":" << listen_tuning_.requested_receive
      << ",\"requested_send_buffer\":" << listen_tuning_.requested_send
      << ",\"send_buffer\":" << listen_tuning_.send_buffer << ",\"receive_buffer\":" << listen_tuning_.receive_buffer
      << ",\"forced\":" << (listen_tuning_.forced ? "true" : "false")
      << ",\"congestion\":" << json_string(listen_tuning_.congestion) << ",\"note\":" << json_string(listen_tuning_.note)
      << "},\"accepted_connections\":" << accepted_ << ",\"rejected_connections\":" << engine_rejected_
      << ",\"malformed_frames\":" << engine_malformed_ << ",\"refused_busy\":" << refused_busy_
      << ",\"refused_frames\":" << engine_refused_frames_ << ",\"identity_refused\":" << engine_identity_refused_
      << ",\"receive_queue_messages\":" << receive_queue_.size() << ",\"sessions\":[";
  bool first = true;
  for (const auto& [peer, shared] : shared_sessions_) {
    const SessionStatistics& s = shared->statistics;
    const ArqStats& a = s.arq;
    out << (first ? "" : ",") << "{\"peer\":" << json_string(peer) << ",\"connected\":" << (s.connected ? "true" : "false")
        << ",\"failure\":" << (shared->failure ? json_string(*shared->failure) : "null")
        << ",\"streams\":" << s.streams << ",\"messages_sent\":" << a.messages_sent << ",\"bytes_sent\":" << a.bytes_sent
        << ",\"messages_received\":" << s.messages_received << ",\"bytes_received\":" << s.bytes_received
        << ",\"messages_retransmitted\":" << a.messages_retransmitted
        << ",\"bytes_retransmitted\":" << a.bytes_retransmitted << ",\"messages_acked\":" << a.messages_acked
        << ",\"duplicates_dropped\":" << a.duplicates_dropped << ",\"rtt_ms\":" << to_ms(a.srtt)
        << ",\"rttvar_ms\":" << to_ms(a.rttvar) << ",\"rtt_samples\":" << a.rtt_samples
        << ",\"in_flight_messages\":" << a.in_flight_messages << ",\"in_flight_bytes\":" << a.in_flight_bytes
        << ",\"window_messages\":" << a.send_window_messages << ",\"window_bytes\":" << a.send_window_bytes
        << ",\"peer_window_messages\":" << a.peer_window_messages << ",\"queued_messages\":" << shared->outbox.size()
        << ",\"dropped_by_policy\":" << s.dropped_by_policy << ",\"connections_established\":"
        << s.connections_established << ",\"reconnects\":" << s.reconnects << ",\"carrier_resets\":" << a.carrier_resets
        << ",\"connect_failures\":" << s.connect_failures << ",\"rejected_connections\":" << s.rejected_connections
        << ",\"malformed_frames\":" << s.malformed_frames << ",\"refused_frames\":" << s.refused_frames
        << ",\"identity_refused\":" << s.identity_refused << ",\"protection\":" << json_string(s.protection)
        << ",\"tcp\":{\"snd_wscale\":" << s.tcp.snd_wscale
        << ",\"rcv_wscale\":" << s.tcp.rcv_wscale << ",\"snd_cwnd\":" << s.tcp.snd_cwnd
        << ",\"snd_mss\":" << s.tcp.snd_mss << ",\"rtt_ms\":" << s.tcp.rtt_us / 1000.0
        << ",\"total_retrans\":" << s.tcp.total_retrans << ",\"send_buffer\":" << s.tuning.send_buffer
        << ",\"receive_buffer\":" << s.tuning.receive_buffer << ",\"congestion\":" << json_string(s.tuning.congestion)
        << ",\"note\":" << json_string(s.tuning.note) << "}}";
    first = false;
  }
  out << "]}";
  return out.str();
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
  const std::string pinning =
      pin_current_thread(config_.pin, application_cpu_) + "; " + use_batch_scheduling_for_current_thread();
  {
    std::lock_guard lock(mutex_);
    pinning_ = pinning;
  }
  epoll_event events[kMaxEpollEvents];
  bool stopping = false;
  while (true) {
    const int timeout = next_timeout_ms(Clock::now());
    const int count = ::epoll_wait(epoll_fd_.get(), events, kMaxEpollEvents, timeout);
    const auto now = Clock::now();
    for (int i = 0; i < count; ++i) {
      void* tag = events[i].data.ptr;
      if (tag == &listen_tag_) {
        accept_connections(now);
      } else if (tag == &wake_tag_) {
        // Drain first, then clear: the other order can swallow the signal of a send() that set
        // the flag in between, leaving the flag set with nothing to clear it, and every later
        // send() would then skip its wake-up (the outbox only moving when the socket or a timer
        // woke this thread).
        drain_eventfd(wake_fd_.get());
        wake_pending_.store(false);
      } else if (tag == &stats_tag_) {
        drain_eventfd(stats_signal_fd_.get());
        write_stats_file();
      } else {
        auto* connection = static_cast<Connection*>(tag);
        if (connection->state != ConnectionState::kClosed) handle_connection_event(*connection, events[i].events, now);
      }
    }
    exchange_with_application(now, stopping);
    if (stopping) break;
    for (auto& [peer, session] : sessions_) service(*session, now);
    reclaim_sessions();
    for (auto& [raw, connection] : connections_) {
      if (connection->state != ConnectionState::kEstablished && connection->state != ConnectionState::kClosed &&
          now >= connection->deadline) {
        close_connection(*connection, "connect or authentication timed out", now);
      }
    }
    sweep_closed();
  }
  say_goodbye(Clock::now());
}

int Engine::Impl::next_timeout_ms(Clock::time_point now) const {
  Clock::time_point wake = now + kHousekeepingInterval;
  for (const auto& [peer, session] : sessions_) {
    if (session->first_stream() == nullptr) continue;  // nothing can be sent without a connection
    if (auto deadline = session->arq.next_deadline()) wake = std::min(wake, *deadline);
  }
  const auto wait = std::chrono::ceil<milliseconds>(wake - now).count();
  return static_cast<int>(std::max<long long>(0, wait));
}

void Engine::Impl::exchange_with_application(Clock::time_point now, bool& stopping) {
  std::vector<std::shared_ptr<SessionShared>> fresh;
  bool reset = false;
  {
    std::lock_guard lock(mutex_);
    stopping = stopping_;
    reset = std::exchange(reset_requested_, false);
    fresh.swap(new_sessions_);
    reading_paused_.store(receive_backlog_full());
  }
  for (auto& shared : fresh) {
    auto& slot = sessions_[shared->peer];
    if (!slot) {
      slot = make_session(shared, now);
    } else {
      slot->shared = shared;  // the progress thread created it first (accepted connection)
    }
  }
  if (reset) reset_all_connections(now);
  // Reading is paused while the application is behind on receiving: TCP then pushes back on the
  // sender instead of this process buffering without bound.
  const bool paused = reading_paused_.load();
  for (auto& [raw, connection] : connections_) {
    if (connection->state != ConnectionState::kClosed && connection->read_paused != paused) {
      connection->read_paused = paused;
      set_interest(*connection);
    }
  }
}

void Engine::Impl::set_interest(Connection& connection) {
  epoll_event event{};
  event.events = (connection.read_paused ? 0u : EPOLLIN) | (connection.writable_interest ? EPOLLOUT : 0u);
  event.data.ptr = &connection;
  ::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_MOD, connection.fd(), &event);
}

Session& Engine::Impl::session_for(const std::string& peer, Clock::time_point now) {
  auto& slot = sessions_[peer];
  if (!slot) {
    std::shared_ptr<SessionShared> shared;
    {
      std::lock_guard lock(mutex_);
      auto& entry = shared_sessions_[peer];
      if (!entry) entry = std::make_shared<SessionShared>(peer);
      shared = entry;
    }
    slot = make_session(shared, now);
  }
  return *slot;
}

std::unique_ptr<Session> Engine::Impl::make_session(std::shared_ptr<SessionShared> shared,
                                                    Clock::time_point now) const {
  return std::make_unique<Session>(std::move(shared), arq_config_, config_.streams, now, config_.connect_retry_initial);
}

bool Engine::Impl::is_stream_of(const Connection& connection) const {
  const Session* session = connection.session;
  return session != nullptr && connection.stream < session->streams.size() &&
         session->streams[connection.stream] == &connection;
}

void Engine::Impl::accept_connections(Clock::time_point now) {
  while (true) {
    const int fd = ::accept4(listen_fd_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN, or a transient error (EMFILE...): try again on the next event
    FileDescriptor owned(fd);
    if (handshaking_accepted_ >= kMaxHandshakingConnections) {
      ++local_refused_busy_;
      continue;  // closed: too many unauthenticated connections at once
    }
    auto connection = std::make_unique<Connection>(std::move(owned), false, now);
    try {
      tune_accepted_socket(connection->fd(), config_, connection->tuning);
    } catch (const SystemError&) {
      continue;
    }
    connection->state = ConnectionState::kAwaitHello;
    connection->deadline = now + config_.connect_timeout;
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.ptr = connection.get();
    if (::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_ADD, connection->fd(), &event) != 0) continue;
    ++local_accepted_;
    ++handshaking_accepted_;
    Connection* raw = connection.get();
    connections_[raw] = std::move(connection);
  }
}

void Engine::Impl::dial(Session& session, std::size_t stream, Clock::time_point now) {
  try {
    socklen_t length = 0;
    const sockaddr_storage address = resolve(parse_host_port(session.peer(), true), length);
    SocketTuning tuning;
    FileDescriptor fd = make_tuned_tcp_socket(address.ss_family, config_, stream, tuning);
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), length) != 0 && errno != EINPROGRESS) {
      throw SystemError("connect to " + session.peer(), errno);
    }
    auto connection = std::make_unique<Connection>(std::move(fd), true, now);
    connection->tuning = tuning;
    connection->state = ConnectionState::kConnecting;
    connection->deadline = now + config_.connect_timeout;
    connection->peer_endpoint = session.peer();
    connection->session = &session;
    connection->stream = stream;
    connection->writable_interest = true;
    epoll_event event{};
    event.events = EPOLLIN | EPOLLOUT;
    event.data.ptr = connection.get();
    SystemCall("epoll_ctl ADD", ::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_ADD, connection->fd(), &event));
    session.dialling[stream] = connection.get();
    Connection* raw = connection.get();
    connections_[raw] = std::move(connection);
  } catch (const std::exception& e) {
    session.last_error = e.what();
    ++session.counters.connect_failures;
  }
}

void Engine::Impl::finish_connect(Connection& connection, Clock::time_point now) {
  const int error = take_socket_error(connection.fd());
  if (error != 0) {
    close_connection(connection, std::string("connect: ") + std::strerror(error), now);
    return;
  }
  connection.client_nonce = Authenticator::make_nonce();
  encode_hello(connection.output(), connection.client_nonce, connection.stream, wanted_protection_, local_endpoint_);
  connection.state = ConnectionState::kAwaitChallenge;
  flush_output(connection);
}

void Engine::Impl::handle_connection_event(Connection& connection, std::uint32_t events, Clock::time_point now) {
  if (connection.state == ConnectionState::kConnecting) {
    if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) finish_connect(connection, now);
    return;
  }
  if (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) read_from(connection, now);
  if (connection.state != ConnectionState::kClosed && (events & EPOLLOUT)) flush_output(connection);
}

void Engine::Impl::read_from(Connection& connection, Clock::time_point now) {
  std::string error;
  std::size_t bytes = 0;
  const IoStatus status =
      connection.read_available(connection.authenticated() ? kReadBudget : kHandshakeReadBudget, error, bytes);
  std::vector<Message> batch;
  // What the connection's frames gave its session is delivered even if a later frame of the same
  // read closes the connection (no other read might come for that session).
  Session* receiving = nullptr;
  try {
    while (connection.state != ConnectionState::kClosed) {
      auto frame = connection.reader().next();
      if (!frame) break;
      handle_frame(connection, *frame, now);
      if (connection.session != nullptr) receiving = connection.session;
    }
  } catch (const std::exception& e) {  // MalformedFrame, or a bad endpoint in HELLO
    note_malformed(connection, e.what(), now);
  }
  if (receiving != nullptr) deliver_received(*receiving, batch);
  if (!batch.empty()) {
    std::lock_guard lock(mutex_);
    const bool was_empty = receive_queue_.empty();
    for (auto& message : batch) {
      receive_bytes_ += message.body.size();
      receive_queue_.push_back(std::move(message));
    }
    if (was_empty) signal_eventfd(receive_fd_.get());
    receive_cv_.notify_all();
  }
  if (connection.state == ConnectionState::kClosed) return;
  if (status == IoStatus::kEndOfStream) {
    if (connection.reader().has_partial_frame()) {
      note_malformed(connection, "stream ended inside a frame (truncated frame)", now);
    } else {
      close_connection(connection, "connection closed by peer", now);
    }
    return;
  }
  if (status == IoStatus::kError) {
    close_connection(connection, error, now);
    return;
  }
  if (bytes > 0 && connection.state == ConnectionState::kEstablished) rearm_quick_ack(connection.fd());
  if (is_stream_of(connection)) pump(*connection.session, now);  // the ACK for what was read goes out at once
}

void Engine::Impl::deliver_received(Session& session, std::vector<Message>& batch) {
  while (auto delivery = session.arq.receive()) {
    Message message = unpack_message(std::move(delivery->payload));
    message.peer_endpoint = session.peer();
    ++session.counters.messages_received;
    session.counters.bytes_received += message.body.size();
    batch.push_back(std::move(message));
  }
}

void Engine::Impl::handle_frame(Connection& connection, const FrameView& frame, Clock::time_point now) {
  if (!connection.open(frame)) {
    note_refused_frame(connection, now);
    return;
  }
  if (connection.state == ConnectionState::kEstablished) {
    // Only authenticated frames are signs of the peer's life.
    if (connection.session != nullptr) connection.session->last_heard = now;
    handle_session_frame(connection, frame, now);
  } else {
    handle_handshake_frame(connection, frame, now);
  }
}

void Engine::Impl::handle_handshake_frame(Connection& connection, const FrameView& frame, Clock::time_point now) {
  if (frame.type == FrameType::kClose) {
    // Unauthenticated (or not yet proven to come from the session's peer): it ends this attempt
    // only. The session keeps redialling and fails, if at all, after LONGPIPE_DEAD_PEER_MS.
    const CloseFrame close = decode_close(frame.payload);
    std::string why = "peer closed during the handshake: " + close.text;
    if (close.reason == CloseReason::kAuthFailed) {
      note_rejected(connection);
      why = "refused by the peer: authentication failed (is LONGPIPE_KEY the same?)";
    } else if (close.reason == CloseReason::kIdentityRefused) {
      why = "refused by the peer: it holds a session for this endpoint with another process";
    }
    close_connection(connection, why, now);
    return;
  }
  auto expect = [&](FrameType type) {
    if (frame.type != type) {
      throw MalformedFrame(std::string("expected ") + frame_type_name(type) + " during the handshake, got " +
                           frame_type_name(frame.type));
    }
  };
  auto derive_keys = [&] {
    connection.set_traffic_keys(derive_traffic_keys(config_.key, connection.client_nonce, connection.server_nonce,
                                                    connection.protection()),
                                connection.protection());
  };
  switch (connection.state) {
    case ConnectionState::kAwaitHello: {
      expect(FrameType::kHello);
      HelloFrame hello = decode_hello(frame.payload);
      parse_host_port(hello.endpoint, true);
      connection.peer_endpoint = hello.endpoint;
      connection.stream = hello.stream;
      if (hello.stream != 0) choose_congestion(connection.fd(), config_.congestion_for_stream(hello.stream), connection.tuning);
      connection.client_nonce = std::move(hello.nonce);
      connection.server_nonce = Authenticator::make_nonce();
      connection.set_traffic_keys({}, stronger(hello.protection, wanted_protection_));
      encode_challenge(connection.output(), connection.server_nonce, wanted_protection_);
      connection.state = ConnectionState::kAwaitClientProof;
      flush_output(connection);
      return;
    }
    case ConnectionState::kAwaitClientProof: {
      expect(FrameType::kAuth);
      if (!proof_accepted(connection, frame,
                          authenticator_.client_proof(connection.client_nonce, connection.server_nonce,
                                                      connection.peer_endpoint),
                          now)) {
        return;
      }
      derive_keys();
      connection.start_opening();
      connection.state = ConnectionState::kAwaitIdentity;
      return;
    }
    case ConnectionState::kAwaitIdentity: {
      expect(FrameType::kIdentify);
      const auto token = decode_fixed(frame.payload, kIdentityTokenSize, "IDENTIFY");
      Session& session = session_for(connection.peer_endpoint, now);
      if (!identity_matches(session, token)) {
        // A key holder claiming another peer's endpoint, or that peer restarted while we still
        // hold its old session (reclaimed after LONGPIPE_DEAD_PEER_MS of silence).
        ++session.counters.identity_refused;
        ++local_identity_refused_;
        {
          std::lock_guard lock(mutex_);
          engine_identity_refused_ = local_identity_refused_;
        }
        send_close(connection, CloseReason::kIdentityRefused, "this endpoint's session belongs to another process", now);
        close_connection(connection, "identity refused", now);
        return;
      }
      encode_fixed(connection.output(), FrameType::kAuth,
                   authenticator_.server_proof(connection.client_nonce, connection.server_nonce,
                                               connection.peer_endpoint));
      connection.session = &session;
      send_identity(connection, connection.peer_endpoint);
      establish(connection, now);
      return;
    }
    case ConnectionState::kAwaitChallenge: {
      expect(FrameType::kChallenge);
      ChallengeFrame challenge = decode_challenge(frame.payload);
      connection.server_nonce = std::move(challenge.nonce);
      connection.set_traffic_keys({}, stronger(challenge.protection, wanted_protection_));
      derive_keys();
      encode_fixed(connection.output(), FrameType::kAuth,
                   authenticator_.client_proof(connection.client_nonce, connection.server_nonce, local_endpoint_));
      send_identity(connection, connection.peer_endpoint);
      connection.state = ConnectionState::kAwaitServerProof;
      flush_output(connection);
      return;
    }
    case ConnectionState::kAwaitServerProof: {
      expect(FrameType::kAuth);
      if (!proof_accepted(connection, frame,
                          authenticator_.server_proof(connection.client_nonce, connection.server_nonce,
                                                      local_endpoint_),
                          now)) {
        return;  // counted; the session redials (an impostor at the address cannot end it)
      }
      connection.start_opening();
      connection.state = ConnectionState::kAwaitPeerIdentity;
      return;
    }
    case ConnectionState::kAwaitPeerIdentity: {
      expect(FrameType::kIdentify);
      const auto token = decode_fixed(frame.payload, kIdentityTokenSize, "IDENTIFY");
      Session* session = connection.session;
      if (session == nullptr) {
        close_connection(connection, "session gone", now);
        return;
      }
      if (!identity_matches(*session, token)) {
        // Authenticated, and reached at the peer's own address: the process there is another one
        // than the session began with. What the old one had not acknowledged cannot be delivered.
        ++session->counters.identity_refused;
        fail_session(*session, "the process at " + session->peer() +
                                   " is not the one this session began with (it restarted)");
        return;
      }
      establish(connection, now);
      return;
    }
    default:
      throw MalformedFrame("frame in an unexpected connection state");
  }
}

void Engine::Impl::send_identity(Connection& connection, const std::string& peer) {
  connection.start_sealing();
  const std::size_t start = connection.output().size();
  encode_fixed(connection.output(), FrameType::kIdentify, authenticator_.identity_token(peer));
  connection.seal_from(start);
}

bool Engine::Impl::identity_matches(Session& session, const std::vector<std::byte>& token) {
  if (session.peer_token.empty()) {
    session.peer_token = token;
    return true;
  }
  return Authenticator::proofs_match(token, session.peer_token);
}

bool Engine::Impl::proof_accepted(Connection& connection, const FrameView& frame,
                                  const std::vector<std::byte>& expected, Clock::time_point now) {
  if (Authenticator::proofs_match(decode_fixed(frame.payload, kMacSize, "AUTH"), expected)) return true;
  note_rejected(connection);
  send_close(connection, CloseReason::kAuthFailed, "authentication failed", now);
  close_connection(connection, "authentication failed", now);
  return false;
}

void Engine::Impl::establish(Connection& connection, Clock::time_point now) {
  Session& session = *connection.session;
  if (!connection.outgoing()) --handshaking_accepted_;
  connection.state = ConnectionState::kEstablished;
  if (session.failed) {
    close_connection(connection, "session already failed", now);
    return;
  }
  const std::size_t slot = connection.stream;
  session.ensure_stream_slot(slot);
  if (session.dialling[slot] == &connection) session.dialling[slot] = nullptr;
  const bool carrier_was_down = session.established_streams() == 0;
  // Simultaneous connections for one stream (both sides dialled): keep the one dialled by the
  // smaller endpoint, a rule both sides evaluate alike. Between two dialled by the same side, the
  // newer wins (the dialler only dials again when it believes the older is gone).
  const bool replacing = session.streams[slot] != nullptr;
  if (replacing) {
    Connection& old = *session.streams[slot];
    const std::string& old_dialler = old.outgoing() ? local_endpoint_ : session.peer();
    const std::string& new_dialler = connection.outgoing() ? local_endpoint_ : session.peer();
    const bool keep_old = old_dialler != new_dialler && old_dialler < new_dialler;
    Connection& loser = keep_old ? connection : old;
    send_close(loser, CloseReason::kDuplicate, "duplicate connection", now);
    loser.session = nullptr;  // not a loss for the session
    if (keep_old) {
      close_connection(loser, "duplicate connection", now);
      return;
    }
    session.streams[slot] = nullptr;
    close_connection(loser, "replaced by a newer connection", now);
  }
  connection.reader().set_max_payload(kSequenceSize + config_.max_message + kMessageTrailerSize);
  session.streams[slot] = &connection;
  session.last_heard = now;
  session.backoff = config_.connect_retry_initial;
  session.peer_said_goodbye = false;
  if (session.ever_established && carrier_was_down) ++session.counters.reconnects;  // a loss, not a tie-break
  ++session.counters.connections_established;
  session.ever_established = true;
  session.counters.tuning = connection.tuning;
  session.counters.protection = protection_name(connection.protection());
  // When the carrier comes back (or a stream is replaced, taking its bytes with it), every
  // unacknowledged message goes again; the peer drops what it already had.
  if (carrier_was_down || replacing) session.arq.carrier_reset(now);
  rearm_quick_ack(connection.fd());
  pump(session, now);
}

void Engine::Impl::handle_session_frame(Connection& connection, const FrameView& frame, Clock::time_point now) {
  Session* session = connection.session;
  if (session == nullptr) return;  // a connection being replaced: its remaining frames are moot
  switch (frame.type) {
    case FrameType::kData: {
      const DataFrame data = decode_data(frame.payload, config_.max_message);
      if (!session->arq.on_data(data.sequence, ArqPayload(data.message.begin(), data.message.end()), now)) {
        throw MalformedFrame("DATA " + std::to_string(data.sequence) + " lies far beyond the receive window");
      }
      return;
    }
    case FrameType::kAck: {
      if (!session->arq.on_ack(from_wire(decode_ack(frame.payload)), now)) {
        throw MalformedFrame("ACK acknowledges messages never sent");
      }
      return;
    }
    case FrameType::kKeepalive:
      return;
    case FrameType::kClose: {
      const CloseFrame close = decode_close(frame.payload);
      if (close.reason == CloseReason::kShutdown) session->peer_said_goodbye = true;
      if (close.reason == CloseReason::kDuplicate && is_stream_of(connection)) {
        // The peer keeps another connection for this stream: not a loss; it carries the stream.
        session->streams[connection.stream] = nullptr;
        connection.session = nullptr;
        if (session->established_streams() > 0) session->arq.carrier_reset(now);
      }
      close_connection(connection, "peer closed the connection: " + close.text, now);
      return;
    }
    default:
      throw MalformedFrame(std::string(frame_type_name(frame.type)) + " after the handshake");
  }
}

// The stats show each stream's congestion control as it is now ("cubic,bbr"): a stream may have
// switched to LONGPIPE_CONGESTION_FALLBACK since it connected, and its note says when and why.
void Engine::Impl::describe_stream_congestion(Session& session) {
  std::string congestion;
  std::string notes;
  for (const Connection* stream : session.streams) {
    if (stream == nullptr) continue;
    congestion += (congestion.empty() ? "" : ",") + stream->tuning.congestion;
    notes += stream->tuning.note;
  }
  session.counters.tuning.congestion = congestion;
  session.counters.tuning.note = notes;
}

void Engine::Impl::service(Session& session, Clock::time_point now) {
  if (session.failed) return;
  // Messages from the outbox into the ARQ window.
  bool moved = false;
  {
    std::lock_guard lock(mutex_);
    auto& shared = *session.shared;
    if (shared.named_by_application) session.may_dial = true;
    while (!shared.outbox.empty() && session.arq.can_accept(shared.outbox.front().packed.size())) {
      shared.outbox_bytes -= shared.outbox.front().body_bytes;
      session.arq.submit(std::move(shared.outbox.front().packed));
      shared.outbox.pop_front();
      moved = true;
    }
    if (moved) space_cv_.notify_all();
  }
  const bool has_work = !session.arq.all_acknowledged();
  pump(session, now);
  // Redial our own streams that are down (the peer redials its own too; ties are broken in establish).
  if (session.may_dial && now >= session.next_dial && (!session.peer_said_goodbye || has_work)) {
    bool dialled = false;
    for (std::size_t stream = 0; stream < config_.streams; ++stream) {
      if (session.streams[stream] == nullptr && session.dialling[stream] == nullptr) {
        if (session.peer_said_goodbye) session.last_heard = now, session.peer_said_goodbye = false;
        dial(session, stream, now);
        dialled = true;
      }
    }
    if (dialled) {
      session.next_dial = now + session.backoff;
      session.backoff = std::min<Clock::duration>(session.backoff * 2, config_.connect_retry_max);
    }
  }
  // Dead peer: silent for too long while we need it (keep-alives make silence meaningful).
  if (!session.peer_said_goodbye && !reading_paused_.load() && now - session.last_heard > config_.dead_peer_timeout) {
    fail_session(session, "no sign of life for " + std::to_string(config_.dead_peer_timeout.count()) +
                              " ms (LONGPIPE_DEAD_PEER_MS)" +
                              (session.last_error.empty() ? "" : "; last error: " + session.last_error));
    return;
  }
  if (reading_paused_.load()) session.last_heard = now;  // our own back-pressure, not the peer's silence
  if (Connection* first = session.first_stream(); first && now - session.tcp_info_refreshed >= kTcpInfoInterval) {
    session.counters.tcp = read_window_info(first->fd());
    describe_stream_congestion(session);
    session.tcp_info_refreshed = now;
  }
  std::lock_guard lock(mutex_);
  auto& shared = *session.shared;
  session.counters.arq = session.arq.stats();
  session.counters.streams = session.established_streams();
  session.counters.connected = session.counters.streams > 0;
  const std::uint64_t dropped = shared.statistics.dropped_by_policy;  // counted by send()
  shared.statistics = session.counters;
  shared.statistics.dropped_by_policy = dropped;
  const std::uint64_t unacknowledged = session.counters.arq.in_flight_messages;
  if (unacknowledged != shared.unacknowledged) {
    shared.unacknowledged = unacknowledged;
    flushed_cv_.notify_all();
  }
}

Connection* Engine::Impl::least_loaded_stream(const Session& session) const {
  // Round robin over the established streams, skipping those with a full output buffer.
  const std::size_t count = session.streams.size();
  for (std::size_t i = 0; i < count; ++i) {
    Connection* candidate = session.streams[(session.next_stream + i) % count];
    if (candidate != nullptr && candidate->pending_output() < kOutputHighWater) return candidate;
  }
  return nullptr;
}

Connection* Engine::Impl::stream_by_size(Session& session, std::size_t packed_bytes) const {
  const std::size_t count = session.streams.size();
  if (config_.small_message == 0 || count < 2) return nullptr;
  if (packed_bytes <= config_.small_message + kMessageTrailerSize) return session.streams[0];
  Connection* fallback = nullptr;  // an established large-message stream, even if full
  for (std::size_t i = 0; i < count - 1; ++i) {
    const std::size_t index = 1 + (session.next_large_stream + i) % (count - 1);
    Connection* candidate = session.streams[index];
    if (candidate == nullptr) continue;
    if (candidate->pending_output() < kOutputHighWater) {
      session.next_large_stream = index % (count - 1);
      return candidate;
    }
    if (fallback == nullptr) fallback = candidate;
  }
  return fallback;
}

void Engine::Impl::pump(Session& session, Clock::time_point now) {
  Connection* first = session.first_stream();
  if (first == nullptr) return;
  // DATA striped over the streams; the receiver's ARQ puts the messages back in order.
  while (Connection* target = least_loaded_stream(session)) {
    auto frame = session.arq.poll_transmit(now);
    if (!frame) break;
    Connection* preferred = stream_by_size(session, frame->payload.size());
    if (preferred != nullptr) target = preferred;
    const std::size_t start = target->output().size();
    encode_data(target->output(), frame->seq, frame->payload);
    target->seal_from(start);
    target->last_sent = now;
    session.next_stream = (target->stream + 1) % session.streams.size();
    // A full preferred stream waits for its socket rather than spilling onto the other kind.
    if (preferred != nullptr && preferred->pending_output() >= kOutputHighWater) break;
  }
  // ACKs on one stream, so that they stay in order.
  if (auto ack = session.arq.poll_ack(now)) {
    const std::size_t start = first->output().size();
    encode_ack(first->output(), to_wire(*ack));
    first->seal_from(start);
    first->last_sent = now;
  }
  for (Connection* stream : session.streams) {
    if (stream == nullptr) continue;
    if (stream->pending_output() == 0 && now - stream->last_sent >= config_.keepalive_interval) {
      const std::size_t start = stream->output().size();
      encode_keepalive(stream->output());
      stream->seal_from(start);
      stream->last_sent = now;
    }
    if (stream->pending_output() > 0) flush_output(*stream);
  }
}

void Engine::Impl::flush_output(Connection& connection) {
  if (connection.state == ConnectionState::kClosed) return;
  std::string error;
  if (connection.write_pending(error) == IoStatus::kError) {
    close_connection(connection, error, Clock::now());
    return;
  }
  const bool want = connection.pending_output() > 0 || connection.state == ConnectionState::kConnecting;
  if (want != connection.writable_interest) {
    connection.writable_interest = want;
    set_interest(connection);
  }
}

void Engine::Impl::send_close(Connection& connection, CloseReason reason, const std::string& text,
                              Clock::time_point now) {
  if (connection.state == ConnectionState::kClosed) return;
  const std::size_t start = connection.output().size();
  encode_close(connection.output(), reason, text);
  connection.seal_from(start);  // sealed once our sealed frames have begun
  connection.last_sent = now;
  std::string ignored;
  connection.write_pending(ignored);  // best effort: the connection is about to go
}

void Engine::Impl::close_connection(Connection& connection, const std::string& why, Clock::time_point now) {
  if (connection.state == ConnectionState::kClosed) return;
  if (!connection.outgoing() && connection.state != ConnectionState::kEstablished) --handshaking_accepted_;
  const bool was_attempt = connection.state != ConnectionState::kEstablished;
  ::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_DEL, connection.fd(), nullptr);
  connection.close_socket();
  connection.state = ConnectionState::kClosed;
  closed_.push_back(&connection);
  if (Session* session = connection.session) {
    session->last_error = why;
    const std::size_t slot = connection.stream;
    if (slot < session->dialling.size() && session->dialling[slot] == &connection) session->dialling[slot] = nullptr;
    if (is_stream_of(connection)) {
      session->streams[slot] = nullptr;
      session->next_dial = now + session->backoff;
      // The lost stream's messages are somewhere between here and the peer: send every
      // unacknowledged one again on the streams that remain (duplicates are dropped there).
      if (session->established_streams() > 0) session->arq.carrier_reset(now);
    } else if (was_attempt && connection.outgoing()) {
      ++session->counters.connect_failures;
    }
  }
  connection.session = nullptr;
}

void Engine::Impl::note_malformed(Connection& connection, const std::string& what, Clock::time_point now) {
  if (connection.session != nullptr) {
    ++connection.session->counters.malformed_frames;
  } else {
    ++local_malformed_;
    std::lock_guard lock(mutex_);
    engine_malformed_ = local_malformed_;
  }
  send_close(connection, CloseReason::kProtocolError, what, now);
  close_connection(connection, "malformed frame: " + what, now);
}

// A sealed frame that does not open: altered, replayed, reordered, or sealed with other keys. The
// byte stream cannot be trusted from here on; the connection goes (the session redials).
void Engine::Impl::note_refused_frame(Connection& connection, Clock::time_point now) {
  if (connection.session != nullptr) ++connection.session->counters.refused_frames;
  ++local_refused_frames_;
  {
    std::lock_guard lock(mutex_);
    engine_refused_frames_ = local_refused_frames_;
  }
  close_connection(connection, "a frame failed its integrity check (altered or replayed)", now);
}

void Engine::Impl::note_rejected(Connection& connection) {
  if (connection.session != nullptr) ++connection.session->counters.rejected_connections;
  ++local_rejected_;
  std::lock_guard lock(mutex_);
  engine_rejected_ = local_rejected_;
}

void Engine::Impl::fail_session(Session& session, const std::string& reason) {
  if (session.failed) return;
  session.failed = true;
  const Clock::time_point now = Clock::now();
  for (auto* slots : {&session.streams, &session.dialling}) {
    for (Connection* connection : *slots) {
      if (connection != nullptr) close_connection(*connection, reason, now);
    }
  }
  std::lock_guard lock(mutex_);
  auto& shared = *session.shared;
  const std::size_t lost = shared.outbox.size() + session.arq.stats().in_flight_messages;
  shared.failure = reason;
  shared.outbox.clear();
  shared.outbox_bytes = 0;
  shared.unacknowledged = 0;
  shared.statistics = session.counters;
  failures_.push_back({session.peer(), reason, lost});
  space_cv_.notify_all();
  flushed_cv_.notify_all();
}

// A session that only the peer opened (the application never named it) is forgotten once it is
// over: the peer said goodbye and nothing is left to send, or it was given up on. So endpoints
// that peers announce cost nothing once they are gone.
void Engine::Impl::reclaim_sessions() {
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    Session& session = *it->second;
    const bool over = session.failed || (session.peer_said_goodbye && session.established_streams() == 0 &&
                                         session.arq.all_acknowledged());
    bool reclaim = false;
    if (!session.may_dial && over) {
      std::lock_guard lock(mutex_);
      if (!session.shared->named_by_application && session.shared->outbox.empty()) {
        auto shared = shared_sessions_.find(session.peer());
        if (shared != shared_sessions_.end() && shared->second == session.shared) shared_sessions_.erase(shared);
        reclaim = true;
      }
    }
    it = reclaim ? sessions_.erase(it) : std::next(it);
  }
}

void Engine::Impl::reset_all_connections(Clock::time_point now) {
  for (auto& [raw, connection] : connections_) {
    if (connection->state == ConnectionState::kClosed) continue;
    const linger abort{1, 0};  // close with RST, as a network reset would
    ::setsockopt(connection->fd(), SOL_SOCKET, SO_LINGER, &abort, sizeof abort);
    close_connection(*connection, "reset for testing", now);
  }
}

void Engine::Impl::say_goodbye(Clock::time_point now) {
  for (auto& [raw, connection] : connections_) {
    if (connection->state == ConnectionState::kEstablished) {
      send_close(*connection, CloseReason::kShutdown, "engine shutting down", now);
    }
  }
  connections_.clear();
  {
    std::lock_guard lock(mutex_);
    accepted_ = local_accepted_;
    refused_busy_ = local_refused_busy_;
  }
  space_cv_.notify_all();
}

void Engine::Impl::sweep_closed() {
  if (closed_.empty()) {
    std::lock_guard lock(mutex_);
    accepted_ = local_accepted_;
    refused_busy_ = local_refused_busy_;
    return;
  }
  for (Connection* connection : closed_) connections_.erase(connection);
  closed_.clear();
}

// --- Engine ------------------------------------------------------------------------------------

Engine::Engine(Config config) : impl_(std::make_unique<Impl>(std::move(config))) { impl_->start(); }

Engine::~Engine() {
  if (!impl_) return;
  impl_->flush(impl_->config().linger);
  impl_->stop();
  impl_->write_stats_file();
}

std::string Engine::local_endpoint() const { return impl_->local_endpoint(); }
void Engine::send(const std::string& peer_endpoint, Message message) { impl_->send(peer_endpoint, std::move(message)); }
std::optional<Message> Engine::try_receive() { return impl_->try_receive(); }
int Engine::receive_event_fd() const { return impl_->receive_event_fd(); }
bool Engine::wait_receive(std::chrono::milliseconds timeout) { return impl_->wait_receive(timeout); }
bool Engine::flush(std::chrono::milliseconds timeout) { return impl_->flush(timeout); }
std::vector<PeerFailure> Engine::take_peer_failures() { return impl_->take_peer_failures(); }
std::string Engine::stats_json() const { return impl_->stats_json(); }
void Engine::reset_connections_for_testing() { impl_->request_reset(); }

void Engine::abandon_after_fork() {
  // The progress thread and its locks exist only in the parent: touching them could deadlock.
  // Keep the state on purpose (exec() closes the descriptors: all are close-on-exec), reachable
  // from here so that leak checkers do not report it.
  static auto* abandoned = new std::vector<Impl*>();
  abandoned->push_back(impl_.release());
}

}  // namespace lp
