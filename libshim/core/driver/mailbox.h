// Mailbox: where application threads and the progress thread meet. Per peer an outbox of packed
// messages not yet in the ARQ; one receive queue; peer failures; the eventfds and condition
// variables. Only the driver (progress_loop.cpp) and the public API (engine.cpp) call it: protocol
// code never wakes the application. The window-full policy itself is a pure function
// (decide_window_full).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "config.h"
#include "engine.h"
#include "file_descriptor.h"
#include "message.h"
#include "stats/stats.h"

namespace lp {

class Arq;

// A message waiting for the ARQ window, already packed (message.h).
struct QueuedMessage {
  std::vector<std::byte> packed;
  std::size_t body_bytes = 0;
};

// One peer's part of the mailbox (guarded by the mailbox's mutex).
struct MailboxSlot {
  explicit MailboxSlot(std::string peer_endpoint) : peer(std::move(peer_endpoint)) {}
  const std::string peer;
  std::deque<QueuedMessage> outbox;         // not yet handed to the ARQ
  std::size_t outbox_bytes = 0;
  std::uint64_t unacknowledged = 0;         // in the ARQ, not yet acknowledged
  std::optional<std::string> failure;       // set once the peer is given up on
  SessionStatistics statistics;             // refreshed by the progress thread
  // send() named this peer: its session may dial it (Session::allow_dialling). Set by application
  // threads, read by the progress thread.
  std::atomic<bool> named_by_application{false};
};

struct WindowLimits {
  std::size_t messages = 0;
  std::size_t bytes = 0;
};

// Whether an outbox has no room for a message of `incoming_bytes` (an empty one always has).
bool outbox_full(const std::deque<QueuedMessage>& outbox, std::size_t outbox_bytes, std::size_t incoming_bytes,
                 WindowLimits limits);

enum class WindowFullAction { kQueue, kWait, kRefuse, kDrop };
struct WindowFullDecision {
  WindowFullAction action = WindowFullAction::kQueue;
  std::size_t drop_oldest = 0;  // kDrop: how many of the oldest queued messages go
};
// What send() does with a message of `incoming_bytes` under LONGPIPE_WINDOW_FULL: queue it, wait
// for room, refuse (WindowFull), or drop the oldest untransmitted messages first.
WindowFullDecision decide_window_full(WindowFullPolicy policy, const std::deque<QueuedMessage>& outbox,
                                      std::size_t outbox_bytes, std::size_t incoming_bytes, WindowLimits limits);

class Mailbox {
 public:
  Mailbox(WindowFullPolicy policy, WindowLimits limits);

  // --- application threads ---
  // Queues a message for `peer` (policy above); throws PeerFailed, WindowFull.
  void send(const std::string& peer, QueuedMessage queued);
  // The same without waiting and without LONGPIPE_WINDOW_FULL's policy: false (nothing packed)
  // while the queue has no room for `body_bytes`; then room_event_fd() turns readable once it has
  // (or the peer failed). `pack` runs under the mailbox's lock only when the message goes in.
  bool try_send(const std::string& peer, std::size_t body_bytes, const std::function<QueuedMessage()>& pack);
  int room_event_fd() const { return room_fd_.get(); }
  std::optional<Message> try_receive();
  int receive_event_fd() const { return receive_fd_.get(); }
  bool wait_receive(std::chrono::milliseconds timeout);
  bool flush(std::chrono::milliseconds timeout);
  std::vector<PeerFailure> take_peer_failures();
  // Forgets a failed peer's slot (the next send makes a new one) and asks the progress thread to
  // retire its failed session (Requests::retried).
  void retry(const std::string& peer);
  void request_reset();
  void request_stop();
  // The JSON of everything published.
  std::string stats_json(const std::string& local_endpoint, const SocketTuning& listen_tuning) const;

