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
//   auto            tcp          udp*             udp* if the deciding end prefers it, else tcp
//
//   * needs a bound UDP socket at both ends, else an error (udp asked) or tcp (auto with auto).
// The deciding end of two autos is the one with the smaller endpoint name, as in the stream
// tie-break (stream_scheduler.h), so that both ends take the same end's preference.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "config.h"

namespace lp {

struct CarrierOffer {
  CarrierChoice setting = CarrierChoice::kTcp;
  bool datagrams_ready = false;    // this end's UDP socket is bound beside its TCP listener
  // auto: this end judged the path better served by datagrams. No end judges yet (always false):
  // the handshake's round trip alone was the wrong judge (libshim/README.md, "Datagram carrier",
  // auto); the bit is the place for a judgement by loss, with no change of protocol.
  bool prefers_datagrams = false;

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

// `we_decide`: our endpoint name is the smaller one (only matters for auto with auto).
CarrierAgreement agree_carrier(const CarrierOffer& ours, const CarrierOffer& theirs, bool we_decide);


const char* carrier_name(CarrierChoice choice);

}  // namespace lp
