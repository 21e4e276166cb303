// Statistics: the counters the engine reports, and their JSON (Engine::stats_json(),
// LONGPIPE_STATS). Pure: the driver gathers the numbers, this only formats them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "arq.h"
#include "carrier.h"

namespace lp {

// A session's datagram carrier (LONGPIPE_CARRIER=udp): its pacer and datagrams.
struct DatagramStatistics {
  bool used = false;                 // false: the session's messages travel on TCP
  std::uint64_t datagrams_sent = 0;
  std::uint64_t datagrams_received = 0;  // authentic ones
  std::string pacer_phase;           // startup, drain, cruise
  double pacing_rate_mbit = 0;       // Mbit/s on the wire
  double bandwidth_mbit = 0;         // the pacer's estimate of the bottleneck
  std::uint64_t window_bytes = 0;
  double min_rtt_ms = 0;
  std::uint64_t lost_datagrams = 0;  // as the pacer inferred them
  std::uint64_t backoffs_for_delay = 0;
  std::uint64_t backoffs_for_loss = 0;
};

// Counters of one session.
struct SessionStatistics {
  ArqStats arq;
  TcpWindowInfo tcp;
  SocketTuning tuning;
  bool connected = false;
  std::size_t streams = 0;                  // established parallel connections
  std::uint64_t connections_established = 0;
  std::uint64_t reconnects = 0;             // established again after a loss
  std::uint64_t connect_failures = 0;
  std::uint64_t path_probes = 0;            // connections dialled to test a silent path
  std::uint64_t malformed_frames = 0;
  std::uint64_t rejected_connections = 0;   // failed authentication, either direction
  std::uint64_t refused_frames = 0;         // sealed frames that failed to open (altered, replayed)
  std::uint64_t identity_refused = 0;       // connections that claimed this session with another identity
  std::string protection;                   // of the last established stream (frame_cipher.h)
  std::uint64_t messages_received = 0;      // delivered to the receive queue
  std::uint64_t bytes_received = 0;         // bodies only
  std::uint64_t dropped_by_policy = 0;      // LONGPIPE_WINDOW_FULL=drop-oldest/keep-latest
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
  SocketTuning listen_tuning;
  EndpointStatistics endpoint;
  std::size_t receive_queue_messages = 0;
  std::vector<SessionReport> sessions;
};

std::string to_json(const EngineReport& report);

// `text` as a JSON string literal (quotes and backslashes escaped, control characters blanked).
std::string json_string(const std::string& text);

}  // namespace lp