  // --- progress thread ---
  int wake_fd() const { return wake_fd_.get(); }
  // After wake_fd() was readable.
  void drain_wake();
  struct Requests {
    bool stop = false;
    bool reset = false;
    bool reading_paused = false;                     // the application is a window behind
    std::vector<std::shared_ptr<MailboxSlot>> new_slots;  // peers send() named first
    std::vector<std::string> retried;                     // failed peers to try again (before new_slots)
  };
  Requests take_requests();
  bool reading_paused() const { return reading_paused_.load(); }
  std::shared_ptr<MailboxSlot> slot_for(const std::string& peer);
  // The slot for a new process at `peer`'s endpoint (Endpoint::replace_gone_session): a fresh one
  // if the old process's failed (sends to the newcomer must not fail for it), else the same.
  std::shared_ptr<MailboxSlot> slot_for_newcomer(const std::string& peer);
  // Drops `slot` if the application never named its peer and nothing waits in it (a session only
  // the peer opened, now over). False if it must stay.
  bool forget_unnamed(const std::shared_ptr<MailboxSlot>& slot);
  // Received messages (or a message to ourselves) to the receive queue.
  void deliver(std::vector<Message>& batch);
  // Moves queued messages into the ARQ while its window has room.
  void move_outbox(MailboxSlot& slot, Arq& arq);
  // The same through a session's own intake (the datagram carrier splits messages into units).
  void move_outbox(MailboxSlot& slot, const std::function<bool(std::size_t)>& can_accept,
                   const std::function<void(ArqPayload)>& submit);
  // Publishes a session's counters; wakes flush() when the unacknowledged count changed.
  void publish(MailboxSlot& slot, const SessionStatistics& statistics);
  // The peer is given up on: its queued messages and `in_flight` unacknowledged ones are lost.
  void fail(MailboxSlot& slot, const std::string& reason, std::size_t in_flight, const SessionStatistics& statistics);
  void publish_endpoint(const EndpointStatistics& statistics);
  void publish_progress_thread(const std::string& description);
  // The progress thread returned from its wait (stats_json's "progress_wakeups").
  void note_progress_wakeup() { progress_wakeups_.fetch_add(1, std::memory_order_relaxed); }
  // The progress thread is gone: wake every blocked send().
  void stopped();

 private:
  bool receive_backlog_full() const;
  bool receive_backlog_below_half() const;
  void wake_progress_thread();
  // The slot for `peer` (created and announced on first use); throws PeerFailed. Under mutex_.
  MailboxSlot& named_slot(const std::string& peer, bool* created);
  void signal_room();

  const WindowFullPolicy policy_;
  const WindowLimits limits_;
  FileDescriptor wake_fd_;     // application threads -> progress thread
  FileDescriptor receive_fd_;  // progress thread -> application: messages waiting
  FileDescriptor room_fd_;     // progress thread -> application: an outbox try_send found full has room

  mutable std::mutex mutex_;
  std::condition_variable space_cv_;    // room in an outbox, or a failure
  std::condition_variable receive_cv_;  // a message arrived
  std::condition_variable flushed_cv_;  // acknowledgements arrived, or a failure
  std::map<std::string, std::shared_ptr<MailboxSlot>> slots_;
  std::vector<std::shared_ptr<MailboxSlot>> new_slots_;
  std::deque<Message> receive_queue_;
  std::size_t receive_bytes_ = 0;
  std::vector<std::string> retried_;
  std::vector<PeerFailure> failures_;
  bool stop_requested_ = false;
  bool reset_requested_ = false;
  EndpointStatistics endpoint_;
  std::string progress_thread_;
  // Set by the application thread that signals wake_fd_, cleared by the progress thread after it
  // drained wake_fd_: one eventfd write per burst instead of one per message.
  std::atomic<bool> wake_pending_{false};
  std::atomic<bool> reading_paused_{false};
  std::atomic<std::uint64_t> progress_wakeups_{0};
  bool room_wanted_ = false;  // a try_send was refused since room_fd_ was last signalled
};

}  // namespace lp
