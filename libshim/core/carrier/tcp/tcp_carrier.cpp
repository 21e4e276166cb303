#include "carrier/tcp/tcp_carrier.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "carrier/tcp/idle_restart.h"
#include "system_call.h"
#include "carrier/tcp/tcp_path_info.h"
#include "carrier/tcp/tcp_socket.h"
#include "carrier/stream_read.h"
#include "wire/wire_frame.h"

namespace lp {
namespace {

// bbr's window is its cwnd_gain (2) times its BDP estimate while it paces at 1x its bandwidth
// estimate: per round trip it sends about half its window, and the spill decision weighs streams by
// what they send per round trip (weighed by the whole window, a bbr spill stream is given too much).
constexpr std::size_t kBbrWindowPerRoundTrip = 2;

class TcpLink : public CarrierLink {
 public:
  TcpLink(FileDescriptor fd, const Config& config, SocketTuning tuning, bool first_write_in_syn = false)
      : fd_(std::move(fd)), config_(config), tuning_(std::move(tuning)), first_write_in_syn_(first_write_in_syn) {}

  int poll_fd() const override { return fd_.get(); }

  std::string take_connect_error() override {
    const int error = take_socket_error(fd_.get());
    return error == 0 ? std::string() : std::string("connect: ") + std::strerror(error);
  }

  bool first_write_in_syn() const override { return first_write_in_syn_; }
  FastOpenResult fast_open() const override {
    const bool acked = read_syn_data_acked(fd_.get());
    // An acceptor learns of the SYN's data only when it took it.
    return {first_write_in_syn_ || acked, acked};
  }

  IoStatus write(std::span<const std::byte> bytes, bool established, std::size_t& written,
                 std::string& error) override {
    written = 0;
    if (established && !bytes.empty()) fall_back_if_unsuited(fd_.get(), tuning_);
    while (written < bytes.size()) {
      const ssize_t n = ::send(fd_.get(), bytes.data() + written, bytes.size() - written, MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) break;
        error = std::string("send: ") + std::strerror(errno);
        return IoStatus::kError;
      }
      written += static_cast<std::size_t>(n);
    }
    return IoStatus::kOk;
  }

  IoStatus read(FrameReader& reader, std::size_t budget, std::size_t& bytes_read, std::string& error) override {
    bytes_read = 0;
    return read_stream(fd_.get(), reader, budget, bytes_read, error);
  }

  void after_read() override { rearm_quick_ack(fd_.get()); }

  void finish_sending() override { ::shutdown(fd_.get(), SHUT_WR); }  // best effort: a closing link

  IoStatus discard_input(std::size_t budget) override { return discard_stream(fd_.get(), budget); }

  void use_stream(std::size_t stream) override {
    if (stream != 0) choose_congestion(fd_.get(), congestion_wanted(config_, stream), tuning_);
    tuning_.spill_stream = stream >= kFirstSpillStream;
    tuning_.small_frames = stream == 0 || tuning_.spill_stream;
    pace_large_frames(fd_.get(), tuning_);
  }

  void abort_on_close() override {
    const linger abort{1, 0};  // close with RST
    ::setsockopt(fd_.get(), SOL_SOCKET, SO_LINGER, &abort, sizeof abort);
  }

  const SocketTuning& tuning() const override { return tuning_; }
  TcpWindowInfo window_info() const override { return read_window_info(fd_.get()); }
  LinkPathInfo path_info() const override { return read_link_path_info(fd_.get()); }
  StreamWindow stream_window() const override {
    // As the next write will find it: after the switch to the fallback that write may make. One
    // TCP_INFO read answers both questions, so they describe the same instant.
    const TcpInfoBytes info = read_tcp_info_bytes(fd_.get());
    const std::string next = congestion_for_next_write(info, tuning_);
    StreamWindow window = stream_window_from(
        info, host_restarts_idle_connections() && congestion_restarts_after_idle(next),
        tuning_.small_frames && congestion_paces_itself(next), next != tuning_.congestion && congestion_paces_itself(next));
    if (congestion_paces_itself(tuning_.congestion)) {
      window.window /= kBbrWindowPerRoundTrip;
      window.round_trip_window /= kBbrWindowPerRoundTrip;
    }
    return window;
  }
  std::string peer_address() const override { return read_peer_address(fd_.get()); }
  void resize_buffers(std::size_t send, std::size_t receive) override {
    resize_socket_buffers(fd_.get(), send, receive, tuning_);
  }
  void set_path_bdp(std::size_t bytes) override { tuning_.path_bdp_bytes = bytes; }
  void keep_grown_window() override {
    // A spill stream restarted at 10 segments after a pause between bursts carries little of the
    // next one: its grown window is worth keeping, as a stream's is.
    tuning_.spill_stream = false;
    fall_back_if_unsuited(fd_.get(), tuning_);  // as the next write would, before the window is read
  }

 private:
  FileDescriptor fd_;
  const Config& config_;
  SocketTuning tuning_;
  const bool first_write_in_syn_;  // a dial whose connect() left the SYN to the first write
};

}  // namespace

TcpCarrier::TcpCarrier(const Config& config) : config_(config) {
  listen_fd_ = listen_tuned(config_, listen_tuning_, port_);
}

std::unique_ptr<CarrierLink> TcpCarrier::dial(const std::string& peer, std::size_t stream) {
  const HostPort where = parse_host_port(peer, true);
  if (!where.site.empty()) {
    // Its host is reached through its site's gateway, not from here.
    throw std::invalid_argument(peer + " is behind the gateway of site " + where.site +
                                ": only a process with LONGPIPE_GATEWAY dials it");
  }
  socklen_t length = 0;
  const sockaddr_storage address = resolve(where, length);
  SocketTuning tuning;
  FileDescriptor fd = make_tuned_tcp_socket(address.ss_family, config_, stream, tuning);
  if (config_.fast_open) request_fast_open_connect(fd.get(), tuning);
  const int status = ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), length);
  if (status != 0 && errno != EINPROGRESS) throw SystemError("connect to " + peer, errno);
  // A non-blocking connect() that succeeds at once is TCP Fast Open with the peer's cookie cached:
  // no SYN has left, the first write sends it with HELLO (without a cookie: EINPROGRESS and a SYN
  // that asks for one, as an ordinary dial).
  const bool first_write_in_syn = status == 0 && config_.fast_open;
  return std::make_unique<TcpLink>(std::move(fd), config_, std::move(tuning), first_write_in_syn);
}

std::unique_ptr<CarrierLink> TcpCarrier::accept() {
  while (true) {
    const int fd = ::accept4(listen_fd_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return nullptr;  // EAGAIN, or a transient error (EMFILE...): try again on the next event
    FileDescriptor owned(fd);
    SocketTuning tuning;
    try {
      tune_accepted_socket(owned.get(), config_, tuning);
    } catch (const SystemError&) {
      continue;
    }
    return std::make_unique<TcpLink>(std::move(owned), config_, std::move(tuning));
  }
}

}  // namespace lp
