// MessageMatching (message_matching.h): LongPipe's matching of messages from the engine and of the
// receives posted for them. Nothing here calls MPI.
#include "message_matching.h"

#include <algorithm>

#include "wire_format.h"

namespace lp::mpi {

ReceiveRoute route_receive(const CommunicatorInfo& info, int peer, int tag, int any_source, std::uintptr_t scope) {
  ReceiveRoute route;
  PostedReceive& how = route.how;
  how.pattern.context = info.context;
  how.pattern.tag = tag;
  how.pattern.source_world = kAnySource;
  how.may_match_native = true;
  how.scope = scope;
  how.native_source = peer == any_source ? kAnySource : peer;
  if (peer != any_source) {
    how.pattern.source_world = info.world_of_peer.at(static_cast<std::size_t>(peer));
    route.peer_world = info.remote_world_rank(peer);
    how.may_match_native = route.peer_world < 0;
  }
  how.takes_engine_messages = route.peer_world >= 0 || peer == any_source;
  return route;
}

ReceivePattern probe_pattern(const CommunicatorInfo& info, int source, int tag, int any_source) {
  return {info.context, source == any_source ? kAnySource : info.world_of_peer.at(static_cast<std::size_t>(source)),
          tag};
}

bool MessageMatching::arrive(Message message) {
  if (message.flags & kFlagMatched) {
    std::uint64_t id = 0;
    if (!strip_sync_id(message.body, &id)) return false;
    MatchSlot* send = sync_sends_.acknowledge(id);
    if (!send) return false;  // it failed meanwhile
    send->acknowledged = true;
    settle_later(*send);
    return true;
  }
  if (message.flags & kFlagContinuation) return continue_segmented(static_cast<int>(message.source), message.body);
  if (!(message.flags & kFlagData)) return false;
  auto arrived = std::make_shared<ArrivedMessage>();
  arrived->synchronous = (message.flags & kFlagSynchronous) != 0;
  arrived->body = std::move(message.body);
  if (arrived->synchronous && !strip_sync_id(arrived->body, &arrived->sync_id)) return false;
  const Envelope envelope{message.context, static_cast<int>(message.source), message.tag};
  abandon_segmented(envelope.source_world, errors_.failed);  // one cut short by a failed send: never completes
  arrived->size = arrived->body.size();
  if ((message.flags & kFlagSegmented) && !segmented_.begin(envelope.source_world, arrived)) return false;  // malformed
  // The oldest posted receive that matches takes it, else it waits as unexpected.
  MatchSlot* receive = receives_.arrive(envelope, arrived);
  if (!receive) return false;
  bind(*receive, envelope, arrived);
  return true;
}

bool MessageMatching::take_unexpected(MatchSlot& receive, const PostedReceive& how) {
  auto found = receives_.take_unexpected_for(how);
  if (!found) return false;
  bind(receive, found->first, found->second);
  return true;
}

void MessageMatching::bind(MatchSlot& receive, const Envelope& envelope,
                           const std::shared_ptr<ArrivedMessage>& message) {
  if (message->synchronous) acknowledge_(envelope.source_world, message->sync_id);  // completes at the match
  receive.matched = true;
  receive.matched_envelope = envelope;
  receive.matched_message = message;
  // Its last segments still on their way: straight into the buffer if the type is flat (a copy, no
  // MPI call), else assembled and delivered at the end. Unknown to segmented_: cut short (a failed
  // send or peer).
  if (!message->complete &&
      !segmented_.bind(envelope.source_world, message, &receive, receive.flat,
                       static_cast<std::byte*>(receive.receive_buffer), receive.capacity)) {
    receive.shared_error = errors_.failed;
  }
  settle_later(receive);  // delivered there once complete
}

bool MessageMatching::continue_segmented(int source_world, const std::vector<std::byte>& body) {
  const SegmentOutcome<MatchSlot> outcome = segmented_.add(source_world, body);
  if (!outcome.receive) return false;  // more to come, still unexpected, or the rest of one cut short
  if (outcome.event == SegmentEvent::kMalformed) outcome.receive->shared_error = errors_.malformed;
  settle_later(*outcome.receive);
  return true;
}

bool MessageMatching::abandon_segmented(int source_world, int error) {
  MatchSlot* receive = segmented_.abandon(source_world);
  if (!receive) return false;
  receive->shared_error = error;
  settle_later(*receive);
  return true;
}

std::vector<MatchSlot*> MessageMatching::peer_failed(int world) {
  abandon_segmented(world, errors_.failed);
  std::vector<MatchSlot*> receives =
      receives_.remove_if([world](const MatchSlot* receive, const PostedReceive&) { return receive->peer_world == world; });
  // (A synchronous send still queued to it fails where it is queued.)
  for (MatchSlot* send : sync_sends_.remove_if([world](const MatchSlot* s) { return s->peer_world == world && s->sent; })) {
    send->shared_error = errors_.failed;  // completed by the caller's settling, where it may be listed already
    settle_later(*send);
  }
  return receives;
}

void MessageMatching::settle_later(MatchSlot& slot) {
  if (slot.listed) return;
  slot.listed = true;
  settled_.push_back(&slot);
}

std::vector<MatchSlot*> MessageMatching::take_settled() {
  std::vector<MatchSlot*> settled;
  settled.swap(settled_);
  for (MatchSlot* slot : settled) slot->listed = false;
  return settled;
}

void MessageMatching::unlist(MatchSlot& slot) {
  if (!slot.listed) return;
  std::erase(settled_, &slot);
  slot.listed = false;
}

}  // namespace lp::mpi
