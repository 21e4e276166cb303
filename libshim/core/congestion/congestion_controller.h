// CongestionController: what a carrier asks of congestion control, whatever runs it (ngtcp2's
// ngtcp2_cc, quinn-proto's congestion::Controller). Sans-I/O: the caller passes the time; the
// controller reads no clock and owns no socket.
//
// Kinds of controller run LongPipe's traffic (CongestionKind): the datagram carrier's own
// (DatagramPacer, this interface), and the kernel's TCP stack on the tcp carrier's streams, whose
// window and pacing the kernel keeps (tcp_path_info.h reads them from TCP_INFO): the engine only
// chooses that kind (idle_restart.h, resolve_congestion) and judges its window by it. The datagram
// controller's pure parts have their own tests: delivery-rate sampling (delivery_rate.h), the
// min-RTT and max-rate filters (path_filters.h), start-up's packet train (packet_train.h), the
// phase machine (pacer_phases.h), a seed's judgement (pacer_seed.h).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "arq/arq_types.h"

namespace lp {

enum class CongestionKind {
  kDatagram,     // DatagramPacer
  kKernelCubic,  // the kernel's (TCP_CONGESTION) cubic: restarts its window after idle (PLATFORM.md)
  kKernelBbr,    // ... bbr (bbr2, bbr3 alike): paces every write itself, keeps its window across idle
  kKernelOther,  // ... any other name (reno, htcp): as cubic
};
// The kind of the kernel's congestion control named `name`, and the name of a kernel kind.
inline CongestionKind kernel_congestion_kind(std::string_view name) {
  if (name.starts_with("bbr")) return CongestionKind::kKernelBbr;
  return name == "cubic" ? CongestionKind::kKernelCubic : CongestionKind::kKernelOther;
}
inline const char* kernel_congestion_name(CongestionKind kind) { return kind == CongestionKind::kKernelBbr ? "bbr" : "cubic"; }

class CongestionController {
 public:
  // When the datagrams an ACK answers arrived, by the receiver's clock (wire_frame.h,
  // AckArrivals): the newest DATA datagram's arrival, the first one's since the receiver's previous
  // ACK, and how many arrived since that ACK (0: `first` says nothing).
  struct Arrivals {
    std::chrono::nanoseconds newest{0};
    std::chrono::nanoseconds first{0};
    std::uint32_t count = 0;
  };

  virtual ~CongestionController() = default;
  // A datagram of `bytes` carrying sequence `id` left at `now` (a re-sent id: its earlier copy is lost).
  virtual void on_sent(ArqTime now, std::uint64_t id, std::size_t bytes) = 0;
  // An ACK: everything below `cumulative` and in `sack` is delivered; the controller takes its
  // delivery-rate and RTT samples from it (without `arrivals`, at the ACK's own time).
  virtual void on_ack(ArqTime now, std::uint64_t cumulative, std::span<const ArqSackRange> sack,
                      std::optional<Arrivals> arrivals = std::nullopt) = 0;
  // The retransmission timer expired: everything in flight is lost.
  virtual void on_timeout() = 0;
  // The sender has nothing more to send although it may.
  virtual void on_application_limited() = 0;
  // The outputs: bytes per second, and bytes in flight allowed.
  virtual double pacing_rate() const = 0;
  virtual std::size_t window_bytes() const = 0;
};

}  // namespace lp
