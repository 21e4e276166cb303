// GatewayCarrier: the carrier of a process behind a site gateway (LONGPIPE_GATEWAY). It keeps the
// TCP carrier's listener (the site's gateway dials it on the LAN, as any peer would) and dials
// direct peers over TCP; a peer named "<site>/host:port" it dials through the gateway's Unix
// socket: one connection per stream, its CONNECT line first, then the stream's bytes at once (the
// gateway answers without a wide-area round trip). The link reads the answer line before the
// first byte of the stream: OK, or ERR and the reason, which fails the link as a refused connect
// would. A Unix socket has no TCP_INFO: such a link reports no path state and no window.
#pragma once

#include <memory>
#include <string>

#include "carrier/carrier.h"
#include "carrier/tcp/tcp_carrier.h"
#include "config.h"

namespace lp {

class GatewayCarrier : public Carrier {
 public:
  // Binds and listens per LONGPIPE_LISTEN; the gateway is config.gateway. Throws SystemError.
  explicit GatewayCarrier(const Config& config);

  std::unique_ptr<CarrierLink> dial(const std::string& peer, std::size_t stream) override;
  std::unique_ptr<CarrierLink> accept() override { return tcp_.accept(); }
  int listen_fd() const override { return tcp_.listen_fd(); }
  std::uint16_t port() const override { return tcp_.port(); }
  const SocketTuning& listen_tuning() const override { return tcp_.listen_tuning(); }

 private:
  const Config& config_;
  TcpCarrier tcp_;
};

}  // namespace lp
