// TcpCarrier: the carrier over tuned TCP connections (tcp_socket.h). Owns the listen socket and
// every connection's socket; reads into frame readers and writes connections' output. TCP_INFO
// feeds the statistics and the one-way congestion fallback before each write.
#pragma once

#include <memory>
#include <string>

#include "carrier/carrier.h"
#include "config.h"
#include "file_descriptor.h"

namespace lp {

class TcpCarrier : public Carrier {
 public:
  // Binds and listens per LONGPIPE_LISTEN. Throws SystemError.
  explicit TcpCarrier(const Config& config);

  std::unique_ptr<CarrierLink> dial(const std::string& peer, std::size_t stream) override;
  std::unique_ptr<CarrierLink> accept() override;
  int listen_fd() const override { return listen_fd_.get(); }
  std::uint16_t port() const override { return port_; }
  const SocketTuning& listen_tuning() const override { return listen_tuning_; }

 private:
  const Config& config_;
  SocketTuning listen_tuning_;
  FileDescriptor listen_fd_;
  std::uint16_t port_ = 0;
};

}  // namespace lp
