// Every LONGPIPE_* setting with its accepted range, and the parsers that check them.
#include "config/settings.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "job_key.h"
#include "wire/wire_frame.h"

namespace lp::config_settings {

void fail(const std::string& name, const std::string& value, const std::string& accepted) {
  throw ConfigError(std::string(kPrefix) + name + "='" + value + "' is invalid: expected " + accepted);
}

namespace {

// Upper bounds: generous, but they keep a typo from asking for terabytes.
constexpr std::int64_t kMaxTimerMs = 24LL * 3600 * 1000;      // one day
constexpr std::size_t kMaxUnixSocketPath = 107;                 // sockaddr_un::sun_path less its NUL
constexpr std::int64_t kMaxWindowMessages = 1 << 24;
constexpr std::int64_t kMaxWindowBytes = 1LL << 34;           // 16 GiB
constexpr std::int64_t kMaxMessageBytes = 1LL << 30;          // 1 GiB (frame length is 32 bits)
constexpr std::int64_t kMaxSocketBuffer = 1LL << 30;

// A Linux congestion control module name (TCP_CA_NAME_MAX is 16 with the terminator).
bool is_congestion_name(const std::string& name) {
  return !name.empty() && name.size() <= 15 &&
         name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") == std::string::npos;
}

std::int64_t parse_integer(const std::string& name, const std::string& text, std::int64_t min, std::int64_t max,
                           const std::string& unit) {
  const std::string accepted = "an integer " + unit + " from " + std::to_string(min) + " to " + std::to_string(max);
  if (text.empty()) fail(name, text, accepted);
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str() || *end != '\0' || value < min || value > max) fail(name, text, accepted);
  return value;
}

double parse_real(const std::string& name, const std::string& text, double min, double max, const std::string& unit) {
  std::ostringstream accepted;
  accepted << "a number " << unit << " from " << min << " to " << max;
  if (text.empty()) fail(name, text, accepted.str());
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (errno != 0 || end == text.c_str() || *end != '\0' || !std::isfinite(value) || value < min || value > max) {
    fail(name, text, accepted.str());
  }
  return value;
}

std::string window_full_name(WindowFullPolicy policy) {
  switch (policy) {
    case WindowFullPolicy::kBlock: return "block";
    case WindowFullPolicy::kFail: return "fail";
    case WindowFullPolicy::kDropOldest: return "drop-oldest";
    case WindowFullPolicy::kKeepLatest: return "keep-latest";
  }
  return "?";
}

std::string pin_name(const PinPolicy& pin) {
  switch (pin.mode) {
    case PinPolicy::Mode::kAuto: return "auto";
    case PinPolicy::Mode::kOff: return "off";
    case PinPolicy::Mode::kCore: return std::to_string(pin.core);
  }
  return "?";
}

std::string format_real(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

// A millisecond timer setting bound to one Config member.
Setting timer(const char* name, const char* meaning, Config::Milliseconds Config::*member, std::int64_t min) {
  return Setting{name, meaning,
                 [=](Config& c, const std::string& v) {
                   c.*member = Config::Milliseconds(parse_integer(name, v, min, kMaxTimerMs, "(milliseconds)"));
                 },
                 [=](const Config& c) { return std::to_string((c.*member).count()); }};
}

// A byte or count setting bound to one size_t Config member.
Setting size(const char* name, const char* meaning, std::size_t Config::*member, std::int64_t min, std::int64_t max,
             const char* unit) {
  return Setting{name, meaning,
                 [=](Config& c, const std::string& v) {
                   c.*member = static_cast<std::size_t>(parse_integer(name, v, min, max, unit));
                 },
                 [=](const Config& c) { return std::to_string(c.*member); }};
}

// A switch: "on" or "off", nothing else.
Setting on_off(const char* name, const char* meaning, bool Config::*member) {
  return Setting{name, meaning,
                 [=](Config& c, const std::string& v) {
                   if (v != "on" && v != "off") fail(name, v, "on or off");
                   c.*member = v == "on";
                 },
                 [=](const Config& c) { return std::string(c.*member ? "on" : "off"); }};
}

}  // namespace

const std::vector<Setting>& settings() {
  static const std::vector<Setting> table = {
      timer("RTO_INITIAL_MS", "retransmission timeout before the first RTT sample (RFC 6298: 1000)",
            &Config::rto_initial, 1),
      timer("RTO_MIN_MS", "lower bound of the retransmission timeout", &Config::rto_min, 1),
      timer("RTO_MAX_MS", "upper bound of the backed-off retransmission timeout", &Config::rto_max, 1),
      Setting{"RTO_BACKOFF", "factor applied to the RTO after each expiry",
              [](Config& c, const std::string& v) { c.rto_backoff = parse_real("RTO_BACKOFF", v, 1.0, 16.0, ""); },
              [](const Config& c) { return format_real(c.rto_backoff); }},
      timer("ACK_DELAY_MS", "delay before a cumulative ACK is sent (0 = acknowledge at once)", &Config::ack_delay, 0),
      size("ACK_EVERY", "with an ACK delay, acknowledge at once after this many messages", &Config::ack_every, 1,
           kMaxWindowMessages, "(messages)"),
      timer("KEEPALIVE_MS", "idle time after which a keep-alive frame is sent", &Config::keepalive_interval, 10),
      timer("DEAD_PEER_MS", "silence after which a peer whose host refuses or resets connections is declared dead",
            &Config::dead_peer_timeout, 100),
      timer("SILENT_PATH_MS", "silence of a path that answers nothing (an outage) before the peer is given up on; 0 = never",
            &Config::silent_path_timeout, 0),
      timer("CONNECT_TIMEOUT_MS", "limit of one connect + authentication attempt", &Config::connect_timeout, 10),
      timer("CONNECT_RETRY_MS", "first pause before redialling (doubles after each failure)",
            &Config::connect_retry_initial, 1),
      timer("CONNECT_RETRY_MAX_MS", "ceiling of the redial back-off", &Config::connect_retry_max, 1),
      timer("LINGER_MS", "how long shutdown waits for unacknowledged messages", &Config::linger, 0),
      size("WINDOW_MESSAGES", "unacknowledged messages per session (and queued ones)", &Config::window_messages, 1,
           kMaxWindowMessages, "(messages)"),
      size("WINDOW_BYTES", "unacknowledged body bytes per session (and queued ones)", &Config::window_bytes, 1,
           kMaxWindowBytes, "(bytes)"),
      Setting{"WINDOW_FULL", "what send() does while the window is full",
              [](Config& c, const std::string& v) {
                if (v == "block") c.window_full = WindowFullPolicy::kBlock;
                else if (v == "fail") c.window_full = WindowFullPolicy::kFail;
                else if (v == "drop-oldest") c.window_full = WindowFullPolicy::kDropOldest;
                else if (v == "keep-latest") c.window_full = WindowFullPolicy::kKeepLatest;
                else fail("WINDOW_FULL", v, "one of block, fail, drop-oldest, keep-latest");
              },
              [](const Config& c) { return window_full_name(c.window_full); }},
      size("MAX_MESSAGE", "largest message body sent or accepted", &Config::max_message, 1, kMaxMessageBytes,
           "(bytes)"),
      Setting{"BANDWIDTH",
              "path rate in Mbit/s: 'auto' = measured (delivery rate); a number caps the measured rate, and "
              "with LONGPIPE_RTT sizes the buffers before connect; unset, the default is a floor that a "
              "faster measured rate raises the buffers above",
              [](Config& c, const std::string& v) {
                c.bandwidth_stand_in = false;
                if (v == "auto") {
                  c.bandwidth_given = false;
                  return;
                }
                c.bandwidth_mbit = parse_real("BANDWIDTH", v, 0.001, 1e6, "(Mbit/s), or auto");
                c.bandwidth_given = true;
              },
              [](const Config& c) { return c.bandwidth_given ? format_real(c.bandwidth_mbit) : std::string("auto"); }},
      Setting{"RTT",
              "path round trip in ms: 'auto' = measured (handshake, TCP_INFO, ARQ); a number is the RTT "
              "assumed before the first sample, and with LONGPIPE_BANDWIDTH sizes the buffers before connect",
              [](Config& c, const std::string& v) {
                if (v == "auto") {
                  c.rtt_given = false;
                  return;
                }
                c.rtt = Config::Milliseconds(parse_integer("RTT", v, 0, kMaxTimerMs, "(milliseconds), or auto"));
                c.rtt_given = true;
              },
              [](const Config& c) { return c.rtt_given ? std::to_string(c.rtt.count()) : std::string("auto"); }},
      Setting{"PATH_CACHE",
              "warm-start cache of measured paths: auto ($XDG_CACHE_HOME/longpipe/paths or "
              "~/.cache/longpipe/paths), off, or an absolute file name",
              [](Config& c, const std::string& v) {
                if (v != "auto" && v != "off" && (v.empty() || v.front() != '/' || v.back() == '/')) {
                  fail("PATH_CACHE", v, "auto, off, or an absolute file name (e.g. /var/tmp/longpipe-paths)");
                }
                c.path_cache = v;
              },
              [](const Config& c) { return c.path_cache; }},
      size("RECEIVE_BUFFER", "TCP receive buffer in bytes (0 = 2 x the bandwidth-delay product, measured unless both hints are set)",
           &Config::receive_buffer, 0, kMaxSocketBuffer, "(bytes)"),
      size("SEND_BUFFER", "TCP send buffer in bytes (0 = 0.7 x the bandwidth-delay product, measured unless both hints are set; the kernel doubles it)",
           &Config::send_buffer, 0, kMaxSocketBuffer, "(bytes)"),
      size("STREAMS", "parallel TCP connections per session (messages striped, reassembled in order)",
           &Config::streams, 1, static_cast<std::int64_t>(kFirstSpillStream), "(connections)"),
      size("SPILL_STREAMS",
           "extra TCP connections dialled with a new session that take what a full congestion window "
           "cannot send yet, until it covers the path (0 = off)",
           &Config::spill_streams, 0, static_cast<std::int64_t>(kMaxSpillStreams), "(connections)"),
      on_off("SPILL_LARGE",
             "on: a new session's frames larger than an initial window queue on the spill stream that sends "
             "them soonest during start-up (all spill streams together within one BDP); off: only frames a "
             "spill stream's window sends at once spill",
             &Config::spill_large),
      on_off("FAST_OPEN",
             "on: TCP Fast Open on the TCP connections (HELLO in the SYN to a host that gave a cookie "
             "before: the first batch one round trip sooner; accepting needs net.ipv4.tcp_fastopen bit 2); "
             "off: ordinary connects",
             &Config::fast_open),
      Setting{"CONGESTION",
              "TCP congestion control per stream (e.g. bbr, cubic, reno; 'system' = the host default; 'auto' = "
              "paced cubic where the host keeps windows across idle and the send buffer is fixed, else bbr)",
              [](Config& c, const std::string& v) {
                std::stringstream list(v);
                std::string name;
                bool any = false;
                while (std::getline(list, name, ',')) {
                  if (!is_congestion_name(name)) {
                    fail("CONGESTION", v,
                         "a congestion control name such as bbr, cubic, reno, 'system' or 'auto' (or a comma "
                         "list, one per stream)");
                  }
                  any = true;
                }
                if (!any || v.back() == ',') fail("CONGESTION", v, "a congestion control name or a comma list");
                c.congestion = v;
              },
              [](const Config& c) { return c.congestion; }},
      Setting{"CONGESTION_FALLBACK",
              "congestion control a stream switches to, once, when a retransmission or an idle restart shows "
              "its own one is unsuited ('none' = never switch; also restarts a slow start that ended without a "
              "loss below half the BDP)",
              [](Config& c, const std::string& v) {
                if (v != "none" && (!is_congestion_name(v) || v == "system")) {
                  fail("CONGESTION_FALLBACK", v, "a congestion control name such as bbr, or 'none'");
                }
                c.congestion_fallback = v == "none" ? "" : v;
              },
              [](const Config& c) { return c.congestion_fallback.empty() ? std::string("none") : c.congestion_fallback; }},
      Setting{"CARRIER",
              "what messages travel on: tcp (tuned TCP connections), udp (paced datagrams with a TCP control "
              "connection), auto (the default; per session, decided by the end that dials: udp on a path its "
              "path cache knows as long and lossy or as a long path to warm-start on, else tcp; an acceptor "
              "set to tcp makes it tcp); tcp at one end and udp at the other is an error, and so is udp at "
              "the acceptor against auto that chose tcp",
              [](Config& c, const std::string& v) {
                if (v == "tcp") c.carrier = CarrierChoice::kTcp;
                else if (v == "udp") c.carrier = CarrierChoice::kUdp;
                else if (v == "auto") c.carrier = CarrierChoice::kAuto;
                else fail("CARRIER", v, "one of tcp, udp, auto");
              },
              [](const Config& c) {
                return std::string(c.carrier == CarrierChoice::kUdp ? "udp" : c.carrier == CarrierChoice::kAuto ? "auto" : "tcp");
              }},
      on_off("DATAGRAM_FEC",
              "on: the datagram carrier sends repair datagrams over a burst's last round trip when the path "
              "loses (the receiver recovers those units without waiting a round trip); off: it does not",
             &Config::datagram_fec),
      size("SMALL_MESSAGE", "with 2+ streams: messages up to this size use stream 0, larger ones the others (0 = off)",
           &Config::small_message, 0, kMaxMessageBytes, "(bytes)"),
      Setting{"LISTEN", "listen address [host][:port] (empty = all addresses, ephemeral port)",
              [](Config& c, const std::string& v) { c.listen = v; },
              [](const Config& c) { return c.listen; }},
      Setting{"GATEWAY",
              "Unix socket of this site's gateway (longpiped): sessions to peers named <site>/host:port go "
              "through it and this process names itself <site>/host:port (empty = direct sessions only)",
              [](Config& c, const std::string& v) {
                // sockaddr_un's sun_path holds 108 bytes with the terminating NUL.
                if (!v.empty() && (v.front() != '/' || v.back() == '/' || v.size() > kMaxUnixSocketPath ||
                                   v.find('\0') != std::string::npos)) {
                  fail("GATEWAY", v, "an absolute socket file name of at most " + std::to_string(kMaxUnixSocketPath) +
                                         " bytes (e.g. /run/longpipe/A.sock), or empty");
                }
                c.gateway = v;
              },
              [](const Config& c) { return c.gateway; }},
      Setting{"KEY", "shared secret of the job (front ends make one per job when neither KEY nor KEY_FILE is set)",
              [](Config& c, const std::string& v) {
                if (v.empty() || v.size() > kMaxKeyBytes) {
                  fail("KEY", "<hidden>", "1 to " + std::to_string(kMaxKeyBytes) + " bytes");
                }
                c.key = v;
              },
              [](const Config& c) { return c.key.empty() ? std::string("(none)") : "(set, hidden)"; }},
      on_off("ENCRYPTION",
              "on: every frame after the handshake AES-256-GCM encrypted and authenticated; off: authenticated "
              "only (for links already protected); a session is encrypted if either end wants it",
             &Config::encryption),
      on_off("START_JUMP",
              "on (default): a datagram session on a new path sends its first window back to back and, from "
              "the spacing of its ACKs, starts pacing at 0.75 x the bottleneck's rate after one round trip; off: "
              "start-up doubles from its first window",
             &Config::start_jump),
      on_off("PACING_CATCH_UP",
              "on: cruising, a datagram sender that woke late (a loaded host) makes up the time it missed as "
              "far as that refills the pipe, up to a quarter of the round trip; off (default): up to 10 ms",
             &Config::pacing_catch_up),
      Setting{"STATS", "file for JSON statistics, written at exit and on SIGUSR1",
              [](Config& c, const std::string& v) { c.stats_path = v; },
              [](const Config& c) { return c.stats_path; }},
      Setting{"PIN",
              "progress thread placement: auto (a core away from the caller's on 4 or more cores, unpinned "
              "below), off, or a core index",
              [](Config& c, const std::string& v) {
                if (v == "auto") c.pin = {PinPolicy::Mode::kAuto, -1};
                else if (v == "off") c.pin = {PinPolicy::Mode::kOff, -1};
                else c.pin = {PinPolicy::Mode::kCore, static_cast<int>(parse_integer("PIN", v, 0, 4095, "(core, or auto/off)"))};
              },
              [](const Config& c) { return pin_name(c.pin); }},
  };
  return table;
}

}  // namespace lp::config_settings
