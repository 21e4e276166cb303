// FrontEnd's progress: the application thread's part (inside MPI calls, with MPI) and the progress
// thread's part (MPI-free, whatever the application is doing), meeting under mutex_.
#include <poll.h>
#include <sched.h>

#include "front_end.h"
#include "front_end_request.h"

namespace lp::mpi {

void FrontEnd::progress(bool unbounded) {
  {
    std::lock_guard lock(mutex_);
    take_messages_locked(unbounded);
    pump_locked(true);
    // Receives of ours that Open MPI messages may match, oldest first: claim one atomically
    // (nonblocking MPI calls under the lock: the progress thread only waits meanwhile).
    for (auto it = pending_receives_.begin(); it != pending_receives_.end();) {
      Request* r = *it;
      if (!r->may_match_native) {
        ++it;
        continue;
      }
      int flag = 0;
      MPI_Message native_message;
      MPI_Status probed;
      PMPI_Improbe(r->peer, r->tag, r->comm, &flag, &native_message, &probed);
      if (!flag) {
        ++it;
        continue;
      }
      PMPI_Imrecv(r->receive_buffer, r->count, r->type, &native_message, &r->native);
      if (r->wildcard) --const_cast<CommunicatorInfo*>(lookup(r->comm))->pending_wildcard_receives;
      it = pending_receives_.erase(it);
    }
  }
  handle_peer_failures();
  settle();
  advance_collectives();
  // Polling LongPipe's requests drives Open MPI's progress too (a same-site peer's rendezvous).
  int flag = 0;
  PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, internal_, &flag, MPI_STATUS_IGNORE);
}

ProgressThread::Watch FrontEnd::background_step(ProgressThread& thread) {
  std::lock_guard lock(mutex_);
  const std::size_t unexpected_before = unexpected_.size();
  take_messages_locked(false);
  pump_locked(false);
  if (!settled_.empty() || unexpected_.size() != unexpected_before) thread.signal_completion();
  // At the bound it waits for wake() (took_unexpected_locked) instead of the readable fd.
  return {unexpected_.size() < kUnexpectedBound, true};
}

bool FrontEnd::take_messages_locked(bool unbounded) {
  // A waiter's match may sit behind messages nobody wants yet: look past the bound until one
  // message matched something, then leave the rest in the engine (its window pushes back).
  bool matched = false;
  while (unbounded || unexpected_.size() < kUnexpectedBound) {
    auto message = engine_->try_receive();
    if (!message) break;
    if (handle_incoming_locked(std::move(*message))) {
      unbounded = false;
      matched = true;
    }
  }
  return matched;
}

bool FrontEnd::handle_incoming_locked(Message message) {
  if (message.flags & kFlagMatched) {
    std::uint64_t id = 0;
    if (!strip_sync_id(message.body, &id)) return false;
    auto it = awaiting_match_.find(id);
    if (it == awaiting_match_.end()) return false;
    it->second->acknowledged = true;
    settled_.push_back(it->second);
    awaiting_match_.erase(it);
    return true;
  }
  if (!(message.flags & kFlagData)) return false;
  auto arrived = std::make_shared<ArrivedMessage>();
  arrived->synchronous = (message.flags & kFlagSynchronous) != 0;
  arrived->body = std::move(message.body);
  if (arrived->synchronous && !strip_sync_id(arrived->body, &arrived->sync_id)) return false;
  const Envelope envelope{message.context, static_cast<int>(message.source), message.tag};
  for (auto it = pending_receives_.begin(); it != pending_receives_.end(); ++it) {
    Request* r = *it;
    if (!r->pattern.matches(envelope)) continue;
    pending_receives_.erase(it);
    if (arrived->synchronous) acknowledge_locked(envelope.source_world, arrived->sync_id);
    r->matched = true;
    r->matched_envelope = envelope;
    r->matched_message = std::move(arrived);
    settled_.push_back(r);
    return true;
  }
  unexpected_.push(envelope, std::move(arrived));
  return false;
}

void FrontEnd::acknowledge(const Envelope& envelope, const ArrivedMessage& message) {
  if (!message.synchronous) return;
  std::lock_guard lock(mutex_);
  acknowledge_locked(envelope.source_world, message.sync_id);
}

void FrontEnd::acknowledge_locked(int source_world, std::uint64_t sync_id) {
  Message ack;
  ack.source = static_cast<std::uint32_t>(world_rank_);
  ack.destination = static_cast<std::uint32_t>(source_world);
  ack.flags = kFlagMatched;
  ack.body.reserve(kSyncIdSize + kEngineTrailerSpare);
  append_sync_id(ack.body, sync_id);
  pending_acks_.emplace_back(source_world, std::move(ack));
  pump_locked(false);
}

