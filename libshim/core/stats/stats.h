// Statistics: the counters the engine reports, and their JSON (Engine::stats_json(),
// LONGPIPE_STATS). Pure: the driver gathers the numbers, this only formats them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "json_text.h"
#include "arq/arq.h"
#include "carrier/carrier.h"

namespace lp {

// A session's datagram carrier (LONGPIPE_CARRIER=udp): its pacer and datagrams.
struct DatagramStatistics {
  bool used = false;                 // false: the session's messages travel on TCP
  std::uint64_t datagrams_sent = 0;
  std::uint64_t datagrams_received = 0;  // authentic ones
  std::string pacer_phase;           // startup, drain, cruise
  std::string warm_start;            // the pacer's seed: none, seeded, confirmed, rejected
  std::string start_jump;            // off, waiting, or the jump's fate: seeded, confirmed, rejected
  double train_rate_mbit = 0;        // the bottleneck rate the start-up jump's packet train measured
  std::uint64_t trains = 0;          // packet trains measured (taken or not)
  // Why bursts and trains were not taken (DatagramPacer::TrainRefusal's names), the nonzero ones.
  std::vector<std::pair<std::string, std::uint64_t>> train_refusals;
  double pacing_rate_mbit = 0;       // Mbit/s on the wire
  double bandwidth_mbit = 0;         // the pacer's estimate of the bottleneck
  std::uint64_t window_bytes = 0;
  double min_rtt_ms = 0;
  std::uint64_t lost_datagrams = 0;  // as the pacer inferred them
  std::uint64_t backoffs_for_delay = 0;
  std::uint64_t backoffs_for_loss = 0;
  std::uint64_t in_flight_bytes = 0;     // the pacer's count, against window_bytes
  std::uint64_t timeouts = 0;            // the ARQ's retransmission timeouts (each re-sends what is in flight)
  double pacing_behind_ms = 0;           // send time pacing gave up after late wake-ups (DatagramPacer::behind)
  double pacing_caught_up_ms = 0;        // send time made up after late wake-ups (DatagramPacer::caught_up)
  std::uint64_t repairs_sent = 0;        // repair datagrams over bursts' tails (tail_fec.h)
  std::uint64_t repairs_received = 0;
  std::uint64_t units_recovered = 0;     // units the repairs recovered (received without a re-send)
  // Bursts of 1000+ units: how many ended, and on average how long from their last new unit's
  // departure to the peer's acknowledgement of everything (one RTT unless the end was lost).
  std::uint64_t burst_tails = 0;
  double burst_tail_ms = 0;
};

// What a session measured about its path and the buffers chosen from it (path_estimator.h).
struct PathStatistics {
  double handshake_rtt_ms = 0;   // 0 = not measured
  double min_rtt_ms = 0;
  double smoothed_rtt_ms = 0;    // TCP_INFO's
  double rate_mbit = 0;          // the estimate buffers are sized from (0 = unknown)
  bool pipe_full = false;
  bool measured_buffers = true;  // false: LONGPIPE_RTT and _BANDWIDTH (or explicit sizes) fix them
  std::size_t send_buffer = 0;   // requested on the streams (0 = kernel autotuning)
  std::size_t receive_buffer = 0;
  std::size_t kernel_send_buffer = 0;     // what the kernel holds now, largest stream (getsockopt: doubled)
  std::size_t kernel_receive_buffer = 0;
  std::uint32_t max_cwnd = 0;    // segments
  std::string warm_start = "none";  // none | used | rejected (RTT disagreed) | off
  double warm_start_rtt_ms = 0;     // the cached entry's min RTT, when one was found
};

// Counters of one session.
struct SessionStatistics {
  ArqStats arq;
  TcpWindowInfo tcp;
  SocketTuning tuning;
  bool connected = false;
  std::size_t streams = 0;                  // established parallel connections (not counting spill streams)
  std::size_t spill_streams = 0;            // established spill streams (stream_scheduler.h)
  std::uint64_t spilled_messages = 0;       // DATA frames a full window sent on a spill stream
  std::uint64_t early_messages = 0;         // DATA sent before the peer's proof (0.5-RTT data, endpoint_handshake.cpp)
  std::uint64_t datagram_reseals = 0;       // datagrams sealed anew under another first connection's keys
                                            // (its own AUTH or the peer's answer lost: Session::datagram_keys_connection)
  // TCP Fast Open (LONGPIPE_FAST_OPEN), per established connection: its SYN carried data (a
  // dialler's HELLO; an acceptor counts only data it took), and the accepting host took that data.
  std::uint64_t fast_open_syn_data = 0;
  std::uint64_t fast_open_accepted = 0;
  std::uint64_t connections_established = 0;
  std::uint64_t reconnects = 0;             // established again after a loss
  std::uint64_t connect_failures = 0;
  std::string last_connection_error;         // why the last connection attempt or connection ended
  std::uint64_t path_probes = 0;            // connections dialled to test a silent path
  std::uint64_t engine_stalls = 0;          // our own stalls that restarted the silence clock
  std::uint64_t malformed_frames = 0;
  std::uint64_t rejected_connections = 0;   // failed authentication, either direction
  std::uint64_t refused_frames = 0;         // sealed frames that failed to open (altered, replayed)
  std::uint64_t identity_refused = 0;       // connections that claimed this session with another identity
  std::string protection;                   // of the last established stream (frame_cipher.h)
  std::uint64_t messages_received = 0;      // delivered to the receive queue
  std::uint64_t bytes_received = 0;         // bodies only
  std::uint64_t dropped_by_policy = 0;      // LONGPIPE_WINDOW_FULL=drop-oldest/keep-latest
  PathStatistics path;
  DatagramStatistics datagram;
};

// Engine-wide counters. Rejected, malformed and refused frames are totals that include those also
// counted on a session (a session's own counters go when the session is forgotten; these stay).
struct EndpointStatistics {
  std::uint64_t accepted = 0;
  std::uint64_t rejected = 0;   // failed authentication, either direction
  std::uint64_t malformed = 0;  // malformed or truncated frames, before or after authentication
  std::uint64_t refused_busy = 0;
  std::uint64_t refused_frames = 0;    // sealed frames that failed to open
  std::uint64_t identity_refused = 0;  // connections refused for claiming another process's session
  // Sessions of a peer that said goodbye, replaced by a new process at its endpoint.
  std::uint64_t sessions_replaced = 0;
  // Connections dialled by a peer we know under another name than the one it announces.
  std::uint64_t accepted_by_alias = 0;
  // Datagrams that came before their session's keys (a dialler's first DATA, read before its
  // IDENTIFY: datagram_pen.h): held, handed on, dropped after the hold time, dropped for room.
  std::uint64_t held_datagrams = 0;
  std::uint64_t held_datagrams_released = 0;
  std::uint64_t held_datagrams_expired = 0;
  std::uint64_t held_datagrams_overflowed = 0;
  // Wake-ups of the progress thread long after its deadline (Session::note_engine_stall): how many
  // restarted some session's silence clock, and the latest wake-up seen, in milliseconds.
  std::uint64_t engine_stalls = 0;
  std::uint64_t longest_late_wake_ms = 0;
  // The warm-start cache (path_cache.h).
  std::string path_cache_file;             // "" = off
  std::uint64_t path_cache_entries = 0;    // usable entries read at start
  std::uint64_t path_cache_corrupt_lines = 0;
  std::uint64_t path_cache_expired_lines = 0;
  std::uint64_t warm_starts_used = 0;
  std::uint64_t warm_starts_rejected = 0;
  std::uint64_t path_cache_saved = 0;      // entries written at the last save
  std::string path_cache_error;            // why the last save failed ("" = fine)

  bool operator==(const EndpointStatistics&) const = default;
};

struct SessionReport {
  std::string peer;
  std::optional<std::string> failure;
  SessionStatistics statistics;
  std::size_t queued_messages = 0;  // in the outbox, not yet in the ARQ
};

struct EngineReport {
  std::string local_endpoint;
  std::string progress_thread;  // pinning and scheduling
  // Returns of the progress thread from its wait: an idle engine wakes only for its timers
  // (keep-alives, path samples) and its peers' frames, so this grows by a few a second, not by polling.
  std::uint64_t progress_wakeups = 0;
  SocketTuning listen_tuning;
  EndpointStatistics endpoint;
  std::size_t receive_queue_messages = 0;
  std::vector<SessionReport> sessions;
};

std::string to_json(const EngineReport& report);

}  // namespace lp
