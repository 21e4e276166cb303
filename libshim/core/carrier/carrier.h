// Carrier: what sessions ride on. A carrier opens links to peers (dial), takes links peers opened
// (accept) and moves bytes; everything above it (handshake, session, endpoint) sees only this
// interface, so a datagram carrier can plug in beside TCP (tcp_carrier.h) without touching sessions.
// Only the engine's driver calls into a carrier: the deciding code never does I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace lp {

class FrameReader;

enum class IoStatus { kOk, kEndOfStream, kError };

// Begins every error a link reports when the site gateway refused or could not take its stream
// (carrier/gateway/): to a session that is the peer's host refusing, as ECONNREFUSED is.
inline constexpr const char kRefusedByGateway[] = "refused by the gateway";

// What the carrier granted a link: reported in the statistics.
struct SocketTuning {
  std::size_t requested_receive = 0;
  std::size_t requested_send = 0;
  std::size_t send_buffer = 0;     // getsockopt(SO_SNDBUF) (Linux reports twice the usable size)
  std::size_t receive_buffer = 0;  // getsockopt(SO_RCVBUF)
  bool forced = false;             // SO_*BUFFORCE was allowed
  std::string congestion;          // in effect
  std::string congestion_fallback; // LONGPIPE_CONGESTION_FALLBACK ("" = never switch)
  std::size_t path_bdp_bytes = 0;  // the path's bandwidth-delay product the fallback judges by
  std::size_t slow_start_restarts = 0;  // after slow starts that ended early (tcp_socket.h)
  bool spill_stream = false;       // a spill stream (stream_scheduler.h): an idle restart is no reason to switch
  // The host's tcp_slow_start_after_idle (tcp_path_info.h): false, and no idle restart ever shrinks
  // a window, so none is a reason to switch.
  bool host_restarts_idle = true;
  bool kernel_paced = false;       // SO_MAX_PACING_RATE switched the kernel's pacing on (tcp_socket.h)
  // Stream 0 (small messages) or a spill stream: on bbr, the spill decision counts only what its
  // pacing sends soon (idle_restart.h); a large-message stream's frames stay on it.
  bool small_frames = false;
  std::string note;                // why something differs from the request ("" if nothing)
};

// The carrier's view of a link's window (TCP_INFO for TCP).
struct TcpWindowInfo {
  unsigned snd_wscale = 0;
  unsigned rcv_wscale = 0;
  std::uint32_t snd_cwnd = 0;      // segments
  std::uint32_t snd_mss = 0;
  std::uint32_t rtt_us = 0;        // kernel's smoothed RTT
  std::uint32_t rttvar_us = 0;
  std::uint32_t total_retrans = 0;
};

// What a link shows of its path (TCP_INFO for TCP), for the session's PathEstimator.
struct LinkPathInfo {
  bool valid = false;
  std::uint32_t rtt_us = 0;          // smoothed
  std::uint32_t min_rtt_us = 0;      // the smallest the carrier saw
  double delivery_rate = 0;          // bytes/s of the last delivery-rate sample
  bool app_limited = true;           // that sample was taken while the sender had too little to send
  std::uint32_t snd_cwnd = 0;        // segments
  std::uint32_t snd_mss = 0;
  std::uint32_t unacked = 0;         // segments in flight
  std::uint64_t data_segments_out = 0;  // data segments sent so far, retransmissions included
  std::uint32_t total_retransmits = 0;  // segments retransmitted so far
  std::size_t send_buffer = 0;       // the kernel's sizes now (autotuned or set; as getsockopt reports them)
  std::size_t receive_buffer = 0;
  // The most bytes the application took in one round trip (tcpi_rcv_space): how fast the peer's
  // data arrives, as the receiving end sees it (0 = not measured).
  std::size_t received_per_rtt = 0;
};

// TCP Fast Open on one link (TCP_INFO; docs/engine/first-batch.md, "TCP Fast Open").
struct FastOpenResult {
  bool syn_data = false;  // the SYN carried data (dialler: connect() deferred the SYN to the first write)
  bool accepted = false;  // the peer's kernel acknowledged that data in its SYN-ACK (TCPI_OPT_SYN_DATA)
};

