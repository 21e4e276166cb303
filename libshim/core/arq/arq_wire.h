// The ARQ's acknowledgement (arq_types.h) to and from its wire frame (wire_frame.h): one place for
// both carriers (session_traffic.cpp over TCP, datagram_channel.cpp over UDP).
#pragma once

#include "arq/arq_types.h"
#include "wire/wire_frame.h"

namespace lp {

inline AckFrame to_wire(const ArqAck& ack) {
  AckFrame frame{ack.cumulative, ack.window_messages, {}, {}};
  for (const auto& range : ack.sack) frame.ranges.push_back({range.begin, range.end});
  return frame;
}

inline ArqAck from_wire(const AckFrame& frame) {
  ArqAck ack;
  ack.cumulative = frame.cumulative;
  ack.window_messages = frame.window_messages;
  for (const auto& range : frame.ranges) ack.sack.push_back({range.begin, range.end});
  return ack;
}

}  // namespace lp
