// Session: one reliable, ordered, bidirectional message channel to one peer endpoint. Outlives its
// TCP connections: the ARQ inside keeps the sequence space and the unacknowledged messages, so a
// reconnect continues where the broken connection stopped.
//
// SessionShared is the part application threads touch (under the engine's mutex); Session is the
// progress thread's own.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "arq.h"
#include "connection.h"
#include "tcp_socket.h"

namespace lp {

// Counters a session reports (statistics JSON).
struct SessionStatistics {
  ArqStats arq;
  TcpWindowInfo tcp;
  SocketTuning tuning;
  bool connected = false;
  std::size_t streams = 0;                  // established parallel connections
  std::uint64_t connections_established = 0;
  std::uint64_t reconnects = 0;             // established again after a loss
  std::uint64_t connect_failures = 0;
  std::uint64_t malformed_frames = 0;
  std::uint64_t rejected_connections = 0;   // failed authentication, either direction
  std::uint64_t refused_frames = 0;         // sealed frames that failed to open (tampered, replayed)
  std::uint64_t identity_refused = 0;       // connections that claimed this session with another identity
  std::string protection;                   // of the established streams (frame_cipher.h)
  std::uint64_t messages_received = 0;      // delivered to the receive queue
  std::uint64_t bytes_received = 0;         // bodies only
  std::uint64_t dropped_by_policy = 0;      // LONGPIPE_WINDOW_FULL=drop-oldest/keep-latest
};

// A message waiting for the ARQ window, already packed (message.h).
struct QueuedMessage {
  std::vector<std::byte> packed;
  std::size_t body_bytes = 0;
};

struct SessionShared {
  explicit SessionShared(std::string peer_endpoint) : peer(std::move(peer_endpoint)) {}
  const std::string peer;
  std::deque<QueuedMessage> outbox;         // not yet handed to the ARQ
  std::size_t outbox_bytes = 0;
  std::uint64_t unacknowledged = 0;         // in the ARQ, not yet acknowledged
  std::optional<std::string> failure;       // set once the peer is given up on
  bool named_by_application = false;        // send() named this peer: the engine may dial it
  SessionStatistics statistics;             // refreshed by the progress thread
};

class Session {
 public:
  using Clock = std::chrono::steady_clock;

  Session(std::shared_ptr<SessionShared> shared, const ArqConfig& arq_config, std::size_t stream_count,
          Clock::time_point now, Clock::duration first_backoff)
      : shared(std::move(shared)),
        arq(arq_config),
        streams(stream_count, nullptr),
        dialling(stream_count, nullptr),
        last_heard(now),
        next_dial(now),
        backoff(first_backoff) {}

  const std::string& peer() const { return shared->peer; }

  // Established streams (parallel TCP connections); DATA is striped over them.
  std::size_t established_streams() const {
    std::size_t n = 0;
    for (const Connection* c : streams) n += c != nullptr;
    return n;
  }
  Connection* first_stream() const {
    for (Connection* c : streams) {
      if (c != nullptr) return c;
    }
    return nullptr;
  }
  // Makes room for a stream index announced by the peer (it may use more streams than we do).
  void ensure_stream_slot(std::size_t index) {
    if (index >= streams.size()) {
      streams.resize(index + 1, nullptr);
      dialling.resize(index + 1, nullptr);
    }
  }

  std::shared_ptr<SessionShared> shared;
  Arq arq;
  // Slot i holds stream i's established connection, or null. Our own LONGPIPE_STREAMS slots are
  // redialled when empty; slots beyond them exist only while the peer keeps them up.
  std::vector<Connection*> streams;
  std::vector<Connection*> dialling;   // our own connection attempts in progress, per slot
  std::size_t next_stream = 0;         // round-robin cursor for striping DATA frames
  std::size_t next_large_stream = 0;   // the same among streams 1.. (LONGPIPE_SMALL_MESSAGE)
  Clock::time_point last_heard;        // any frame from the peer (or the start of trying)
  Clock::time_point next_dial;
  Clock::duration backoff;
  bool peer_said_goodbye = false;      // CLOSE(shutdown) received: no redial until there is data
  bool failed = false;
  bool ever_established = false;
  // Dial only peers the application named (send()): an endpoint announced in HELLO is a claim, and
  // a session opened by the peer is kept up by the peer's redials.
  bool may_dial = false;
  // The peer's identity token (Authenticator::identity_token), bound by the first connection that
  // authenticated; later connections must present the same one to join or replace a stream.
  std::vector<std::byte> peer_token;
  std::string last_error;              // why the last connection attempt or connection ended
  SessionStatistics counters;          // progress thread's working copy
  Clock::time_point tcp_info_refreshed{};
};

}  // namespace lp
