// A session's messages: frames in (DATA, ACK, keep-alive, CLOSE), the ARQ's messages out onto its
// streams, the ACKs it owes.
#include "session/session.h"

#include "arq/arq_wire.h"
#include "session/connection.h"
#include "security/frame_cipher.h"

namespace lp {

std::optional<std::string> Session::on_frame(Connection& connection, const FrameView& frame, Clock::time_point now) {
  if (datagram_ && (frame.type == FrameType::kData || frame.type == FrameType::kAck)) {
    throw MalformedFrame(std::string(frame_type_name(frame.type)) +
                         " on the control connection of a datagram session (is LONGPIPE_CARRIER the same at both ends?)");
  }
  switch (frame.type) {
    case FrameType::kData: {
      const DataFrame data = decode_data(frame.payload, config_.max_message);
      if (!arq_.on_data(data.sequence, ArqPayload(data.message.begin(), data.message.end()), now)) {
        throw MalformedFrame("DATA " + std::to_string(data.sequence) + " lies far beyond the receive window");
      }
      return std::nullopt;
    }
    case FrameType::kAck:
      if (!arq_.on_ack(from_wire(decode_ack(frame.payload)), now)) {
        throw MalformedFrame("ACK acknowledges messages never sent");
      }
      return std::nullopt;
    case FrameType::kKeepalive:
      return std::nullopt;
    case FrameType::kClose: {
      const CloseFrame close = decode_close(frame.payload);
      if (close.reason == CloseReason::kShutdown) peer_said_goodbye_ = peer_left_ = true;
      if (close.reason == CloseReason::kDuplicate && streams_.remove(connection)) {
        // The peer keeps another connection for this stream (or, on datagrams, no longer needs
        // this key backup): not a loss.
        connection.session = nullptr;
        forget(connection);
        stream_left(now);
      }
      return "peer closed the connection: " + close.text;
    }
    default:
      throw MalformedFrame(std::string(frame_type_name(frame.type)) + " after the handshake");
  }
}

void Session::take_received(std::vector<Message>& batch) {
  if (datagram_) {
    std::vector<ArqPayload> packed;
    if (!datagram_->take_received(arq_, packed)) ++counters_.malformed_frames;
    for (ArqPayload& bytes : packed) {
      try {
        deliver(unpack_message(std::move(bytes)), batch);
      } catch (const std::exception&) {
        ++counters_.malformed_frames;  // an authenticated peer's units did not form a message
      }
    }
    return;
  }
  while (auto delivery = arq_.receive()) deliver(unpack_message(std::move(delivery->payload)), batch);
}

void Session::deliver(Message message, std::vector<Message>& batch) {
  message.peer_endpoint = peer_;
  ++counters_.messages_received;
  counters_.bytes_received += message.body.size();
  batch.push_back(std::move(message));
}

void Session::pump(Clock::time_point now) {
  // Datagrams flow on the keys of the last sealing connection even while it is being replaced.
  if (datagram_) {
    reseal_if_due(now);
    datagram_->pump(arq_, now);
  }
  Connection* first = streams_.first();
  if (first == nullptr) return;
  if (datagram_) {
    send_keepalives(now);
    return;
  }
  // DATA striped over the streams; the receiver's ARQ puts the messages back in order.
  const bool may_spill = window_of && streams_.spill_established() > 0;
  const double path_bdp = may_spill ? judged_bdp() : 0;
  // One TCP_INFO read per stream and pump: what this pump encodes is counted by pending_output().
  std::vector<std::optional<StreamWindow>> windows(may_spill ? streams_.slots() : 0);
  const StreamScheduler::WindowLookup window = [&](const Connection& stream) {
    std::optional<StreamWindow>& seen = windows[stream.stream];
    if (!seen) seen = window_of(stream);
    return *seen;
  };
  while (Connection* target = cold_gathering(now) ? nullptr : streams_.next_with_room()) {
    auto frame = arq_.poll_transmit(now);
    if (!frame) break;
    Connection* preferred = streams_.by_size(frame->payload.size());
    if (preferred != nullptr) target = preferred;
    if (may_spill) {
      const std::size_t frame_bytes = kFrameHeaderSize + kSequenceSize + frame->payload.size() + kTagSize;
      if (Connection* spill = streams_.spill_target(*target, frame_bytes, path_bdp, window)) {
        target = spill;
        if (frame_bytes > StreamScheduler::kLargeSpillFrame) spill->carried_large_spill = true;
        preferred = nullptr;  // the frame's own stream may be full: the loop goes on
        ++counters_.spilled_messages;
      }
    }
    const std::size_t start = target->output().size();
    encode_data(target->output(), frame->seq, frame->payload);
    target->seal_from(start);
    target->last_sent = now;
    streams_.sent_on(*target);
    // A full preferred stream waits for its carrier rather than spilling onto the other kind.
    if (preferred != nullptr && preferred->pending_output() >= StreamScheduler::kOutputHighWater) break;
  }
  if (auto ack = arq_.poll_ack(now)) send_ack(*first, *ack, now);
  send_keepalives(now);
}

void Session::acknowledge_owed(Clock::time_point now) {
  if (failed_ || !arq_.ack_deadline()) return;
  if (datagram_) {
    datagram_->acknowledge_now(arq_);
    return;
  }
  if (Connection* first = streams_.first()) send_ack(*first, arq_.make_ack(), now);
}

// ACKs on one stream (the first), so that they stay in order.
void Session::send_ack(Connection& stream, const ArqAck& ack, Clock::time_point now) {
  const std::size_t start = stream.output().size();
  encode_ack(stream.output(), to_wire(ack));
  stream.seal_from(start);
  stream.last_sent = now;
}

}  // namespace lp
