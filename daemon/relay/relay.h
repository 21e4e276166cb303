// Relay: the gateway's forwarded streams, as a state machine without I/O (in the style of KCP or
// quinn). The caller (the I/O shell, shell/gateway.h) passes in what happened: a local process's
// CONNECT, bytes read from a local socket, bytes written to it, frames from peer gateways, a peer
// given up on. It polls out what to do: frames to hand to the engine (poll_transmit), sockets to
// dial, shut down or close (poll_local), sockets whose interest changed (take_dirty), log lines.
// Nothing here blocks, reads a clock or touches a socket.
//
// Frames between gateways (lp::Message fields): tag = kind (FrameKind), source = stream id,
// flags bit 0 = "this stream was opened by the receiver of this frame", context and body per kind:
//   HELLO   body "<site> <instance id, 16 hex digits>", context = the sender's stream window;
//           flags bit 1 = an answer: every HELLO that is not an answer gets one, so a gateway
//           learns its peer's instance and window after its own start, a peer's or a failure
//   OPEN    body "<host>:<port>" to dial at the receiver's site
//   DATA    body = stream bytes
//   CREDIT  context = bytes the sender has written to its local socket since its last CREDIT
//   CLOSE   context 0 = end of the sender's direction (FIN), 1 = reset; body = the reason
// A stream is named (site, opened by us?, id): each gateway numbers the streams it opens.
//
// Flow control: each direction of a stream may have at most the receiver's stream window of bytes
// sent and not yet written to the receiver's local socket (CREDIT gives them back). A receiver
// therefore always takes every frame off the shared session at once, and a stream whose local
// reader is slow stops only itself. Bytes read from a local socket wait in a buffer of at most
// outbound_buffer bytes until the stream's credit and the session let them go.
//
// Fairness: poll_transmit takes one frame per destination site in turn (skipping sites whose
// session is full, set_blocked), and within a site one frame per stream in turn.
//
// Reverse mode: a peer configured without an address (dial-in) is never sent to before its HELLO
// comes; its gateway dials us, and the endpoint that HELLO came from is where frames for it go (the
// engine sends them on the session the peer opened).
//
// Routes: a CONNECT to a site reached through another (route C via B) becomes an OPEN to B whose
// body names the final site, "C/<host>:<port>". B, if allowed to relay between the two sites
// (relay A C), opens a stream of its own to C and splices the two: bytes taken off one stream's
// receive queue enter the other's send queue only as far as that queue has room (outbound_buffer),
// so credit flows end to end and memory per relayed pair stays bounded; a FIN passes on after the
// last byte, a reset of either resets both. A relayed OPEN to C names no site: one hop at most.
//
// Peers: a HELLO with a new instance id (the peer gateway restarted) or a peer failure resets every
// stream with that site; its processes see a dropped connection and their sessions re-dial.
// Frames that break these rules are refused (counted, logged), never trusted: a stream's peer that
// exceeds its window or sends data after its end resets that stream only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "message.h"
#include "relay/byte_queue.h"
#include "relay/names.h"

namespace lpd {

enum class FrameKind : std::int32_t { kHello = 1, kOpen = 2, kData = 3, kCredit = 4, kClose = 5 };
constexpr std::uint32_t kOpenedByReceiver = 1;  // flags bit 0
constexpr std::uint32_t kHelloAnswer = 2;       // flags bit 1 of a HELLO

struct RelayLimits {
  std::size_t stream_window = 16u << 20;    // bytes per stream and direction not yet written locally
  std::size_t max_streams = 1024;           // forwarded streams at once (both directions' openers)
  std::size_t max_data_frame = 64u << 10;   // largest DATA body sent
  std::size_t outbound_buffer = 256u << 10; // bytes read from one local socket, waiting to be framed
  static constexpr std::size_t kMinWindow = 64u << 10;
  static constexpr std::size_t kMaxWindow = 1u << 30;
  static constexpr std::size_t kMaxControlQueue = 4096;  // CLOSE replies waiting per site
};

using Handle = std::uint64_t;  // a local socket (Unix client or dialled TCP), named by the relay

struct Transmit {
  std::string site;
  std::string endpoint;  // the engine's peer endpoint ("host:port") of that site's gateway
  lp::Message message;
};

struct LocalAction {
  enum class Kind {
    kDial,           // open a TCP connection to `address` for `handle`; report on_dialled/on_local_reset
    kShutdownWrite,  // every byte is written: shutdown(SHUT_WR) (the peer's FIN)
    kClose,          // close the socket (`reset`: abortively); the handle is gone
  } kind;
  Handle handle = 0;
  HostPort address;
  bool reset = false;
  // kClose with `reset`: the bytes that came for the socket before the reset and are not written
  // yet. The shell writes what the socket takes without waiting, then closes: as TCP delivers what
  // arrived before a reset, a process thus reads its peer's last words (a handshake's refusal).
  std::vector<std::byte> last_bytes;
};

class Relay {
 public:
  Relay(std::string site, std::uint64_t instance, RelayLimits limits);

