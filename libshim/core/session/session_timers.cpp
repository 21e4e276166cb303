// A session's timers: keep-alives, the probe intervals that follow the path's round trip, silence
// and redial, the engine's own stalls, the one next deadline.
#include "session/session.h"

#include <algorithm>
#include <chrono>

#include "session/connection.h"

namespace lp {
namespace {

// The probe interval (silence threshold, redial back-off ceiling) is kProbeRoundTrips round
// trips, but not less than kMinProbeInterval (a busy host needs that long for connect +
// handshake) nor more than LONGPIPE_CONNECT_RETRY_MAX_MS.
constexpr int kProbeRoundTrips = 6;
constexpr std::chrono::milliseconds kMinProbeInterval{250};
// While a path is silent a new probe starts every kProbeStartRoundTrips round trips (within the
// same bounds): after the link returns, the next one starts within that, and a connection needs
// 3 round trips (SYN, HELLO/CHALLENGE, AUTH/IDENTIFY) before data. Each probe may take
// Session::kMaxProbeAttemptsPerSlot start intervals (6 round trips): room for one lost packet.
constexpr int kProbeStartRoundTrips = 2;
// A stall of the engine's own thread longer than this share of the probe interval restarts the
// silence clock (Session::note_engine_stall): longer ones, plus the keep-alive spacing, could alone
// exceed the silence threshold (a frozen or stopped process would make both ends probe and re-send
// a live path: core.engine-freeze); ordinary late wake-ups on a loaded host stay far below it.
constexpr int kStallToleranceDivisor = 2;

}  // namespace

void Session::send_keepalives(Clock::time_point now) {
  for (Connection* stream : streams_.streams()) {
    if (stream != nullptr && stream->pending_output() == 0 && now - stream->last_sent >= config_.keepalive_interval) {
      const std::size_t start = stream->output().size();
      encode_keepalive(stream->output());
      stream->seal_from(start);
      stream->last_sent = now;
    }
  }
}

Session::Clock::duration Session::path_rtt() const {
  // The carrier's own RTT (TCP_INFO, refreshed by the driver): the ARQ's message-level SRTT
  // includes the time messages queue in socket buffers, which a connect never waits for.
  const std::chrono::microseconds carrier_rtt(counters_.tcp.rtt_us);
  const ArqDuration message_rtt = arq_.stats().srtt;
  // Before either, the handshake's round trip (path_estimator.h), else LONGPIPE_RTT or its default.
  const auto measured = path_.handshake_rtt();
  return carrier_rtt.count() > 0   ? Clock::duration(carrier_rtt)
         : message_rtt.count() > 0 ? Clock::duration(message_rtt)
         : measured                ? Clock::duration(*measured)
                                   : Clock::duration(config_.rtt);
}

Session::Clock::duration Session::round_trips(int count) const {
  return std::clamp<Clock::duration>(path_rtt() * count, kMinProbeInterval,
                                     std::max<Clock::duration>(kMinProbeInterval, config_.connect_retry_max));
}

Session::Clock::duration Session::probe_interval() const { return round_trips(kProbeRoundTrips); }

Session::Clock::duration Session::probe_start_interval() const { return round_trips(kProbeStartRoundTrips); }

Session::Clock::duration Session::probe_attempt_limit() const {
  return std::min<Clock::duration>(probe_start_interval() * kMaxProbeAttemptsPerSlot, config_.connect_timeout);
}

Session::Clock::duration Session::stall_tolerance() const { return probe_interval() / kStallToleranceDivisor; }

bool Session::note_engine_stall(Clock::time_point now, Clock::duration late) {
  if (failed_ || late <= stall_tolerance()) return false;
  last_heard_ = std::max(last_heard_, now);
  ++counters_.engine_stalls;
  return true;
}

Session::TimeoutActions Session::handle_timeout(Clock::time_point now, bool reading_paused) {
  TimeoutActions actions;
  if (failed_) return actions;
  if (reading_paused) last_heard_ = now;  // our own back-pressure, not the peer's silence
  const bool has_work = !arq_.all_acknowledged();
  const Clock::duration silent_for = now - last_heard_;
  const bool silent = !peer_said_goodbye_ && silent_for > silence_threshold();
  // While the path is silent a redial is short and they follow each other closely (unchanged);
  // probes overlap instead (probe_attempt_limit()).
  actions.attempt_limit = silent ? std::min<Clock::duration>(probe_interval(), config_.connect_timeout)
                                 : Clock::duration(config_.connect_timeout);
  actions.probe_limit = probe_attempt_limit();
  // Redial our own streams that are down (the peer redials its own too; ties are broken in attach).
  if (may_dial_ && now >= next_dial_ && (!peer_said_goodbye_ || has_work)) {
    actions.dial = streams_.slots_to_dial();
    if (!actions.dial.empty()) {
      for (std::size_t slot : spill_slots_to_dial()) actions.dial.push_back(slot);
      if (auto spare = spare_control_slot_to_dial()) actions.dial.push_back(*spare);
      if (peer_said_goodbye_) last_heard_ = now, peer_said_goodbye_ = false;
      next_dial_ = now + backoff_;
      // The back-off stops at a few round trips of the path (and LONGPIPE_CONNECT_RETRY_MAX_MS).
      backoff_ = std::min<Clock::duration>({backoff_ * 2, Clock::duration(config_.connect_retry_max),
                                            std::max<Clock::duration>(config_.connect_retry_initial, probe_interval())});
    }
  }
  // A dead peer: silent for LONGPIPE_DEAD_PEER_MS while its host refuses or resets connections.
  // A silent path (nothing answers) keeps its session, window and probes: outages end.
  const auto last_error = [this] {  // built only for a failure: handle_timeout runs every turn
    return counters_.last_connection_error.empty() ? std::string() : "; last error: " + counters_.last_connection_error;
  };
  if (!peer_said_goodbye_ && refused_since_heard_ && silent_for > config_.dead_peer_timeout) {
    actions.failure = "no sign of life for " + std::to_string(config_.dead_peer_timeout.count()) +
                      " ms (LONGPIPE_DEAD_PEER_MS) and its host refuses or resets connections" + last_error();
    return actions;
  }
  if (!peer_said_goodbye_ && config_.silent_path_timeout.count() > 0 && silent_for > config_.silent_path_timeout) {
    actions.failure = "the path has been silent for " + std::to_string(config_.silent_path_timeout.count()) +
                      " ms (LONGPIPE_SILENT_PATH_MS)" + last_error();
    return actions;
  }
  // Streams established before a silence may be stuck behind TCP's backed-off retransmission
  // timer (up to a minute after a long outage, even once the path flows again): probe with fresh
  // connections per such stream, a new one every probe start interval, a few at once; the first
  // up replaces the suspect one (the others are abandoned) and everything unacknowledged goes again.
  if (silent) {
    for (Connection* stream : streams_.streams()) {
      if (stream != nullptr) stream->suspect = true;
    }
  }
  if (has_suspect_stream() && now >= next_probe_) {
    next_probe_ = now + probe_start_interval();
    for (std::size_t slot = 0; slot < streams_.own_streams(); ++slot) {
      const Connection* stream = streams_.stream(slot);
      if (stream != nullptr && stream->suspect && streams_.attempts(slot).size() < kMaxProbeAttemptsPerSlot) {
        actions.probe.push_back(slot);
      }
    }
    counters_.path_probes += actions.probe.size();
  }
  return actions;
}

bool Session::has_suspect_stream() const {
  for (std::size_t slot = 0; slot < streams_.own_streams(); ++slot) {
    if (const Connection* stream = streams_.stream(slot); stream != nullptr && stream->suspect) return true;
  }
  return false;
}

Session::Clock::time_point Session::next_deadline(Clock::time_point now) const {
  Clock::time_point wake = Clock::time_point::max();
  if (failed_) return wake;
  if (datagram_) {
    if (auto deadline = datagram_->next_deadline(arq_, now)) wake = std::min(wake, *deadline);
    if (reseal_to_ != nullptr) wake = std::min(wake, reseal_at_);
  } else if (streams_.first() != nullptr) {  // nothing can be sent without a connection
    if (auto deadline = arq_.next_deadline()) wake = std::min(wake, *deadline);
    // pump() stops at a stream's high-water mark; once the carrier has taken that output (a write
    // that took it all leaves nothing to wait for, no event follows), the rest must go now.
    if (cold_gathering(now)) {
      wake = std::min(wake, gather_until_);
    } else if (auto bytes = arq_.next_transmit_bytes(); bytes && streams_.has_room_for(*bytes)) {
      wake = std::min(wake, now);
    }
  }
  for (const Connection* stream : streams_.streams()) {
    if (stream != nullptr && stream->pending_output() == 0) {
      wake = std::min(wake, stream->last_sent + config_.keepalive_interval);
    }
  }
  if (may_dial_ && (!peer_said_goodbye_ || !arq_.all_acknowledged()) && !streams_.slots_to_dial().empty()) {
    wake = std::min(wake, std::max(now, next_dial_));
  }
  // Strictly after the timeouts: handle_timeout() compares with ">".
  constexpr std::chrono::milliseconds kJustAfter{1};
  if (!peer_said_goodbye_) {
    if (refused_since_heard_) wake = std::min(wake, last_heard_ + config_.dead_peer_timeout + kJustAfter);
    if (config_.silent_path_timeout.count() > 0) {
      wake = std::min(wake, last_heard_ + config_.silent_path_timeout + kJustAfter);
    }
    if (has_suspect_stream()) {
      wake = std::min(wake, next_probe_);
    } else if (streams_.established() > 0) {
      wake = std::min(wake, last_heard_ + silence_threshold() + kJustAfter);
    }
  }
  return wake;
}

std::vector<Connection*> Session::fail() {
  failed_ = true;
  sealing_ = reseal_to_ = nullptr;  // the connections are closed
  std::vector<Connection*> connections;
  for (std::size_t slot = 0; slot < streams_.slots(); ++slot) {
    if (Connection* c = streams_.stream(slot)) connections.push_back(c);
    for (Connection* c : streams_.attempts(slot)) connections.push_back(c);
  }
  return connections;
}

}  // namespace lp