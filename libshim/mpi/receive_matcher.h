// ReceiveMatcher: the decisions of MPI's matching for the receives LongPipe matches, without MPI.
// It holds the posted receives in posting order (wildcard and specific ones in one list) and the
// messages that came over LongPipe before a receive wanted them (the unexpected queue), and
// decides who gets what:
//   - an arriving message goes to the oldest posted receive that matches it, else it queues;
//   - a receive being posted first takes the oldest unexpected message it matches, else it queues;
//   - a probe reports, and a matched probe takes, the oldest unexpected message it matches;
//   - a message carried by Open MPI (a same-site sender) goes to the oldest posted receive of its
//     communicator that may take Open MPI messages and matches its source and tag
//     (claim_native): so a receive posted after a wildcard one never takes the message the
//     wildcard one was entitled to, whichever path the message came by.
// Non-overtaking follows: both lists keep their order and every decision takes the oldest match.
// `Receive` is the caller's receive record (only its address is used), `Message` the caller's
// handle of an arrived message (copied into the queue: a shared pointer, a small value).
// Single-threaded: FrontEnd calls it under its mutex_ (front_end.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <optional>
#include <utility>
#include <vector>

#include "envelope.h"
#include "match_queue.h"

namespace lp::mpi {

// How a receive is posted: what LongPipe messages it takes, and whether messages Open MPI carries
// may match it too (its source is any, or a same-site rank).
struct PostedReceive {
  ReceivePattern pattern;         // LongPipe messages: context, source's world rank or any, tag
  bool takes_engine_messages = true;  // false: its source is a same-site rank, LongPipe never carries its messages
  bool may_match_native = false;  // Open MPI's messages may match: claimed by claim_native
  std::uintptr_t scope = 0;       // the communicator, as the caller names it (for Open MPI's messages)
  int native_source = kAnySource; // the source as the communicator's rank, or kAnySource
};

// A message Open MPI holds, as a probe of it reports: source as the communicator's rank, tag.
struct NativeMessage {
  int source = 0;
  int tag = 0;
};

// What a matched receive gets of a message of `message_bytes` with room for `capacity_bytes`: the
// bytes that fit, and whether the rest was cut off (MPI_ERR_TRUNCATE).
struct DeliveredSize {
  std::uint64_t bytes = 0;
  bool truncated = false;
};
inline DeliveredSize delivered_size(std::uint64_t message_bytes, std::uint64_t capacity_bytes) {
  return {message_bytes < capacity_bytes ? message_bytes : capacity_bytes, message_bytes > capacity_bytes};
}

template <typename Receive, typename Message>
class ReceiveMatcher {
 public:
  using Taken = std::pair<Envelope, Message>;

  // Posting, step one: the oldest unexpected message `how` matches, taken out of the queue (the
  // receive is then matched and not posted). nullopt: nothing here for it.
  std::optional<Taken> take_unexpected_for(const PostedReceive& how) {
    if (!how.takes_engine_messages) return std::nullopt;
    return unexpected_.take(how.pattern);
  }
  // Posting, step two: the receive joins the posted ones, after every receive posted before.
  void enqueue(Receive* receive, const PostedReceive& how) { posted_.push_back({receive, how}); }
  // Both steps: the message it takes at once, or nullopt and the receive is posted.
  std::optional<Taken> post(Receive* receive, const PostedReceive& how) {
    auto found = take_unexpected_for(how);
    if (!found) enqueue(receive, how);
    return found;
  }

  // A LongPipe message arrived: the oldest posted receive that matches it, taken off the posted
  // list; nullptr if none, and the message waits in the unexpected queue.
  Receive* arrive(const Envelope& envelope, const Message& message) {
    for (auto it = posted_.begin(); it != posted_.end(); ++it) {
      if (!it->how.takes_engine_messages || !it->how.pattern.matches(envelope)) continue;
      Receive* receive = it->receive;
      posted_.erase(it);
      return receive;
    }
    unexpected_.push(envelope, message);
    return nullptr;
  }

