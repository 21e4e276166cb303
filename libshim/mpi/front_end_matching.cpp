// LongPipe's matching of messages from the engine, under FrontEnd::mutex_, in either thread (the
// progress thread's, or the application's inside an MPI call): binds each message to the oldest
// posted receive that matches it, or queues it as unexpected; assembles segmented messages
// (segment_arrivals.h). Nothing here calls MPI: settle() (front_end_progress.cpp) delivers in the
// application's thread.
#include "front_end.h"
#include "front_end_request.h"

namespace lp::mpi {

bool FrontEnd::handle_incoming_locked(Message message) {
  if (message.flags & kFlagMatched) {
    std::uint64_t id = 0;
    if (!strip_sync_id(message.body, &id)) return false;
    Request* send = sync_sends_.acknowledge(id);
    if (!send) return false;  // it failed meanwhile
    send->acknowledged = true;
    settle_later_locked(send);
    return true;
  }
  if (message.flags & kFlagContinuation) {
    return continue_segmented_locked(static_cast<int>(message.source), message.body);
  }
  if (!(message.flags & kFlagData)) return false;
  auto arrived = std::make_shared<ArrivedMessage>();
  arrived->synchronous = (message.flags & kFlagSynchronous) != 0;
  arrived->body = std::move(message.body);
  if (arrived->synchronous && !strip_sync_id(arrived->body, &arrived->sync_id)) return false;
  const Envelope envelope{message.context, static_cast<int>(message.source), message.tag};
  abandon_segmented_locked(envelope.source_world, MPI_ERR_OTHER);  // one cut short by a failed send: never completes
  arrived->size = arrived->body.size();
  if ((message.flags & kFlagSegmented) && !segmented_.begin(envelope.source_world, arrived)) return false;  // malformed
  // The oldest posted receive that matches takes it, else it waits as unexpected.
  Request* r = matcher_.arrive(envelope, arrived);
  if (!r) return false;
  bind_locked(*r, envelope, arrived);  // its NativeReceiveOrder entry goes in settle()
  return true;
}

void FrontEnd::bind_locked(Request& r, const Envelope& envelope, const std::shared_ptr<ArrivedMessage>& message) {
  if (message->synchronous) acknowledge_locked(envelope.source_world, message->sync_id);  // completes at the match
  r.matched = true;
  r.matched_envelope = envelope;
  r.matched_message = message;
  // Its last segments still on their way: straight into the buffer if the type is flat (a copy, no
  // MPI call), else assembled and delivered at the end. Unknown to segmented_: cut short (a failed
  // send or peer).
  if (!message->complete &&
      !segmented_.bind(envelope.source_world, message, &r, r.flat, static_cast<std::byte*>(r.receive_buffer),
                       r.capacity)) {
    r.shared_error = MPI_ERR_OTHER;
  }
  settle_later_locked(&r);  // delivered there once complete
}

bool FrontEnd::continue_segmented_locked(int source_world, const std::vector<std::byte>& body) {
  const SegmentOutcome<Request> outcome = segmented_.add(source_world, body);
  if (!outcome.receive) return false;  // more to come, still unexpected, or the rest of one cut short
  if (outcome.event == SegmentEvent::kMalformed) outcome.receive->shared_error = MPI_ERR_INTERN;
  settle_later_locked(outcome.receive);
  return true;
}

bool FrontEnd::abandon_segmented_locked(int source_world, int error) {
  Request* r = segmented_.abandon(source_world);
  if (!r) return false;
  r->shared_error = error;
  settle_later_locked(r);
  return true;
}

void FrontEnd::settle_later_locked(Request* r) {
  if (r->listed) return;
  r->listed = true;
  settled_.push_back(r);
}

}  // namespace lp::mpi