// What a link's congestion window holds at the moment of asking (TCP_INFO), in bytes: the spill
// decision's input (stream_scheduler.h).
struct StreamWindow {
  bool known = false;         // false: no TCP_INFO (then nothing spills)
  std::size_t window = 0;     // the congestion window: snd_cwnd x snd_mss (a paced stream: its room soon)
  std::size_t in_flight = 0;  // sent and not acknowledged: unacked x snd_mss
  std::size_t not_sent = 0;   // in the socket's buffer, not sent yet (tcpi_notsent_bytes)
  // The congestion window without a paced stream's cap (idle_restart.h): what a frame queued
  // behind the window waits for, a round trip per window (0: as `window`).
  std::size_t round_trip_window = 0;
};

// One link (a TCP connection) of a session. Never blocks.
class CarrierLink {
 public:
  virtual ~CarrierLink() = default;
  // The descriptor the event loop watches.
  virtual int poll_fd() const = 0;
  // After a dial: "" once the link is up, else why it failed.
  virtual std::string take_connect_error() = 0;
  // After a dial: the connect completed at once and no SYN has left yet (TCP Fast Open with the
  // peer's cookie cached): the first write leaves in the SYN, one round trip earlier.
  virtual bool first_write_in_syn() const { return false; }
  // Whether the SYN carried data and the peer took it; known once the SYN-ACK arrived.
  virtual FastOpenResult fast_open() const { return {}; }
  // Writes from `bytes` until the carrier is full; `written` receives how many left.
  virtual IoStatus write(std::span<const std::byte> bytes, bool established, std::size_t& written,
                         std::string& error) = 0;
  // Reads up to `budget` bytes into the frame reader (fewer if fewer are there).
  virtual IoStatus read(FrameReader& reader, std::size_t budget, std::size_t& bytes_read, std::string& error) = 0;
  // Called after bytes of an established link were read (TCP: keep delayed ACKs off).
  virtual void after_read() = 0;
  // An accepted link learned its stream index from HELLO: tune it for that stream.
  virtual void use_stream(std::size_t stream) = 0;
  // The next close is abrupt (TCP: RST), as a network reset would be.
  virtual void abort_on_close() = 0;
  // Nothing follows what was written: the peer reads the end of the stream after it (TCP: FIN),
  // while this end still reads. An exiting engine's goodbye (engine.cpp, drain_after_goodbye).
  virtual void finish_sending() {}
  // Reads and drops up to `budget` bytes of what arrived: kEndOfStream once the peer closed its
  // end, kError if it reset. A carrier that cannot wait for its peer reports the end at once.
  virtual IoStatus discard_input(std::size_t budget) {
    (void)budget;
    return IoStatus::kEndOfStream;
  }
  virtual const SocketTuning& tuning() const = 0;
  virtual TcpWindowInfo window_info() const = 0;
  // Measured path state (path_estimator.h); a carrier without it reports nothing.
  virtual LinkPathInfo path_info() const { return {}; }
  // Its congestion window now (one TCP_INFO read); a carrier without one reports it unknown.
  virtual StreamWindow stream_window() const { return {}; }
  // The peer's numeric address (the warm-start cache's key), "" if unknown.
  virtual std::string peer_address() const { return ""; }
  // Requests socket buffers of these sizes on the live link (0 = leave that one); the granted
  // sizes show in tuning().
  virtual void resize_buffers(std::size_t send, std::size_t receive) {
    (void)send;
    (void)receive;
  }
  // The path's bandwidth-delay product as measured (SocketTuning::path_bdp_bytes: the congestion
  // fallback judges slow-start exits by it).
  virtual void set_path_bdp(std::size_t bytes) { (void)bytes; }
  // This spill stream carried large frames (stream_scheduler.h) and grew a window worth keeping:
  // from now on an idle restart makes it switch to the congestion fallback (bbr keeps the window)
  // as a regular stream does. Called before its window is judged.
  virtual void keep_grown_window() {}
};

class Carrier {
 public:
  virtual ~Carrier() = default;
  // Starts opening a link to "host:port" (or "<site>/host:port" through a gateway) for stream
  // `stream`; throws with the reason.
  virtual std::unique_ptr<CarrierLink> dial(const std::string& peer, std::size_t stream) = 0;
  // A link a peer opened, or null when none is waiting.
  virtual std::unique_ptr<CarrierLink> accept() = 0;
  // The descriptor that becomes readable when accept() has something.
  virtual int listen_fd() const = 0;
  virtual std::uint16_t port() const = 0;
  virtual const SocketTuning& listen_tuning() const = 0;
};

}  // namespace lp
