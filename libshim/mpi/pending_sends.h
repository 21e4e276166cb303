// PendingSends: messages to other sites that did not fit their session's window yet, one FIFO per
// destination. A message leaves only after every message queued before it to the same destination
// (MPI's non-overtaking rule; the engine keeps one session's order), and its engine messages (a
// large message's segments) leave in order and back to back: the receiver abandons a message whose
// segments are still arriving when another data message from the same source comes. Single-threaded:
// its owner's lock guards it.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "engine.h"
#include "outgoing_message.h"

namespace lp::mpi {

template <typename Owner>
class PendingSends {
 public:
  struct Entry {
    std::unique_ptr<OutgoingMessage> message;
    bool needs_application_thread = false;  // next() calls MPI (PMPI_Pack): only that thread builds it
    Owner* owner = nullptr;                 // told when the whole message is out, or failed
    std::optional<Message> built;           // built but refused by the window: it goes first
  };
  // try_send(destination, message): false while the window is full (message untouched); may throw
  // PeerFailed. sent(owner): the message is wholly in the engine. failed(owner, reason).
  using TrySend = std::function<bool(int, Message&)>;
  using Sent = std::function<void(Owner*)>;
  using Failed = std::function<void(Owner*, const std::string&)>;

  bool empty() const { return queues_.empty(); }
  bool empty(int destination) const { return queues_.find(destination) == queues_.end(); }
  void push(int destination, Entry entry) { queues_[destination].push_back(std::move(entry)); }
  // Drops what waits for `destination` (a message cut short there is abandoned by its receiver at
  // the next data message).
  void discard(int destination) { queues_.erase(destination); }

  // Hands messages out while the engine takes them. A destination stops at an entry that needs the
  // application thread unless `application_thread`.
  void pump(bool application_thread, const TrySend& try_send, const Sent& sent, const Failed& failed) {
    for (auto it = queues_.begin(); it != queues_.end();) {
      pump_one(it->first, it->second, application_thread, try_send, sent, failed);
      it = it->second.empty() ? queues_.erase(it) : std::next(it);
    }
  }

 private:
  static void pump_one(int destination, std::deque<Entry>& queue, bool application_thread, const TrySend& try_send,
                       const Sent& sent, const Failed& failed) {
    while (!queue.empty()) {
      Entry& entry = queue.front();
      try {
        if (!entry.built) {
          if (entry.message->done()) {
            sent(entry.owner);
            queue.pop_front();
            continue;
          }
          if (entry.needs_application_thread && !application_thread) return;
          entry.built = entry.message->next();
        }
        if (!try_send(destination, *entry.built)) return;
        entry.built.reset();
      } catch (const PeerFailed& e) {
        // Every message queued to that peer fails with it.
        for (Entry& lost : queue) failed(lost.owner, e.what());
        queue.clear();
        return;
      } catch (const std::exception& e) {
        failed(entry.owner, e.what());
        queue.pop_front();
      }
    }
  }

  std::map<int, std::deque<Entry>> queues_;
};

}  // namespace lp::mpi
