#include "carrier/gateway/gateway_carrier.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "carrier/gateway/gateway_socket.h"
#include "file_descriptor.h"
#include "system_call.h"
#include "wire/host_port.h"
#include "carrier/stream_read.h"
#include "wire/wire_frame.h"

namespace lp {
namespace {


// One stream through the gateway: a Unix stream connection whose first line out is CONNECT and
// whose first line in is the gateway's answer.
class GatewayLink : public CarrierLink {
 public:
  GatewayLink(FileDescriptor fd, std::string gateway, std::string request)
      : fd_(std::move(fd)), gateway_(std::move(gateway)), request_(std::move(request)) {
    tuning_.congestion = "gateway";
  }

  int poll_fd() const override { return fd_.get(); }

  std::string take_connect_error() override {
    int error = 0;
    socklen_t length = sizeof error;
    if (::getsockopt(fd_.get(), SOL_SOCKET, SO_ERROR, &error, &length) != 0) error = errno;
    return error == 0 ? std::string() : refusal(std::string("connect: ") + std::strerror(error));
  }

  IoStatus write(std::span<const std::byte> bytes, bool, std::size_t& written, std::string& error) override {
    written = 0;
    // The request line goes first (written at the dial as far as the socket took it).
    while (request_sent_ < request_.size()) {
      const ssize_t n = ::send(fd_.get(), request_.data() + request_sent_, request_.size() - request_sent_, MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR) continue;
        return send_failed(error);
      }
      request_sent_ += static_cast<std::size_t>(n);
    }
    while (written < bytes.size()) {
      const ssize_t n = ::send(fd_.get(), bytes.data() + written, bytes.size() - written, MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR) continue;
        return send_failed(error);
      }
      written += static_cast<std::size_t>(n);
    }
    return IoStatus::kOk;
  }

  IoStatus read(FrameReader& reader, std::size_t budget, std::size_t& bytes_read, std::string& error) override {
    bytes_read = 0;
    if (!answered_) {
      const IoStatus status = read_answer(reader, bytes_read, error);
      if (status != IoStatus::kOk || !answered_) return status;
    }
    return read_stream(fd_.get(), reader, budget - std::min(budget, bytes_read), bytes_read, error);
  }

  void after_read() override {}
  void use_stream(std::size_t) override {}
  void abort_on_close() override {}  // a Unix socket has no RST: the gateway sees the end of the stream
  void finish_sending() override { ::shutdown(fd_.get(), SHUT_WR); }  // the gateway forwards the FIN

  IoStatus discard_input(std::size_t budget) override { return discard_stream(fd_.get(), budget); }

  const SocketTuning& tuning() const override { return tuning_; }
  TcpWindowInfo window_info() const override { return {}; }

 private:
  std::string refusal(const std::string& what) const {
    return std::string(kRefusedByGateway) + " (LONGPIPE_GATEWAY=" + gateway_ + "): " + what;
  }

  IoStatus send_failed(std::string& error) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) return IoStatus::kOk;
    error = std::string("send: ") + std::strerror(errno);
    if (auto reason = answered_refusal()) error = *reason;
    return IoStatus::kError;
  }

  // The gateway's refusal, if its answer line is here. A gateway that refuses CONNECT answers and
  // closes, so a write can find the stream closed before a read finds the answer that says why.
  // Leaves room in answer_ for read_answer to read at least one more byte.
  std::optional<std::string> answered_refusal() {
    if (answered_) return std::nullopt;
    char chunk[kMaxGatewayLine];
    if (answer_.size() + 1 < kMaxGatewayLine) {
      const ssize_t n = ::recv(fd_.get(), chunk, kMaxGatewayLine - 1 - answer_.size(), MSG_DONTWAIT);
      if (n > 0) answer_.append(chunk, static_cast<std::size_t>(n));
    }
    const auto end = answer_.find('\n');
    if (end == std::string::npos) return std::nullopt;
    return refusal_in(end);
  }

  // What the answer line that ends at answer_[end] says: nothing for OK, else the refusal.
  std::optional<std::string> refusal_in(std::size_t end) const {
    std::string line = answer_.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto answer = parse_gateway_answer(line);
    if (answer && answer->ok) return std::nullopt;
    return refusal(answer ? answer->text : "it answered '" + line + "'");
  }

  // Consumes the answer line; what follows it in the same read is the stream's first bytes.
  IoStatus read_answer(FrameReader& reader, std::size_t& bytes_read, std::string& error) {
    char chunk[kMaxGatewayLine];
    const ssize_t n = ::recv(fd_.get(), chunk, kMaxGatewayLine - answer_.size(), 0);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) return IoStatus::kOk;
      error = refusal(std::string("recv: ") + std::strerror(errno));
      return IoStatus::kError;
    }
    if (n == 0) {
      error = refusal("it closed the connection without answering CONNECT");
      return IoStatus::kError;
    }
    answer_.append(chunk, static_cast<std::size_t>(n));
    const auto end = answer_.find('\n');
    if (end == std::string::npos) {
      if (answer_.size() < kMaxGatewayLine) return IoStatus::kOk;  // the rest of the line comes later
      error = refusal("its answer is longer than " + std::to_string(kMaxGatewayLine) + " bytes");
      return IoStatus::kError;
    }
    if (auto refused = refusal_in(end)) {
      error = *refused;
      return IoStatus::kError;
    }
    answered_ = true;
    const std::size_t rest = answer_.size() - end - 1;
    if (rest > 0) {
      auto area = reader.write_area(rest);
      std::memcpy(area.data(), answer_.data() + end + 1, rest);
      reader.commit(rest);
      bytes_read += rest;
    }
    answer_.clear();
    answer_.shrink_to_fit();
    return IoStatus::kOk;
  }

  FileDescriptor fd_;
  const std::string gateway_;
  const std::string request_;
  std::size_t request_sent_ = 0;
  bool answered_ = false;
  std::string answer_;  // the answer line as far as it arrived
  SocketTuning tuning_;
};

}  // namespace

GatewayCarrier::GatewayCarrier(const Config& config) : config_(config), tcp_(config) {}

std::unique_ptr<CarrierLink> GatewayCarrier::dial(const std::string& peer, std::size_t stream) {
  if (site_of_endpoint(peer).empty()) return tcp_.dial(peer, stream);
  parse_host_port(peer, true);  // throws std::invalid_argument with the endpoint text
  FileDescriptor fd;
  try {
    fd = connect_to_gateway(config_.gateway);
  } catch (const SystemError& e) {
    // No gateway (or none taking connections): to the session, the peer's host refusing. A gateway
    // that restarts is back before LONGPIPE_DEAD_PEER_MS, and the session redials meanwhile.
    throw std::runtime_error(std::string(kRefusedByGateway) + ": " + e.what());
  }
  auto link = std::make_unique<GatewayLink>(std::move(fd), config_.gateway, gateway_connect_request(peer));
  // The request line leaves now: the socket is fresh, its buffer takes it whole.
  std::size_t written = 0;
  std::string error;
  if (link->write({}, false, written, error) == IoStatus::kError) {
    throw std::runtime_error(std::string(kRefusedByGateway) + " (LONGPIPE_GATEWAY=" + config_.gateway + "): " + error);
  }
  return link;
}

}  // namespace lp