  // The other sites' gateways: name -> engine endpoint. A site no longer listed, or listed at
  // another address, has its streams reset. Each new one gets our HELLO.
  // An empty endpoint: a dial-in peer (its address is learnt from its HELLO).
  void set_peers(const std::map<std::string, std::string>& peers);
  // Final site -> the peer site whose gateway relays to it. Applies to new CONNECTs.
  void set_routes(const std::map<std::string, std::string>& routes) { routes_ = routes; }
  // Pairs of sites (either order) whose streams this gateway relays. Applies to new OPENs.
  void set_relays(const std::vector<std::pair<std::string, std::string>>& pairs);

  // --- the local side ---
  // A process's CONNECT "<site>/<host>:<port>": a handle (the connection is now a stream) or the
  // reason for ERR.
  struct Connected {
    Handle handle = 0;
    std::string error;
  };
  Connected connect(std::string_view target);
  // Bytes the shell may read from the handle's socket now (0: stop watching it for input).
  std::size_t read_budget(Handle handle) const;
  // At most read_budget bytes read.
  void on_local_data(Handle handle, std::span<const std::byte> bytes);
  void on_local_eof(Handle handle);
  // The socket failed or was reset, or a dial failed: the stream is reset at both ends.
  void on_local_reset(Handle handle, const std::string& reason);
  void on_dialled(Handle handle);
  // Bytes waiting to be written to the handle's socket (empty: stop watching it for output).
  std::span<const std::byte> pending_output(Handle handle) const;
  void on_written(Handle handle, std::size_t bytes);

  // --- the peer side ---
  void on_frame(const std::string& endpoint, const lp::Message& frame);
  // The engine gave up on the peer's session (`refused`: false, from take_peer_failures: its next
  // session may work, so a HELLO asks) or refuses to send to it at all (`refused`: true, PeerFailed
  // from a send: the frame is dropped, and the site gets no frames and CONNECTs to it are refused
  // until a HELLO from it comes: a new process's, or the answer to a retry_refused HELLO).
  void on_peer_failed(const std::string& endpoint, const std::string& reason, bool refused);
  // The sites whose gateways the engine refuses to send to (site, endpoint): the shell gives each
  // another chance now and then (Engine::retry_peer, then retry_refused), since both gateways may
  // have given up on each other while both still run.
  std::vector<std::pair<std::string, std::string>> refused_peers() const;
  // The engine tries the site's gateway again: a HELLO asks who is there (a dial-in peer's own
  // HELLO comes to us). CONNECTs to the site are still refused until its HELLO comes.
  void retry_refused(const std::string& site);

  // --- outputs ---
  std::optional<Transmit> poll_transmit();
  // The engine had no room for a frame to `site` (the shell keeps it and retries): no more frames
  // for that site until unblocked.
  void set_blocked(const std::string& site, bool blocked);
  std::optional<LocalAction> poll_local();
  std::vector<Handle> take_dirty();
  std::vector<std::string> take_log();

