// The driver: the one progress thread of an engine. It reads the clock, feeds carrier events and
// application requests to the endpoint, drains the endpoint's commands into the carrier and its
// events into the mailbox, and waits in the event loop until the one next deadline.
#include "driver/engine_impl.h"

#include <algorithm>
#include <stdexcept>
#include <utility>
#include <vector>
#include <unistd.h>

#include "system_call.h"
#include "carrier/tcp/tcp_path_info.h"
#include "carrier/tcp/tcp_socket.h"
#include "wire/host_port.h"

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
// Bytes read from a connection that has not authenticated, per turn: the largest handshake frames
// (HELLO, AUTH and a sealed IDENTIFY) fit, so an unauthenticated peer makes us buffer no more.
constexpr std::size_t kHandshakeReadBudget = 1024;

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
  } else if (event.tag == &names_tag_) {
    dial_awaiting_names(now);
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
  for (const std::string& peer : requests.retried) endpoint_.retire_failed(peer);
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
    if (connection->state != ConnectionState::kClosed) dial(*connection, now);
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

void Engine::Impl::dial(Connection& connection, Clock::time_point now) {
  std::string target = connection.peer_endpoint;
  try {
    // A peer behind a site's gateway is reached through the gateway's socket: no name to look up.
    if (site_of_endpoint(target).empty()) {
      const auto resolved = names_.find(parse_host_port(target, true), now);
      if (!resolved) {
        awaiting_name_.push_back(&connection);  // dial_awaiting_names, or the attempt deadline
        return;
      }
      if (!resolved->ok()) throw std::runtime_error(resolved->error);
      target = numeric_endpoint(*resolved);
      endpoint_.judge_again_with_address(connection.peer_endpoint);  // auto: now the cache can say
    }
    connection.link = carrier_->dial(target, connection.stream);
    connection.writable_interest = true;
    loop_.add(connection.link->poll_fd(), &connection, true, true);
  } catch (const std::exception& e) {
    connection.link.reset();
    std::string why = e.what();
    if (target != connection.peer_endpoint) why += " (" + connection.peer_endpoint + ")";
    endpoint_.on_dial_failed(connection, why, now);
  }
}

void Engine::Impl::dial_awaiting_names(Clock::time_point now) {
  if (!names_.take_answers(now)) return;
  std::vector<Connection*> waiting = std::exchange(awaiting_name_, {});
  for (Connection* connection : waiting) {
    if (connection->state == ConnectionState::kConnecting && !connection->link) dial(*connection, now);
  }
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
    std::erase(awaiting_name_, connection);
    endpoint_.erase(connection);
  }
  const EndpointStatistics statistics = endpoint_statistics();
  if (statistics != published_) {
    published_ = statistics;
    mailbox_.publish_endpoint(statistics);
  }
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

}  // namespace lp
