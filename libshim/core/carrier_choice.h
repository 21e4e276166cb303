// Carrier negotiation: which carrier (TCP, or datagrams with a TCP control connection) a session's
// messages travel on, agreed by both ends in the handshake. Pure.
//
// Each end states its LONGPIPE_CARRIER, whether its UDP socket is bound, and (with auto) whether
// it would rather have datagrams on this path, in one byte of its sealed IDENTIFY (authenticated:
// a changed byte fails the frame). Both ends then apply agree_carrier() to the same two offers and
// reach the same result, or the same clear error; nothing is left to silence.
//
//   ours \ theirs   tcp          udp              auto
//   tcp             tcp          error            tcp
//   udp             error        udp*             udp*
//   auto            tcp          udp*             udp* if either end prefers it, else tcp
//
//   * needs a bound UDP socket at both ends, else an error (udp asked) or tcp (auto with auto).
// Either end's preference suffices: loss shows at the end that sends (its TCP retransmissions),
// and the other may never have sent enough to know.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "config.h"

namespace lp {

struct CarrierOffer {
  CarrierChoice setting = CarrierChoice::kTcp;
  bool datagrams_ready = false;    // this end's UDP socket is bound beside its TCP listener
  bool prefers_datagrams = false;  // auto: this end judged the path better served by datagrams

  // The IDENTIFY byte: bits 0-1 the setting (0 tcp, 1 udp, 2 auto), bit 6 prefers datagrams,
  // bit 7 datagrams ready; other bits zero.
  std::uint8_t encode() const;
  // Throws MalformedFrame for a byte no LongPipe sends.
  static CarrierOffer decode(std::uint8_t byte);
};

struct CarrierAgreement {
  bool datagrams = false;
  std::optional<std::string> error;  // the ends cannot agree: why, naming the settings
};

CarrierAgreement agree_carrier(const CarrierOffer& ours, const CarrierOffer& theirs);


const char* carrier_name(CarrierChoice choice);

// LONGPIPE_CARRIER=auto's judgement of a path from what the path cache remembers of it (TCP
// sessions measured it, path_estimator.h): datagrams for a long path that loses packets without
// a queue standing. The round trip alone was the wrong judge: on loss-free geo the datagram
// carrier is slower (libshim/README.md, "Datagram carrier").
constexpr std::chrono::milliseconds kAutoMinRtt{100};  // geo's 540 ms measured; 20 ms not
constexpr std::int64_t kAutoMinLossPpm = 5000;         // 0.5 %: 1 % measured (datagrams faster)
bool path_prefers_datagrams(std::chrono::microseconds min_rtt, std::int64_t loss_ppm);

}  // namespace lp
