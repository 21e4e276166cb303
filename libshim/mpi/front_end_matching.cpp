// LongPipe's matching of messages from the engine, under FrontEnd::mutex_, in either thread (the
// progress thread's, or the application's inside an MPI call): binds each message to the oldest
// posted receive that matches it, or queues it as unexpected; assembles segmented messages
// (segments.h). Nothing here calls MPI: settle() (front_end_progress.cpp) delivers in the
// application's thread.
#include "front_end.h"
#include "front_end_request.h"

namespace lp::mpi {

bool FrontEnd::handle_incoming_locked(Message message) {
  if (message.flags & kFlagMatched) {
    std::uint64_t id = 0;
    if (!strip_sync_id(message.body, &id)) return false;
    auto it = awaiting_match_.find(id);
    if (it == awaiting_match_.end()) return false;
    it->second->acknowledged = true;
    settle_later_locked(it->second);
    awaiting_match_.erase(it);
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
  if (message.flags & kFlagSegmented) {
    auto assembly = MessageAssembly::start(std::move(arrived->body));
    if (!assembly) return false;  // malformed: dropped
    arrived->size = assembly->total();
    arrived->complete = assembly->complete();
    if (arrived->complete) {
      arrived->body = assembly->take();
    } else {
      arriving_[envelope.source_world].reset(new SegmentedArrival{arrived, std::move(*assembly), envelope, nullptr});
    }
  }
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
  if (!message->complete) {
    // Its last segments are still on their way: straight into the buffer if the type is flat (a
    // copy, no MPI call), else assembled and delivered at the end. Gone from arriving_: cut short
    // (a failed send or peer).
    auto arrival = arriving_.find(envelope.source_world);
    if (arrival == arriving_.end() || arrival->second->message != message) {
      r.shared_error = MPI_ERR_OTHER;
    } else {
      arrival->second->receive = &r;
      if (r.flat) arrival->second->assembly.redirect(static_cast<std::byte*>(r.receive_buffer), r.capacity);
    }
  }
  settle_later_locked(&r);  // delivered there once complete
}

bool FrontEnd::continue_segmented_locked(int source_world, const std::vector<std::byte>& body) {
  auto it = arriving_.find(source_world);
  if (it == arriving_.end()) return false;  // the rest of a message cut short: dropped
  SegmentedArrival& arrival = *it->second;
  if (!arrival.assembly.add(body)) return abandon_segmented_locked(source_world, MPI_ERR_INTERN);
  if (!arrival.assembly.complete()) return false;
  const std::unique_ptr<SegmentedArrival> done = std::move(it->second);
  arriving_.erase(it);
  ArrivedMessage& message = *done->message;
  message.in_place = done->assembly.redirected();
  if (!message.in_place) message.body = done->assembly.take();
  message.complete = true;
  if (!done->receive) return false;  // still unexpected: complete now for whoever takes it
  settle_later_locked(done->receive);
  return true;
}

bool FrontEnd::abandon_segmented_locked(int source_world, int error) {
  auto it = arriving_.find(source_world);
  if (it == arriving_.end()) return false;
  Request* r = it->second->receive;
  arriving_.erase(it);  // an unexpected one stays incomplete: a receive that takes it fails at once
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
