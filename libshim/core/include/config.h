// Config: every tunable of the transport engine, read from LONGPIPE_* environment variables and an
// optional config file (LONGPIPE_CONFIG=path, KEY=VALUE lines; the environment wins).
// Every value is validated; a bad one throws ConfigError naming the variable and the accepted range.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
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

// LONGPIPE_CARRIER: what a session's messages travel on.
enum class CarrierChoice {
  kTcp,   // tuned TCP connections
  kUdp,   // datagrams: a TCP control connection for the handshake, messages paced over UDP
          // (docs/engine/datagram-carrier.md)
  kAuto,  // the default. Per session, decided by the dialler before it dials: udp on a path its cache
          // knows as long and lossy or long enough to warm-start on (carrier_choice.h), else tcp from
          // the first byte; an acceptor set to auto follows, one set to tcp makes it tcp
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
                                         // (once its host refused or reset a connection: the process is gone)
  Milliseconds silent_path_timeout{600000}; // LONGPIPE_SILENT_PATH_MS: silence of a path that refuses nothing
                                         // after which the peer is given up on (0 = never): outages last minutes
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
  // Measured path state (docs/engine/path-state.md): the engine
  // always measures each path's round trip and rate and reports them. With LONGPIPE_RTT=auto and
  // LONGPIPE_BANDWIDTH=auto it also sizes the socket buffers from them (path_estimator.h); a number
  // is a hint and cap (the RTT before the first sample, a ceiling on the rate; with both, the
  // buffers are sized before connect). The default is the numbers below, since measured sizing
  // settles MPI collectives' send buffer far too small after their bursts; the default rate is a
  // floor that a faster measured rate raises (bandwidth_stand_in), a rate the user sets a cap.
  double bandwidth_mbit = 155.0;     // LONGPIPE_BANDWIDTH: path rate (Mbit/s) for the BDP
  Milliseconds rtt{540};             // LONGPIPE_RTT: path round trip for the BDP
  bool bandwidth_given = true;       // LONGPIPE_BANDWIDTH is a number (not "auto")
  // LONGPIPE_BANDWIDTH was not set: its default stands in for a rate nobody stated, so it is a floor
  // for the buffers, not a cap. A path measured faster than it raises them (path_estimator.h,
  // buffers_above_stand_in): else the send buffer held at the stand-in's limits a faster path.
  bool bandwidth_stand_in = true;
  bool rtt_given = true;             // LONGPIPE_RTT is a number (not "auto")
  // LONGPIPE_PATH_CACHE: the warm-start cache (path_cache.h): "auto" = $XDG_CACHE_HOME/longpipe/paths
  // or ~/.cache/longpipe/paths, "off", or an absolute file name.
  std::string path_cache = "auto";
  std::size_t receive_buffer = 0;    // LONGPIPE_RECEIVE_BUFFER: bytes; 0 = kReceiveBufferBdps x BDP
  std::size_t send_buffer = 0;       // LONGPIPE_SEND_BUFFER: bytes; 0 = kSendBufferBdps x BDP
  // The default carrier is two TCP connections per session: small messages on a cubic stream,
  // large ones on a stream whose congestion control depends on the host ("auto"). Why (for bursts
  // of messages on a long path; docs/engine/tcp-carrier.md says why):
  //  - bbr paces an application-limited burst. Its delivery-rate samples never span less than one
  //    round trip, so its bandwidth estimate settles at about burst / RTT and STARTUP's pacing gain
  //    (2.89) sends every burst over about RTT / 1.89 whatever its size. Once a burst is large
  //    enough for the link rate to bind, bbr is near the floor, except in the batch where its
  //    ProbeRTT falls (every 10 s: 4 segments for 200 ms and a round trip).
  //  - cubic does not pace: a burst that fits the congestion window leaves at once. But it
  //    restarts slow start after a pause longer than one RTO (stock tcp_slow_start_after_idle = 1;
  //    bbr is exempt), and random loss keeps its window small for minutes at a long RTT. Hence a
  //    cubic connection switches to bbr when either shows up (congestion_fallback below).
  //  - "auto" (idle_restart.h, resolve_congestion): cubic, paced by the kernel, where the host keeps
  //    windows across idle (tcp_slow_start_after_idle = 0) and the send buffer is a fixed size (the
  //    default): no ProbeRTT; bbr otherwise.
  // LONGPIPE_STREAMS=1 LONGPIPE_CONGESTION=bbr LONGPIPE_SMALL_MESSAGE=0 gives one bbr stream.
  //
  // LONGPIPE_CONGESTION: TCP_CONGESTION name, "system", or "auto"; a comma list gives stream i entry
  // i (modulo the list's length). Default: cubic for stream 0 (small messages), auto for stream 1.
  std::string congestion = "cubic,auto";
  // LONGPIPE_CONGESTION_FALLBACK ("none" = empty = off): a stream whose congestion control is not
  // this one switches to it, once per connection, before a write that cubic would handle badly:
  //  - after its first TCP retransmission (a lossy path, or one that cubic's unpaced bursts
  //    overfill), or
  //  - when nothing is in flight, the window has grown past the initial one and the last data left
  //    about one RTO ago, i.e. the kernel would restart slow start on this write (stock
  //    tcp_slow_start_after_idle). Back-to-back bursts pause one RTT, less than the RTO.
  // bbr implements cong_control, so the kernel skips both the idle restart and the application-
  // limited window decay for it; switching keeps the window the connection has built.
  std::string congestion_fallback = "bbr";
  // LONGPIPE_SMALL_MESSAGE: with two or more streams, messages of at most this many bytes travel on
  // stream 0 and larger ones on the others (0 = stripe everything round robin). 32 KiB: a burst of
  // 100 16 KiB messages is still one that bbr would pace (see above), and a front end adds its own
  // header to a 16 KiB message; from 64 KiB on bbr is at the floor and loss-tolerant, while a fresh
  // cubic connection's slow start ends early on the growing queueing delay.
  std::size_t small_message = 32768;
  std::size_t streams = 2;           // LONGPIPE_STREAMS: parallel TCP connections per session
  // LONGPIPE_SPILL_STREAMS: more TCP connections, dialled with a new session's first streams, that
  // carry only what a stream's full window cannot send yet while it is below the path's BDP
  // (stream_scheduler.h). Each brings its own initial window of 10 segments, which a fresh
  // connection cannot raise without root. 8: with stream 0, 9 windows of 9 free segments take 100
  // messages of 1 KiB (75 segments, 12 messages per window) in the first flight.
  std::size_t spill_streams = 8;
  // LONGPIPE_SPILL_LARGE: on | off. Frames larger than a fresh connection's initial window spill
  // too, queued behind the spill stream's window that sends them soonest (stream_scheduler.h);
  // off: only frames a spill stream's window sends whole at once.
  bool spill_large = true;
  // LONGPIPE_FAST_OPEN: on | off. TCP Fast Open: dials set TCP_FASTOPEN_CONNECT (HELLO rides in
  // the SYN to a host whose cookie the kernel cached: a known host's first batch one round trip
  // sooner), the listener sets TCP_FASTOPEN (needs bit 2 of the host's net.ipv4.tcp_fastopen).
  // The bytes on the wire are the same either way.
  bool fast_open = true;
  // LONGPIPE_CARRIER: tcp | udp | auto. Agreed per session in the handshake (carrier_choice.h):
  // tcp at one end and udp at the other fail the session with an error naming both. auto by default:
  // no slower than tcp on long and short paths, new and known (docs/engine/datagram-carrier.md, "auto as
  // the default"), and it brings datagrams to known long and lossy paths.
  CarrierChoice carrier = CarrierChoice::kAuto;
  bool datagram_carrier() const { return carrier == CarrierChoice::kUdp; }
  // LONGPIPE_DATAGRAM_FEC: on | off. Repair datagrams over the tail of each burst on the datagram
  // carrier, when the path loses (tail_fec.h); off leaves the ARQ's re-sends alone (for comparison).
  bool datagram_fec = true;

