// FrontEnd's progress: the application thread's part (inside MPI calls, with MPI) and the progress
// thread's part (MPI-free, whatever the application is doing), meeting under mutex_.
#include <poll.h>
#include <sched.h>

#include <algorithm>

#include "api_lock.h"
#include "front_end.h"
#include "front_end_request.h"

namespace lp::mpi {

void FrontEnd::progress(bool unbounded) {
  {
    std::lock_guard lock(mutex_);
    take_messages_locked(unbounded);
    pump_locked(true);
  }
  handle_peer_failures();
  claim_native_messages();
  settle();
  advance_collectives();
  forget_unreferenced_communicators();
  // Polling LongPipe's requests drives Open MPI's progress too (a same-site peer's rendezvous).
  int flag = 0;
  PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, internal_, &flag, MPI_STATUS_IGNORE);
}

ProgressThread::Watch FrontEnd::background_step(ProgressThread& thread) {
  std::lock_guard lock(mutex_);
  const std::size_t unexpected_before = matching_.unexpected_count();
  take_messages_locked(false);
  pump_locked(false);
  if (matching_.has_settled() || matching_.unexpected_count() != unexpected_before) thread.signal_completion();
  // At the bound it waits for wake() (took_unexpected_locked) instead of the readable fd.
  return {matching_.unexpected_count() < kUnexpectedBound, true};
}

bool FrontEnd::take_messages_locked(bool unbounded) {
  // A waiter's match may sit behind messages nobody wants yet: look past the bound until one
  // message matched something, then leave the rest in the engine (its window pushes back).
  bool matched = false;
  while (unbounded || matching_.unexpected_count() < kUnexpectedBound) {
    auto message = engine_->try_receive();
    if (!message) break;
    if (matching_.arrive(std::move(*message))) {
      unbounded = false;
      matched = true;
    }
  }
  return matched;
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
        matching_.settle_later(*r);
      },
      [this](Request* r, const std::string&) {
        r->shared_error = MPI_ERR_OTHER;
        matching_.settle_later(*r);
      });
}

void FrontEnd::took_unexpected_locked() {
  if (progress_thread_ && matching_.unexpected_count() + 1 >= kUnexpectedBound) progress_thread_->wake();
}

void FrontEnd::wait_for_send_queue(int dest_world) {
  // No full progress step here: a collective's transfer (send_bytes) comes from inside one.
  wait_rounds([&] {
    std::lock_guard lock(mutex_);
    pump_locked(true);
    return pending_sends_.empty(dest_world) ? WaitRound::kDone : WaitRound::kWaiting;
  });
}

void FrontEnd::settle() {
  std::lock_guard lock(mutex_);
  if (!matching_.has_settled()) return;
  for (MatchSlot* slot : matching_.take_settled()) {
    Request* r = static_cast<Request*>(slot);
    if (r->complete) continue;
    if (r->kind == Request::Kind::kReceive) {
      release_native_order(*r);  // no longer pending (matched by the progress thread, or cut short)
      if (r->shared_error != MPI_SUCCESS) {
        r->error = r->status.MPI_ERROR = r->shared_error;
      } else if (r->matched && r->matched_message->complete) {
        r->matched = false;
        const std::shared_ptr<ArrivedMessage> message = std::move(r->matched_message);
        const std::byte* data = message->in_place ? nullptr : message->body.data();  // nullptr: in the buffer
        r->error = deliver(data, message->size, r->matched_envelope, lookup(r->comm), r->receive_buffer, r->count,
                           r->type, r->comm, &r->status);
      } else {
        continue;  // its last segment lists it again
      }
    } else if (r->shared_error != MPI_SUCCESS) {
      r->error = r->shared_error;
      r->status.MPI_ERROR = r->error;
      if (r->mode == SendMode::kSynchronous) matching_.forget_acknowledgement(*r);
    } else if (!send_complete(r->sent, r->mode == SendMode::kSynchronous, r->acknowledged, false)) {
      continue;
    }
    if (r->complete_now()) remove_request(r->handle);  // MPI_Request_free'd meanwhile
  }
}

int FrontEnd::claim_native_messages() {
  // Nonblocking MPI calls under the lock: the progress thread only waits meanwhile.
  std::lock_guard lock(mutex_);
  return matching_.receives().claim_native(
      [](const MatchSlot* slot, const PostedReceive&) -> std::optional<NativeMessage> {
        const Request* r = static_cast<const Request*>(slot);
        int flag = 0;
        MPI_Status probed;
        PMPI_Iprobe(r->peer, r->tag, r->comm, &flag, &probed);
        if (!flag) return std::nullopt;
        return NativeMessage{probed.MPI_SOURCE, probed.MPI_TAG};
      },
      [this](MatchSlot* slot, const NativeMessage& message) {
        return take_native_message(*static_cast<Request*>(slot), message);
      },
      [this](MatchSlot* slot) {
        Request* taker = static_cast<Request*>(slot);
        release_native_order(*taker);
        if (taker->freed) {  // MPI_Request_free'd: Open MPI finishes the receive on its own
          PMPI_Request_free(&taker->native);
          remove_request(taker->handle);
        }
      });
}

bool FrontEnd::take_native_message(Request& r, const NativeMessage& probed) {
  // The oldest message from the probed source with the probed tag is the probed one.
  int flag = 0;
  MPI_Message message;
  PMPI_Improbe(probed.source, probed.tag, r.comm, &flag, &message, MPI_STATUS_IGNORE);
  if (flag) PMPI_Imrecv(r.receive_buffer, r.count, r.type, &message, &r.native);
  return flag != 0;
}

bool FrontEnd::native_message_claimed(MPI_Comm comm, int source, int tag) const {
  return matching_.receives().oldest_native(reinterpret_cast<std::uintptr_t>(comm), NativeMessage{source, tag}) != nullptr;
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
    if (r->freed) remove_request(handle);
  }
}

void FrontEnd::handle_peer_failures() {
  for (auto& failure : engine_->take_peer_failures()) {
    auto found = world_of_endpoint_.find(failure.peer_endpoint);
    if (found == world_of_endpoint_.end()) continue;
    const int world = found->second;
    failed_world_ranks_.insert(world);
    failure_reasons_[world] = failure.reason;
    std::lock_guard lock(mutex_);
    // Receives that only this peer could satisfy, its message in progress and synchronous sends
    // waiting for it fail (the latter two settle later).
    for (MatchSlot* slot : matching_.peer_failed(world)) {
      Request* r = static_cast<Request*>(slot);
      r->complete = true;
      r->error = MPI_ERR_OTHER;
      r->status.MPI_ERROR = MPI_ERR_OTHER;
      release_native_order(*r);
    }
  }
}

void FrontEnd::idle(IdleStep step) {
  // MPI_THREAD_MULTIPLE: the other threads' calls run while this one waits (api_lock.h); what
  // they change is looked at again in the next round. Only a wait loop of this thread's call
  // comes here: it holds no reference that another call may free.
  const ApiLock::Unheld others_may_call;
  if (step == IdleStep::kSpin) {
    if (others_may_call.released()) sched_yield();  // a thread waiting for the lock gets it
    return;
  }
  if (step == IdleStep::kYield) {
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
