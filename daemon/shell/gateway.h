// Gateway: longpiped's I/O shell. One thread, one epoll loop: the Unix socket's clients, the TCP
// connections it dials for streams from peers, the engine's receive and room event descriptors, and
// a signalfd. It moves bytes and events into the relay (relay/relay.h), which decides everything,
// and carries out what the relay asks. The engine (lp::Engine) holds the sessions to the other
// sites' gateways on its own progress thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "config/gateway_config.h"
#include "engine.h"
#include "file_descriptor.h"
#include "relay/relay.h"
#include "shell/resolver.h"

namespace lpd {

class Gateway {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::seconds kRequestTimeout{5};  // for the request line
  static constexpr std::chrono::seconds kDialTimeout{10};    // for a TCP dial at this site
  static constexpr std::size_t kMaxPendingClients = 256;     // connections still sending their request
  static constexpr std::size_t kReadChunk = 64 * 1024;       // per socket per turn: fair turns
  // A peer gateway the engine gave up on is tried again this often: two gateways that both gave up
  // on each other (their connections refused both ways for LONGPIPE_DEAD_PEER_MS) find each other
  // again without a restart, while a peer still gone costs a HELLO and a few dials per period.
  static constexpr std::chrono::seconds kRetryRefusedPeer{60};

  // Binds the Unix socket, starts the engine (binds `listen`). Throws on failure. `lookup` resolves
  // the host names of OPENs, on the resolver's threads (tests give a slow one).
  Gateway(GatewayConfig config, std::string config_path, Resolver::Lookup lookup = system_lookup);
  ~Gateway();  // removes the socket file
  Gateway(const Gateway&) = delete;
  Gateway& operator=(const Gateway&) = delete;

  // Runs until SIGTERM or SIGINT (blocked by the caller, read through `signal_fd`).
  void run(int signal_fd);

 private:
  // kRequest -> kReply (an answer, then close) or kStream; kReply -> kDrain: the answer is out and
  // the write side shut down, the client's leftover bytes are read until it closes (closing with
  // them unread would turn the client's read of the answer into a reset). A dial for a peer's OPEN:
  // kResolving (a host name on the resolver's threads; no socket yet) -> kDialling -> kStream.
  enum class State { kRequest, kReply, kDrain, kResolving, kDialling, kStream };
  struct Conn {
    lp::FileDescriptor fd;
    State state = State::kRequest;
    std::string buffer;  // the request so far, or the reply / "OK\n" still to write
    Clock::time_point deadline = Clock::time_point::max();
    Handle handle = 0;
    std::uint32_t events = 0;  // registered with epoll (0: not registered)
    bool shutdown_wanted = false;
  };

  // gateway_local.cpp: the Unix socket's clients and the streams' sockets.
  void accept_clients();
  void on_conn_event(std::uint64_t token, std::uint32_t events);
  void read_request(std::uint64_t token);
  void answer(Conn& conn, const std::string& line);
  void on_stream_readable(Conn& conn);
  void on_stream_writable(Conn& conn);
  void carry_out(const LocalAction& action);
  void dial(std::uint64_t token, const Resolved& address, const std::string& text);
  void on_resolved();
  void update_interest(std::uint64_t token);
  void close_conn(std::uint64_t token);
  void expire(Clock::time_point now);
  std::string status_json() const;
  std::uint64_t add_conn(lp::FileDescriptor fd, State state);

  // gateway.cpp: the engine side and the loop.
  // Every kRetryRefusedPeer: the peers the engine refuses to send to get another chance.
  void retry_refused_peers(Clock::time_point now);
  void receive_frames();
  void send_held();
  void pump();
  void reload();
  void log(const std::string& line) const;

  GatewayConfig config_;
  const std::string config_path_;
  lp::FileDescriptor listener_;
  lp::FileDescriptor epoll_;
  std::unique_ptr<lp::Engine> engine_;
  std::unique_ptr<Relay> relay_;
  Resolver resolver_;
  std::map<std::uint64_t, Conn> conns_;
  std::map<Handle, std::uint64_t> token_of_;
  std::map<std::string, Transmit> held_;  // per site: the frame the engine had no room for

  std::uint64_t next_token_ = 16;
  std::size_t pending_clients_ = 0;  // clients in kRequest, kReply or kDrain
  std::uint64_t refused_clients_ = 0;
  Clock::time_point next_peer_retry_{};
};

}  // namespace lpd