  // Probes: the oldest unexpected message matching `pattern`, left there (nullptr if none), or
  // taken (a matched probe; collectives' own transfers).
  const Message* probe(const ReceivePattern& pattern, Envelope* envelope = nullptr) const {
    return unexpected_.find(pattern, envelope);
  }
  std::optional<Taken> take(const ReceivePattern& pattern) { return unexpected_.take(pattern); }

  // Takes a posted receive off the list (cancelled, failed, or given an Open MPI message). False:
  // it was not posted (matched already, or never posted).
  bool remove(Receive* receive) {
    for (auto it = posted_.begin(); it != posted_.end(); ++it) {
      if (it->receive != receive) continue;
      posted_.erase(it);
      return true;
    }
    return false;
  }
  bool is_posted(const Receive* receive) const {
    for (const auto& entry : posted_) {
      if (entry.receive == receive) return true;
    }
    return false;
  }
  // Takes every posted receive for which `pred(receive, how)` holds off the list, oldest first.
  template <typename Pred>
  std::vector<Receive*> remove_if(Pred pred) {
    std::vector<Receive*> removed;
    for (auto it = posted_.begin(); it != posted_.end();) {
      if (pred(it->receive, it->how)) {
        removed.push_back(it->receive);
        it = posted_.erase(it);
      } else {
        ++it;
      }
    }
    return removed;
  }

  // The oldest posted receive on `scope` that a message Open MPI holds from `source` with `tag`
  // matches; nullptr if none (a probe may then report that message).
  Receive* oldest_native(std::uintptr_t scope, NativeMessage message) const {
    for (const auto& entry : posted_) {
      if (native_matches(entry.how, scope, message)) return entry.receive;
    }
    return nullptr;
  }

  // Lets the posted receives that may match Open MPI's messages claim them, oldest first: for each
  // such receive, `probe(receive, how)` returns a message Open MPI holds that it matches (the
  // oldest from that source with that tag), or nullopt. The message goes to the oldest posted
  // receive that matches it (which may be older than the one that probed: the message may have
  // come after that one looked), through `take(owner, message)`; the owner leaves the list if
  // `take` returns true, and `claimed(owner)` hears of it after. The receive that probed looks
  // again while an older one took its message. Returns how many messages were claimed.
  template <typename Probe, typename Take, typename Claimed>
  int claim_native(Probe probe, Take take, Claimed claimed) {
    int count = 0;
    for (auto it = posted_.begin(); it != posted_.end();) {
      std::optional<NativeMessage> message;
      if (it->how.may_match_native) message = probe(it->receive, it->how);
      if (!message) {
        ++it;
        continue;
      }
      auto owner = it;
      for (auto look = posted_.begin(); look != posted_.end(); ++look) {
        if (native_matches(look->how, it->how.scope, *message)) {
          owner = look;
          break;
        }
      }
      Receive* const taker = owner->receive;
      if (!take(taker, *message)) {
        ++it;
        continue;
      }
      ++count;
      if (owner == it) {
        it = posted_.erase(it);
      } else {
        posted_.erase(owner);  // `it` looks again
      }
      claimed(taker);
    }
    return count;
  }

  std::size_t posted_count() const { return posted_.size(); }
  std::size_t unexpected_count() const { return unexpected_.size(); }

 private:
  struct Entry {
    Receive* receive;
    PostedReceive how;
  };

  static bool native_matches(const PostedReceive& how, std::uintptr_t scope, NativeMessage message) {
    return how.may_match_native && how.scope == scope &&
           (how.native_source == kAnySource || how.native_source == message.source) &&
           (how.pattern.tag == kAnyTag || how.pattern.tag == message.tag);
  }

  std::list<Entry> posted_;  // posting order
  MatchQueue<Message> unexpected_;  // arrival order
};

}  // namespace lp::mpi
