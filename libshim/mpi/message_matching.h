// MessageMatching: the front end's matching and request core, without MPI. FrontEnd (front_end.h)
// keeps the MPI side (datatypes, statuses, error handlers, Open MPI's own messages) and hands
// everything that decides who gets which LongPipe message to this class:
//   - messages from the engine (Message, wire_format.h's flags): data goes to the oldest posted
//     receive that matches it (receive_matcher.h) or waits as unexpected; a synchronous one is
//     acknowledged (through the caller's `acknowledge`) when it matches, however it matches; an
//     acknowledgement completes its synchronous send; a large message's segments
//     (segment_arrivals.h) go to the receive that took its first one, straight into its buffer
//     when its type is flat;
//   - receives posted (first the unexpected messages, then the posted list), cancelled, probed
//     and taken by matched probes;
//   - failures: a message cut short, a peer gone, a malformed message;
//   - the requests whose state changed (the settle list), for the caller to complete.
// Ranks are MPI_COMM_WORLD ranks and contexts LongPipe's context ids (plain integers); the caller's
// wildcards are envelope.h's (equal to Open MPI's: checked in front_end.cpp) and its error codes are
// passed in. Single-threaded: FrontEnd calls it under its mutex_.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "communicator_info.h"
#include "envelope.h"
#include "message.h"
#include "receive_matcher.h"
#include "segment_arrivals.h"
#include "synchronous_sends.h"

namespace lp::mpi {

// The caller's "no error" code (MPI_SUCCESS).
inline constexpr int kNoError = 0;

// The part of a LongPipe request that matching reads and writes (FrontEnd::Request derives from it).
struct MatchSlot {
  // Receives: where a message's data goes, and whether segments may be written there in place.
  void* receive_buffer = nullptr;
  bool flat = false;          // the type's data is contiguous
  std::size_t capacity = 0;   // data bytes the buffer holds
  int peer_world = -1;        // the remote peer, for failures (-1: any, or none at another site)
  std::uint64_t sync_id = 0;  // synchronous sends: what the receiver's acknowledgement names

  // Set by MessageMatching (or the caller's sends); the caller completes the request from them.
  bool matched = false;  // receives: a LongPipe message is bound to it
  Envelope matched_envelope;
  std::shared_ptr<ArrivedMessage> matched_message;
  bool sent = false;                // sends: wholly in the engine
  bool acknowledged = false;        // synchronous sends: the receiver matched it
  int shared_error = kNoError;      // failed before completing (peer gone, message cut short)
  bool listed = false;              // in the settle list
};

// Where a receive's messages come from, worked out from its communicator: the PostedReceive and
// the one remote peer it waits for (-1: any source, or a same-site one).
struct ReceiveRoute {
  PostedReceive how;
  int peer_world = -1;
};
// `peer` and `tag` as the application gave them (`any_source`: the caller's MPI_ANY_SOURCE;
// tag wildcards pass through as kAnyTag); `scope` names the communicator for Open MPI's messages.
ReceiveRoute route_receive(const CommunicatorInfo& info, int peer, int tag, int any_source, std::uintptr_t scope);
// What a probe for (`source`, `tag`) on the communicator looks for among LongPipe's messages.
ReceivePattern probe_pattern(const CommunicatorInfo& info, int source, int tag, int any_source);

class MessageMatching {
 public:
  using Receives = ReceiveMatcher<MatchSlot, std::shared_ptr<ArrivedMessage>>;
  using Taken = Receives::Taken;
  // The caller's error codes: a message cut short or a peer gone; a malformed message.
  struct Errors {
    int failed = 1;
    int malformed = 1;
  };
  // Sends the acknowledgement of synchronous send `sync_id` to `source_world` (queued by the caller).
  using Acknowledge = std::function<void(int source_world, std::uint64_t sync_id)>;

  MessageMatching(Errors errors, Acknowledge acknowledge) : errors_(errors), acknowledge_(std::move(acknowledge)) {}

  // A message from the engine. True if it matched or completed a request of ours (listed to settle).
  bool arrive(Message message);

  // Posting a receive, step one: binds the oldest unexpected message `how` matches (true), else
  // nothing happens. Step two: the receive joins the posted ones after every earlier one.
  bool take_unexpected(MatchSlot& receive, const PostedReceive& how);
  void enqueue(MatchSlot& receive, const PostedReceive& how) { receives_.enqueue(&receive, how); }
  // Takes a posted receive off the list (cancelled, or its communicator's path changed). False: it
  // was not posted (matched already: it completes).
  bool cancel(MatchSlot& receive) { return receives_.remove(&receive); }
  bool is_posted(const MatchSlot& receive) const { return receives_.is_posted(&receive); }
  // Binds a message to a receive (a matched probe's message to its MPI_Mrecv, or the oldest
  // unexpected one): acknowledges a synchronous one, points segments still arriving at the
  // receive, lists it to settle.
  void bind(MatchSlot& receive, const Envelope& envelope, const std::shared_ptr<ArrivedMessage>& message);

  // Probes: the oldest unexpected message matching `pattern`, left there (nullptr if none), or
  // taken (a matched probe; the collectives' own transfers).
  const ArrivedMessage* probe(const ReceivePattern& pattern, Envelope* envelope = nullptr) const {
    const auto* found = receives_.probe(pattern, envelope);
    return found ? found->get() : nullptr;
  }
  std::optional<Taken> take(const ReceivePattern& pattern) { return receives_.take(pattern); }

  // Synchronous sends: the id a new one carries; waiting for (or no longer for) its acknowledgement.
  std::uint64_t next_sync_id() { return sync_sends_.next_id(); }
  void await_acknowledgement(MatchSlot& send) { sync_sends_.await(send.sync_id, &send); }
  void forget_acknowledgement(const MatchSlot& send) { sync_sends_.forget(send.sync_id); }
  bool awaits_acknowledgement(const MatchSlot& send) const { return sync_sends_.waiting(send.sync_id); }

  // Peer `world` is gone: its message in progress is cut short (its receive fails), synchronous
  // sends it took wait no more (they fail). Returns the posted receives that only it could
  // satisfy, taken off the list (the caller fails them at once).
  std::vector<MatchSlot*> peer_failed(int world);

  // The settle list: requests whose state changed since the caller last looked (each once).
  void settle_later(MatchSlot& slot);
  std::vector<MatchSlot*> take_settled();
  void unlist(MatchSlot& slot);
  bool has_settled() const { return !settled_.empty(); }

  // The posted receives, for Open MPI's messages (claimed by the oldest matching receive).
  Receives& receives() { return receives_; }
  const Receives& receives() const { return receives_; }
  std::size_t unexpected_count() const { return receives_.unexpected_count(); }
  std::size_t posted_count() const { return receives_.posted_count(); }

 private:
  bool continue_segmented(int source_world, const std::vector<std::byte>& body);
  bool abandon_segmented(int source_world, int error);

  Errors errors_;
  Acknowledge acknowledge_;
  Receives receives_;  // posted receives in posting order, unexpected messages in arrival order
  SynchronousSends<MatchSlot> sync_sends_;   // waiting for their match
  SegmentedArrivals<MatchSlot> segmented_;   // segmented messages still arriving, by source
  std::vector<MatchSlot*> settled_;          // matched, sent or acknowledged since the caller last looked
};

}  // namespace lp::mpi
