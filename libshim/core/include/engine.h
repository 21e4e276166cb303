// Engine: LongPipe's transport engine, one per process. Front ends (PVM, MPI, the gateway) hand it
// messages for peer endpoints and take received messages from it; it carries them over
// authenticated, tuned TCP sessions with a message-level ARQ (arq.h), so a connection reset loses
// and duplicates nothing. One progress thread owns every socket and timer; application threads
// only copy messages in and out, so send() returns at once (latency hiding).
//
// Thread safety: every public member may be called from any thread. The progress thread never
// calls back into the front end.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "config.h"
#include "message.h"

namespace lp {

// send() with LONGPIPE_WINDOW_FULL=fail found the session's queue full.
class WindowFull : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// send() to a peer that was declared dead or refused authentication.
class PeerFailed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A peer given up on: dead-peer timeout, refused authentication, unreachable.
struct PeerFailure {
  std::string peer_endpoint;
  std::string reason;
  std::size_t messages_lost = 0;  // queued or unacknowledged messages to it that were dropped
};

class Engine {
 public:
  // Binds the listen socket (LONGPIPE_LISTEN) and starts the progress thread. Throws SystemError
  // (bind) or ConfigError. Never blocks on the network. With LONGPIPE_GATEWAY it first asks the
  // gateway for its site (gateway_site()), which throws as that does.
  explicit Engine(Config config);
  // Flushes (bounded by LONGPIPE_LINGER_MS), says goodbye to peers, stops the thread; writes
  // LONGPIPE_STATS if set.
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // "host:port" that peers dial; host is LONGPIPE_LISTEN's host or this machine's hostname. With
  // LONGPIPE_GATEWAY: "<site>/host:port", the gateway's site before it.
  std::string local_endpoint() const;

  // The site name of LONGPIPE_GATEWAY's gateway (asked over its socket, at most 2 s), "" without a
  // gateway. Throws SystemError (no gateway at that path) or ConfigError (no valid answer), each
  // naming LONGPIPE_GATEWAY and the path.
  static std::string gateway_site(const Config& config);

  // Copies the message into the session's queue for `peer_endpoint` (opened on first use) and
  // returns. A peer named "<site>/host:port" is dialled through LONGPIPE_GATEWAY's gateway (an
  // engine without one cannot dial it, only answer on the connections it opens). While the queue is full: LONGPIPE_WINDOW_FULL decides (block, throw WindowFull,
  // drop-oldest, keep-latest: the drop policies discard messages not yet transmitted). Throws
  // PeerFailed if the peer was given up on, std::invalid_argument for a bad endpoint or a body over
  // LONGPIPE_MAX_MESSAGE.
  void send(const std::string& peer_endpoint, Message message);
  // The same, never waiting and without LONGPIPE_WINDOW_FULL's policy: false while the session's
  // queue has no room (`message` untouched); room_event_fd() turns readable once it has room again
  // or the peer failed (whoever watches it reads it empty before trying again). Throws as send().
  bool try_send(const std::string& peer_endpoint, Message& message);
  int room_event_fd() const;

  // The next received message from any peer (per-peer order preserved), or nullopt.
  std::optional<Message> try_receive();
  // Readable (poll/epoll) while messages are waiting.
  int receive_event_fd() const;
  // Waits until a message is waiting (true) or the timeout passes (false).
  bool wait_receive(std::chrono::milliseconds timeout);

  // Waits until every message sent so far is acknowledged by its peer (or its peer failed).
  bool flush(std::chrono::milliseconds timeout);

  // Peers given up on since the last call.
  std::vector<PeerFailure> take_peer_failures();
  // Gives a peer that was given up on another chance: sends to it no longer throw PeerFailed, the
  // next one opens a new session (nothing of the failed one's is sent again), and the peer's own
  // dials are answered again. For a long-lived process whose peer may still be there after both
  // gave up on each other (two site gateways after a long outage). Nothing for a peer not given up on.
  void retry_peer(const std::string& peer_endpoint);

  // Per-session and engine-wide counters as a JSON object.
  std::string stats_json() const;

  // Call in the child after fork(): the progress thread does not exist there. Leaks the engine's
  // state instead of tearing it down (its sockets belong to the parent's sessions); the Engine
  // must not be used afterwards, only destroyed.
  void abandon_after_fork();

  // Test hook: abruptly closes every connection (as a network reset would); sessions reconnect.
  void reset_connections_for_testing();

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace lp
