#include "driver/mailbox.h"

#include "arq/arq.h"
#include "event_fd.h"

namespace lp {

bool outbox_full(const std::deque<QueuedMessage>& outbox, std::size_t outbox_bytes, std::size_t incoming_bytes,
                 WindowLimits limits) {
  return !outbox.empty() && (outbox.size() >= limits.messages || outbox_bytes + incoming_bytes > limits.bytes);
}

WindowFullDecision decide_window_full(WindowFullPolicy policy, const std::deque<QueuedMessage>& outbox,
                                      std::size_t outbox_bytes, std::size_t incoming_bytes, WindowLimits limits) {
  if (!outbox_full(outbox, outbox_bytes, incoming_bytes, limits)) return {WindowFullAction::kQueue, 0};
  switch (policy) {
    case WindowFullPolicy::kBlock:
      return {WindowFullAction::kWait, 0};
    case WindowFullPolicy::kFail:
      return {WindowFullAction::kRefuse, 0};
    case WindowFullPolicy::kKeepLatest:
      return {WindowFullAction::kDrop, outbox.size()};
    case WindowFullPolicy::kDropOldest:
      break;
  }
  // The fewest oldest messages whose removal makes room.
  std::size_t dropped = 0;
  std::size_t remaining_messages = outbox.size();
  while (remaining_messages > 0 &&
         (remaining_messages >= limits.messages || outbox_bytes + incoming_bytes > limits.bytes)) {
    outbox_bytes -= outbox[dropped].body_bytes;
    ++dropped;
    --remaining_messages;
  }
  return {WindowFullAction::kDrop, dropped};
}

Mailbox::Mailbox(WindowFullPolicy policy, WindowLimits limits)
    : policy_(policy),
      limits_(limits),
      wake_fd_(make_eventfd()),
      receive_fd_(make_eventfd()),
      room_fd_(make_eventfd()) {}

void Mailbox::wake_progress_thread() {
  if (!wake_pending_.exchange(true)) signal_eventfd(wake_fd_.get());
}

MailboxSlot& Mailbox::named_slot(const std::string& peer, bool* created) {
  auto& slot = slots_[peer];
  *created = false;
  if (!slot) {
    slot = std::make_shared<MailboxSlot>(peer);
    new_slots_.push_back(slot);
    *created = true;
  }
  if (slot->failure) throw PeerFailed("peer " + peer + " failed: " + *slot->failure);
  slot->named_by_application.store(true, std::memory_order_relaxed);
  return *slot;
}

void Mailbox::signal_room() {
  if (room_wanted_) {
    room_wanted_ = false;
    signal_eventfd(room_fd_.get());
  }
}

bool Mailbox::try_send(const std::string& peer, std::size_t body_bytes, const std::function<QueuedMessage()>& pack) {
  std::unique_lock lock(mutex_);
  bool created = false;
  MailboxSlot& slot = named_slot(peer, &created);
  if (outbox_full(slot.outbox, slot.outbox_bytes, body_bytes, limits_)) {
    room_wanted_ = true;
    lock.unlock();
    if (created) wake_progress_thread();
    return false;
  }
  QueuedMessage queued = pack();
  slot.outbox_bytes += queued.body_bytes;
  slot.outbox.push_back(std::move(queued));
  const bool first_in_queue = slot.outbox.size() == 1;
  lock.unlock();
  if (created || first_in_queue) wake_progress_thread();
  return true;
}

void Mailbox::send(const std::string& peer, QueuedMessage queued) {
  std::unique_lock lock(mutex_);
  bool created = false;
  named_slot(peer, &created);
  const std::shared_ptr<MailboxSlot> slot = slots_[peer];
  const WindowFullDecision decision =
      decide_window_full(policy_, slot->outbox, slot->outbox_bytes, queued.body_bytes, limits_);
  switch (decision.action) {
    case WindowFullAction::kQueue:
      break;
    case WindowFullAction::kWait:
      space_cv_.wait(lock, [&] {
        return !outbox_full(slot->outbox, slot->outbox_bytes, queued.body_bytes, limits_) || slot->failure ||
               stop_requested_;
      });
      if (slot->failure) throw PeerFailed("peer " + peer + " failed: " + *slot->failure);
      break;
    case WindowFullAction::kRefuse:
      throw WindowFull("send window to " + peer + " is full (" + std::to_string(slot->outbox.size()) +
                       " messages queued; LONGPIPE_WINDOW_FULL=fail)");
    case WindowFullAction::kDrop:
      for (std::size_t i = 0; i < decision.drop_oldest; ++i) {
        slot->outbox_bytes -= slot->outbox.front().body_bytes;
        slot->outbox.pop_front();
      }
      slot->statistics.dropped_by_policy += decision.drop_oldest;
      break;
  }
  slot->outbox_bytes += queued.body_bytes;
  slot->outbox.push_back(std::move(queued));
  const bool first_in_queue = slot->outbox.size() == 1;
  lock.unlock();
  // One wake-up per burst: the progress thread drains the whole outbox when it runs.
  if (created || first_in_queue) wake_progress_thread();
}

// The receive queue is bounded like a send window (LONGPIPE_WINDOW_MESSAGES / _BYTES): when the
// application falls that far behind, reading stops and the carrier pushes back on the sending
// session, whose own window policy then decides (block, fail or drop) for that one peer.
bool Mailbox::receive_backlog_full() const {
  return receive_queue_.size() >= limits_.messages || receive_bytes_ >= limits_.bytes;
}

bool Mailbox::receive_backlog_below_half() const {
  return receive_queue_.size() < limits_.messages / 2 + 1 && receive_bytes_ < limits_.bytes / 2;
}

std::optional<Message> Mailbox::try_receive() {
  std::lock_guard lock(mutex_);
  if (receive_queue_.empty()) return std::nullopt;
  Message message = std::move(receive_queue_.front());
  receive_queue_.pop_front();
  receive_bytes_ -= message.body.size();
  if (receive_queue_.empty()) drain_eventfd(receive_fd_.get());
  if (reading_paused_.load() && receive_backlog_below_half()) wake_progress_thread();
  return message;
}

bool Mailbox::wait_receive(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return receive_cv_.wait_for(lock, timeout, [&] { return !receive_queue_.empty(); });
}

bool Mailbox::flush(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return flushed_cv_.wait_for(lock, timeout, [&] {
    for (const auto& [peer, slot] : slots_) {
      if (!slot->failure && (!slot->outbox.empty() || slot->unacknowledged > 0)) return false;
    }
    return true;
  });
}

void Mailbox::retry(const std::string& peer) {
  {
    std::lock_guard lock(mutex_);
    const auto found = slots_.find(peer);
    if (found == slots_.end() || !found->second->failure) return;
    slots_.erase(found);
    retried_.push_back(peer);
  }
  wake_progress_thread();
}

std::vector<PeerFailure> Mailbox::take_peer_failures() {
  std::lock_guard lock(mutex_);
  return std::exchange(failures_, {});
}

void Mailbox::request_reset() {
  {
    std::lock_guard lock(mutex_);
    reset_requested_ = true;
  }
  signal_eventfd(wake_fd_.get());
}

void Mailbox::request_stop() {
  {
    std::lock_guard lock(mutex_);
    stop_requested_ = true;
  }
  signal_eventfd(wake_fd_.get());
}

std::string Mailbox::stats_json(const std::string& local_endpoint, const SocketTuning& listen_tuning) const {
  EngineReport report;
  report.local_endpoint = local_endpoint;
  report.listen_tuning = listen_tuning;
  std::lock_guard lock(mutex_);
  report.progress_thread = progress_thread_;
  report.progress_wakeups = progress_wakeups_.load(std::memory_order_relaxed);
  report.endpoint = endpoint_;
  report.receive_queue_messages = receive_queue_.size();
  for (const auto& [peer, slot] : slots_) {
    report.sessions.push_back({peer, slot->failure, slot->statistics, slot->outbox.size()});
  }
  return to_json(report);
}

void Mailbox::drain_wake() {
  // Drain first, then clear: the other order can swallow the signal of a send() that set the flag
  // in between, leaving the flag set with nothing to clear it, and every later send() would then
  // skip its wake-up (the outbox only moving when the carrier or a timer woke the thread).
  drain_eventfd(wake_fd_.get());
  wake_pending_.store(false);
}

Mailbox::Requests Mailbox::take_requests() {
  Requests requests;
  std::lock_guard lock(mutex_);
  requests.stop = stop_requested_;
  requests.reset = std::exchange(reset_requested_, false);
  requests.new_slots.swap(new_slots_);
  requests.retried.swap(retried_);
  requests.reading_paused = receive_backlog_full();
  reading_paused_.store(requests.reading_paused);
  return requests;
}

std::shared_ptr<MailboxSlot> Mailbox::slot_for(const std::string& peer) {
  std::lock_guard lock(mutex_);
  auto& slot = slots_[peer];
  if (!slot) slot = std::make_shared<MailboxSlot>(peer);
  return slot;
}

std::shared_ptr<MailboxSlot> Mailbox::slot_for_newcomer(const std::string& peer) {
  std::lock_guard lock(mutex_);
  auto& slot = slots_[peer];
  if (!slot || slot->failure) slot = std::make_shared<MailboxSlot>(peer);
  return slot;
}

bool Mailbox::forget_unnamed(const std::shared_ptr<MailboxSlot>& slot) {
  std::lock_guard lock(mutex_);
  if (slot->named_by_application.load(std::memory_order_relaxed) || !slot->outbox.empty()) return false;
  if (auto found = slots_.find(slot->peer); found != slots_.end() && found->second == slot) slots_.erase(found);
  return true;
}

void Mailbox::deliver(std::vector<Message>& batch) {
  if (batch.empty()) return;
  std::lock_guard lock(mutex_);
  const bool was_empty = receive_queue_.empty();
  for (auto& message : batch) {
    receive_bytes_ += message.body.size();
    receive_queue_.push_back(std::move(message));
  }
  batch.clear();
  if (was_empty) signal_eventfd(receive_fd_.get());
  receive_cv_.notify_all();
}

void Mailbox::move_outbox(MailboxSlot& slot, Arq& arq) {
  move_outbox(
      slot, [&arq](std::size_t bytes) { return arq.can_accept(bytes); },
      [&arq](ArqPayload packed) { arq.submit(std::move(packed)); });
}

void Mailbox::move_outbox(MailboxSlot& slot, const std::function<bool(std::size_t)>& can_accept,
                          const std::function<void(ArqPayload)>& submit) {
  bool moved = false;
  std::lock_guard lock(mutex_);
  while (!slot.outbox.empty() && can_accept(slot.outbox.front().packed.size())) {
    slot.outbox_bytes -= slot.outbox.front().body_bytes;
    submit(std::move(slot.outbox.front().packed));
    slot.outbox.pop_front();
    moved = true;
  }
  if (moved) {
    space_cv_.notify_all();
    signal_room();
  }
}

void Mailbox::publish(MailboxSlot& slot, const SessionStatistics& statistics) {
  std::lock_guard lock(mutex_);
  const std::uint64_t dropped = slot.statistics.dropped_by_policy;  // counted by send()
  slot.statistics = statistics;
  slot.statistics.dropped_by_policy = dropped;
  const std::uint64_t unacknowledged = statistics.arq.in_flight_messages;
  if (unacknowledged != slot.unacknowledged) {
    slot.unacknowledged = unacknowledged;
    flushed_cv_.notify_all();
  }
}

void Mailbox::fail(MailboxSlot& slot, const std::string& reason, std::size_t in_flight,
                   const SessionStatistics& statistics) {
  std::lock_guard lock(mutex_);
  const std::size_t lost = slot.outbox.size() + in_flight;
  slot.failure = reason;
  slot.outbox.clear();
  slot.outbox_bytes = 0;
  slot.unacknowledged = 0;
  slot.statistics = statistics;
  failures_.push_back({slot.peer, reason, lost});
  space_cv_.notify_all();
  room_wanted_ = true;
  signal_room();
  flushed_cv_.notify_all();
}

void Mailbox::publish_endpoint(const EndpointStatistics& statistics) {
  std::lock_guard lock(mutex_);
  endpoint_ = statistics;
}

void Mailbox::publish_progress_thread(const std::string& description) {
  std::lock_guard lock(mutex_);
  progress_thread_ = description;
}

void Mailbox::stopped() { space_cv_.notify_all(); }

}  // namespace lp