  std::string status_json() const;
  std::size_t stream_count() const { return streams_.size(); }
  std::size_t relayed_count() const;  // pairs of spliced streams
  std::uint64_t refused_frames() const { return refused_frames_; }
  const std::string& site() const { return site_; }

 private:
  struct Stream {
    Handle handle = 0;
    std::string site;
    bool mine = false;  // opened here (a local process's CONNECT)
    std::uint32_t id = 0;
    std::string target;
    bool connected = false;
    // local -> peer
    ByteQueue out;
    bool credit_known = false;  // the peer's window is known (its HELLO came)
    std::size_t peer_window = 0;
    std::uint64_t sent = 0, granted = 0;  // DATA bytes sent; CREDIT received
    bool open_pending = false, local_eof = false, fin_sent = false;
    // peer -> local
    ByteQueue in;
    std::uint64_t received = 0, written = 0, grants_sent = 0;
    bool fin_received = false, shutdown_done = false;
    bool queued = false;  // in its site's ready list
    // Relayed through this gateway: the other half of the pair (0 once it ended); no socket.
    bool spliced = false;
    Handle partner = 0;
    std::size_t send_credit() const { return static_cast<std::size_t>(peer_window + granted - sent); }
  };
  struct Peer {
    std::string endpoint;
    bool hello_pending = true, hello_answer_pending = false, blocked = false, up = false;
    bool refused = false;  // the engine refuses to send to it (cleared by retry_refused or its HELLO)
    std::optional<std::uint64_t> instance;
    std::size_t window = 0;  // from its HELLO
    std::deque<lp::Message> control;
    std::deque<Handle> ready;
    std::uint64_t frames_sent = 0, frames_received = 0, bytes_sent = 0, bytes_received = 0;
    std::string down_reason;
    bool dial_in = false;  // no address configured: its HELLO tells where it is
  };
  using Key = std::tuple<std::string, bool, std::uint32_t>;

  Stream* find(Handle handle);
  const Stream* find(Handle handle) const;
  Stream& add_stream(const std::string& site, bool mine, std::uint32_t id, std::string target);
  void end_stream(Stream& stream, bool reset, const std::string& reason, bool tell_peer);
  void reset_site(const std::string& site, const std::string& reason);
  void refresh(Stream& stream);
  bool wants_transmit(const Stream& stream) const;
  std::optional<lp::Message> stream_frame(Stream& stream);
  std::optional<lp::Message> next_frame(const std::string& site, Peer& peer);
  void maybe_finish(Stream& stream);
  void pass_on(Stream& from);  // a spliced stream's received bytes (and FIN) into its partner
  std::uint32_t new_id(const std::string& site);
  std::string usable(const std::string& site) const;  // why no stream may go to the site now, or ""
  void open_relayed(const std::string& from, std::uint32_t id, const Target& target);
  void control(const std::string& site, lp::Message frame);
  void refuse(const std::string& from, const std::string& why);
  void log(std::string line) { log_.push_back(std::move(line)); }
  // Inbound frames (relay_inbound.cpp), `site` known from the endpoint.
  void on_hello(const std::string& endpoint, const lp::Message& frame);
  void on_open(const std::string& site, const lp::Message& frame);
  void on_stream_frame(const std::string& site, const lp::Message& frame);
  void deliver(const std::string& site, const lp::Message& frame);
  lp::Message hello_frame(bool answer) const;

  const std::string site_;
  const std::uint64_t instance_;
  const RelayLimits limits_;
  std::map<std::string, Peer> peers_;          // includes our own site (loopback)
  std::map<std::string, std::string> sites_by_endpoint_;
  std::map<std::string, std::string> routes_;  // final site -> via
  std::vector<std::pair<std::string, std::string>> relays_;
  std::map<Handle, Stream> streams_;
  std::map<Key, Handle> keys_;
  Handle next_handle_ = 1;
  std::uint32_t next_id_ = 1;
  std::string cursor_;  // the site polled last
  std::deque<LocalAction> local_;
  std::vector<Handle> dirty_;
  std::vector<std::string> log_;
  std::uint64_t refused_frames_ = 0, streams_opened_ = 0;
};

}  // namespace lpd
