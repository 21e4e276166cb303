// SegmentedArrivals: the large messages whose segments are still arriving over LongPipe, one per
// source at most (segments.h: how a message is cut), and which receive each is bound to. MPI-free:
// MessageMatching (message_matching.h) calls it and turns what it reports into request errors;
// tests/mpi/segment_arrivals_test.cpp drives it with fake messages.
//
// The engine keeps each source's order, and a sender emits one message's segments back to back, so
// a continuation belongs to its source's message in progress; sources interleave freely. A new data
// message from a source whose message is still in progress means that one was cut short (its
// sender failed halfway): it is abandoned, and a receive that took it fails.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "segments.h"

namespace lp::mpi {

// A message that came over LongPipe, whole or (segmented) still arriving.
struct ArrivedMessage {
  std::vector<std::byte> body;
  bool synchronous = false;
  std::uint64_t sync_id = 0;
  std::uint64_t size = 0;  // data bytes of the whole message
  // Guarded by the owner's lock while segments arrive (either thread may complete it).
  bool complete = true;    // false while segments are missing (their data is not in `body` yet)
  bool in_place = false;   // complete, its data written straight into the receive's buffer
};

// What a continuation did to the receive bound to its message.
enum class SegmentEvent {
  kNone,       // nothing to tell a receive: more segments to come, or no receive took it yet
  kCompleted,  // `receive`'s message is complete (in its buffer, or in the message's body)
  kMalformed,  // more data than the header announced: the message is abandoned, `receive` fails
};

template <typename Receive>
struct SegmentOutcome {
  SegmentEvent event = SegmentEvent::kNone;
  Receive* receive = nullptr;
};

template <typename Receive>
class SegmentedArrivals {
 public:
  // The first engine message of a segmented message from `source` (its body in message->body, a
  // synchronous id stripped): sets message->size to the announced total and keeps the rest to
  // come. False if malformed (dropped). The caller abandons `source`'s message in progress first.
  bool begin(int source, const std::shared_ptr<ArrivedMessage>& message) {
    auto assembly = MessageAssembly::start(std::move(message->body));
    if (!assembly) return false;
    message->size = assembly->total();
    message->complete = assembly->complete();
    if (message->complete) {
      message->body = assembly->take();
    } else {
      arriving_.insert_or_assign(source, Arrival{message, std::move(*assembly), nullptr});
    }
    return true;
  }

  // A receive took `message` (from `source`) while its segments still arrive: they complete it
  // there. `in_place` (a flat type's buffer `sink` of `capacity` bytes): the data goes straight in,
  // bytes past `capacity` dropped (a truncated receive). False: the message was cut short, it never
  // completes.
  bool bind(int source, const std::shared_ptr<ArrivedMessage>& message, Receive* receive, bool in_place,
            std::byte* sink, std::size_t capacity) {
    auto it = arriving_.find(source);
    if (it == arriving_.end() || it->second.message != message) return false;
    it->second.receive = receive;
    if (in_place) it->second.assembly.redirect(sink, capacity);
    return true;
  }

  // A continuation from `source`: its data added to that source's message in progress (none: the
  // rest of a message cut short, dropped).
  SegmentOutcome<Receive> add(int source, std::span<const std::byte> data) {
    auto it = arriving_.find(source);
    if (it == arriving_.end()) return {};
    Arrival& arrival = it->second;
    if (!arrival.assembly.add(data)) return {SegmentEvent::kMalformed, abandon(source)};
    if (!arrival.assembly.complete()) return {};
    Arrival done = std::move(arrival);
    arriving_.erase(it);
    ArrivedMessage& message = *done.message;
    message.in_place = done.assembly.redirected();
    if (!message.in_place) message.body = done.assembly.take();
    message.complete = true;  // an unexpected one is now whole for whoever takes it
    if (!done.receive) return {};
    return {SegmentEvent::kCompleted, done.receive};
  }

  // `source`'s message in progress is cut short (a new message from it, or it failed): forgotten.
  // Returns the receive that took it (it fails), or nullptr; an unexpected one stays incomplete,
  // so a receive that takes it later fails at once (bind returns false).
  Receive* abandon(int source) {
    auto it = arriving_.find(source);
    if (it == arriving_.end()) return nullptr;
    Receive* receive = it->second.receive;
    arriving_.erase(it);
    return receive;
  }

  bool in_progress(int source) const { return arriving_.count(source) != 0; }
  std::size_t size() const { return arriving_.size(); }

 private:
  struct Arrival {
    std::shared_ptr<ArrivedMessage> message;  // also in the unexpected queue until a receive takes it
    MessageAssembly assembly;
    Receive* receive = nullptr;  // the receive that took it, once one did
  };

  std::unordered_map<int, Arrival> arriving_;  // by source
};

}  // namespace lp::mpi