  // --- identity and security ---
  std::string listen;                // LONGPIPE_LISTEN: [host][:port]; empty = all addresses, ephemeral port
  // LONGPIPE_GATEWAY: the Unix socket of this site's gateway (longpiped; docs/engine/gateway.md).
  // Set, the engine asks it for the site's name, names itself "<site>/host:port" and dials every
  // "<site>/..." peer through it, on the TCP carrier. Empty: direct sessions only.
  std::string gateway;
  std::string key;                   // LONGPIPE_KEY (or LONGPIPE_KEY_FILE): shared secret of the job; required
  bool encryption = true;            // LONGPIPE_ENCRYPTION: on | off (frames authenticated, not encrypted)
  bool start_jump = true;            // LONGPIPE_START_JUMP: on | off (datagram start-up from a packet train's rate;
                                     // safe because the cruise yields to a standing queue: cubic keeps its share)
  bool pacing_catch_up = false;      // LONGPIPE_PACING_CATCH_UP: on | off (a datagram sender that woke late makes up
                                     // what refills the pipe; off by default: no goodput gain, fairness margin
                                     // smaller; docs/engine/datagram-carrier.md, "The sending thread on a loaded host")

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
  // Whether a socket buffer is sized from measurements (neither an explicit size nor both hints).
  bool measured_send_buffer() const { return send_buffer == 0 && !(rtt_given && bandwidth_given); }
  bool measured_receive_buffer() const { return receive_buffer == 0 && !(rtt_given && bandwidth_given); }
  // Whether a buffer sized from the numbers before connect may be raised above them by a measured
  // rate (both numbers in force, LONGPIPE_BANDWIDTH only the default's stand-in, no explicit size).
  bool send_buffer_above_stand_in() const {
    return send_buffer == 0 && rtt_given && bandwidth_given && bandwidth_stand_in;
  }
  bool receive_buffer_above_stand_in() const {
    return receive_buffer == 0 && rtt_given && bandwidth_given && bandwidth_stand_in;
  }
  // LONGPIPE_BANDWIDTH as a cap of the measured rate (bytes/s): only when the user set a number.
  std::optional<double> bandwidth_cap_bytes_per_second() const {
    if (!bandwidth_given || bandwidth_stand_in) return std::nullopt;
    return bandwidth_mbit * 1e6 / 8;
  }
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
