// Config: every tunable of the transport engine, read from LONGPIPE_* environment variables and an
// optional config file (LONGPIPE_CONFIG=path, KEY=VALUE lines; the environment wins).
// Every value is validated; a bad one throws ConfigError naming the variable and the accepted range.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>

namespace lp {

// A LONGPIPE_* value (or config file line) that is malformed or out of range.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What send() does while a session's queue of untransmitted messages is full.
enum class WindowFullPolicy {
  kBlock,       // wait until the peer acknowledges enough to make room
  kFail,        // throw lp::WindowFull
  kDropOldest,  // discard the oldest message not yet transmitted, queue the new one
  kKeepLatest,  // discard every message not yet transmitted, queue only the new one
};

// LONGPIPE_PIN: where the progress thread runs.
struct PinPolicy {
  enum class Mode { kAuto, kOff, kCore } mode = Mode::kAuto;
  int core = -1;  // for kCore: the logical core index (hwloc PU index)
};

struct Config {
  using Milliseconds = std::chrono::milliseconds;

  // --- timers (RFC 6298 names where they apply) ---
  Milliseconds rto_initial{1000};        // LONGPIPE_RTO_INITIAL_MS: RTO before any RTT sample (RFC 6298: 1 s)
  Milliseconds rto_min{200};             // LONGPIPE_RTO_MIN_MS: floor of the RTO (Linux uses 200 ms)
  Milliseconds rto_max{60000};           // LONGPIPE_RTO_MAX_MS: ceiling of the backed-off RTO (RFC 6298: >= 60 s)
  double rto_backoff = 2.0;              // LONGPIPE_RTO_BACKOFF: RTO multiplier after each expiry
  Milliseconds ack_delay{0};             // LONGPIPE_ACK_DELAY_MS: 0 = acknowledge every message at once
  std::size_t ack_every = 2;             // LONGPIPE_ACK_EVERY: with a delay, ACK at once after this many
  Milliseconds keepalive_interval{2000}; // LONGPIPE_KEEPALIVE_MS: idle time before a keep-alive frame
  Milliseconds dead_peer_timeout{15000}; // LONGPIPE_DEAD_PEER_MS: silence after which a peer is declared dead
  Milliseconds connect_timeout{5000};    // LONGPIPE_CONNECT_TIMEOUT_MS: one connect + handshake attempt
  Milliseconds connect_retry_initial{100}; // LONGPIPE_CONNECT_RETRY_MS: first pause before redialling
  Milliseconds connect_retry_max{2000};  // LONGPIPE_CONNECT_RETRY_MAX_MS: back-off ceiling (doubling)
  Milliseconds linger{5000};             // LONGPIPE_LINGER_MS: how long ~Engine waits to flush

  // --- window and memory bounds ---
  std::size_t window_messages = 4096;        // LONGPIPE_WINDOW_MESSAGES: unacknowledged messages per session
  std::size_t window_bytes = 64u << 20;      // LONGPIPE_WINDOW_BYTES: unacknowledged body bytes per session
  WindowFullPolicy window_full = WindowFullPolicy::kBlock;  // LONGPIPE_WINDOW_FULL
  std::size_t max_message = 64u << 20;       // LONGPIPE_MAX_MESSAGE: largest body accepted or sent

  // --- TCP carrier ---
  double bandwidth_mbit = 155.0;     // LONGPIPE_BANDWIDTH: path rate (Mbit/s) for the BDP
  Milliseconds rtt{540};             // LONGPIPE_RTT: path round trip for the BDP
  std::size_t receive_buffer = 0;    // LONGPIPE_RECEIVE_BUFFER: bytes; 0 = kReceiveBufferBdps x BDP
  std::size_t send_buffer = 0;       // LONGPIPE_SEND_BUFFER: bytes; 0 = kSendBufferBdps x BDP
  // LONGPIPE_CONGESTION: TCP_CONGESTION name, or "system"; a comma list gives stream i entry i
  // (modulo the list's length), e.g. "cubic,bbr" with LONGPIPE_SMALL_MESSAGE.
  std::string congestion = "bbr";
  // LONGPIPE_SMALL_MESSAGE: with two or more streams, messages of at most this many bytes travel on
  // stream 0 and larger ones on the others (0 = stripe everything round robin).
  std::size_t small_message = 0;
  std::size_t streams = 1;           // LONGPIPE_STREAMS: parallel TCP connections per session

  // --- identity and security ---
  std::string listen;                // LONGPIPE_LISTEN: [host][:port]; empty = all addresses, ephemeral port
  std::string key;                   // LONGPIPE_KEY (or LONGPIPE_KEY_FILE): shared secret of the job

  // --- operations ---
  std::string stats_path;            // LONGPIPE_STATS: JSON written at exit and on SIGUSR1
  PinPolicy pin;                     // LONGPIPE_PIN: auto | off | <core>

  // The bandwidth-delay product of LONGPIPE_BANDWIDTH x LONGPIPE_RTT, in bytes.
  double bdp_bytes() const;
  // Socket buffer sizes actually requested: the explicit setting, or a multiple of the BDP, at
  // least kMinimumSocketBuffer. The receive buffer holds two BDPs so that the advertised window
  // covers one with room to spare. The send buffer lets about one BDP be in flight (the kernel
  // doubles the requested size for its bookkeeping): it bounds what TCP can have in flight, so a
  // sender cannot overfill the path's queue (bbr's 2 x BDP congestion window otherwise overflows a
  // one-BDP router queue, and bbr v1 then takes the losses for a policer and caps its rate).
  std::size_t effective_receive_buffer() const;
  std::size_t effective_send_buffer() const;
  // The congestion control of stream `stream` (LONGPIPE_CONGESTION's list entry).
  std::string congestion_for_stream(std::size_t stream) const;

  // Reads the process environment (and LONGPIPE_CONFIG's file); throws ConfigError.
  static Config from_environment();
  // Same rules from an explicit variable map (the environment's role); used by tests and tools.
  static Config from_variables(const std::map<std::string, std::string>& variables);

  // "LONGPIPE_X=value   # meaning (default d, range r)" lines: what `longpipe config` prints.
  std::string describe() const;
};

}  // namespace lp
