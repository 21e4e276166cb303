// Engine::Impl: the engine's state, shared by its two units: engine.cpp (set-up, the application's
// calls, shut-down) and progress_loop.cpp (the progress thread's turn). Private to driver/.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "engine.h"
#include "driver/datagram_port.h"
#include "driver/event_loop.h"
#include "driver/mailbox.h"
#include "driver/name_resolver.h"
#include "driver/path_keeper.h"
#include "driver/thread_pinning.h"
#include "session/endpoint.h"

namespace lp {

class Engine::Impl {
 public:
  using Clock = std::chrono::steady_clock;

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
  std::string site_;                  // LONGPIPE_GATEWAY's site ("" without a gateway)
  std::unique_ptr<Carrier> carrier_;  // TCP, or TCP beside a gateway; the driver sees only the interface
  std::unique_ptr<DatagramPort> datagrams_;  // LONGPIPE_CARRIER=udp: the UDP socket beside it
  std::string local_endpoint_;
  Mailbox mailbox_;

 private:
  // Tags for event-loop sources that are not connections.
  enum class Source { kListen, kWake, kStatsSignal, kDatagrams, kNames };

  void run();
  void handle_event(const LoopEvent& event, Clock::time_point now);
  void read_from(Connection& connection, Clock::time_point now);
  void apply_requests(Clock::time_point now, bool& stopping);
  void service(Session& session, Clock::time_point now, bool reading_paused);
  MailboxSlot& slot(Session& session);
  // Carries out what the endpoint decided: opens links, retunes, writes, closes.
  void drain_commands(Clock::time_point now);
  // Opens the connection's link once its peer's address is known (names_); while the name is looked
  // up it waits in awaiting_name_, its attempt deadline running.
  void dial(Connection& connection, Clock::time_point now);
  void dial_awaiting_names(Clock::time_point now);
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
  Source datagram_tag_ = Source::kDatagrams, names_tag_ = Source::kNames;
  NameResolver names_;                    // peers' host names, looked up off this thread
  std::vector<Connection*> awaiting_name_;  // dials whose peer's name is being looked up
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

}  // namespace lp