void FrontEnd::pump_locked(bool application_thread) {
  // Acknowledgements never wait holding the lock: what the window refuses waits here for room.
  while (!pending_acks_.empty()) {
    auto& [world, ack] = pending_acks_.front();
    try {
      if (!engine_->try_send(endpoint_of_world_[static_cast<std::size_t>(world)], ack)) break;
    } catch (const std::exception&) {
      // The sender is gone: nobody waits for this acknowledgement any more.
    }
    pending_acks_.pop_front();
  }
  if (pending_sends_.empty()) return;
  pending_sends_.pump(
      application_thread,
      [this](int dest_world, Message& message) {
        return engine_->try_send(endpoint_of_world_[static_cast<std::size_t>(dest_world)], message);
      },
      [this](Request* r) {
        r->sent = true;
        settled_.push_back(r);
      },
      [this](Request* r, const std::string&) {
        r->shared_error = MPI_ERR_OTHER;
        settled_.push_back(r);
      });
}

void FrontEnd::took_unexpected_locked() {
  if (progress_thread_ && unexpected_.size() + 1 >= kUnexpectedBound) progress_thread_->wake();
}

void FrontEnd::settle() {
  std::lock_guard lock(mutex_);
  if (settled_.empty()) return;
  std::vector<Request*> settled;
  settled.swap(settled_);
  for (Request* r : settled) {
    if (r->complete) continue;
    if (r->kind == Request::Kind::kReceive) {
      if (!r->matched) continue;
      r->matched = false;
      const std::shared_ptr<ArrivedMessage> message = std::move(r->matched_message);
      const CommunicatorInfo* info = lookup(r->comm);
      r->error = deliver(*message, r->matched_envelope, info, r->receive_buffer, r->count, r->type, r->comm,
                         &r->status);
      if (r->wildcard && info) --const_cast<CommunicatorInfo*>(info)->pending_wildcard_receives;
    } else if (r->shared_error != MPI_SUCCESS) {
      r->error = r->shared_error;
      r->status.MPI_ERROR = r->error;
      if (r->mode == SendMode::kSynchronous) awaiting_match_.erase(r->sync_id);
    } else if (!r->sent || (r->mode == SendMode::kSynchronous && !r->acknowledged)) {
      continue;
    }
    r->complete = true;
    if (r->freed) requests_.remove(r->handle);
  }
}

void FrontEnd::advance_collectives() {
  for (auto it = collectives_in_flight_.begin(); it != collectives_in_flight_.end();) {
    const std::uintptr_t handle = *it;
    Request* r = requests_.get(handle);
    if (!poll(*r)) {
      ++it;
      continue;
    }
    it = collectives_in_flight_.erase(it);
    if (r->freed) requests_.remove(handle);
  }
}

void FrontEnd::handle_peer_failures() {
  for (auto& failure : engine_->take_peer_failures()) {
    auto found = world_of_endpoint_.find(failure.peer_endpoint);
    if (found == world_of_endpoint_.end()) continue;
    const int world = found->second;
    failed_world_ranks_.insert(world);
    failure_reasons_[world] = failure.reason;
    // Receives that only this peer could satisfy, and synchronous sends waiting for it, fail.
    std::lock_guard lock(mutex_);
    for (auto it = pending_receives_.begin(); it != pending_receives_.end();) {
      Request* r = *it;
      if (r->peer_world != world) {
        ++it;
        continue;
      }
      r->complete = true;
      r->error = MPI_ERR_OTHER;
      r->status.MPI_ERROR = MPI_ERR_OTHER;
      it = pending_receives_.erase(it);
    }
    for (auto it = awaiting_match_.begin(); it != awaiting_match_.end();) {
      Request* r = it->second;
      if (r->peer_world != world || !r->sent) {
        ++it;  // one not yet out fails in pending_sends_
        continue;
      }
      r->complete = true;
      r->error = MPI_ERR_OTHER;
      it = awaiting_match_.erase(it);
    }
  }
}

void FrontEnd::idle(int* idle_rounds, bool native_pending) {
  if (++*idle_rounds < kSpinsBeforeYield) return;
  if (native_pending) {
    sched_yield();
    return;
  }
  // Only LongPipe can complete what is waited for: sleep until the progress thread completes
  // something (or a message waits in the engine past its bound), but keep Open MPI's own
  // operations (rendezvous sends to same-site ranks, ...) moving in between.
  pollfd fds[2] = {{progress_thread_->completion_fd(), POLLIN, 0}, {engine_->receive_event_fd(), POLLIN, 0}};
  ::poll(fds, 2, kIdlePollMs);
  progress_thread_->drain_completion();
  int flag = 0;
  PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, internal_, &flag, MPI_STATUS_IGNORE);
}

}  // namespace lp::mpi
