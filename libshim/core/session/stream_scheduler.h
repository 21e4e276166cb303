// StreamScheduler: a session's parallel streams (connections) and which one carries what. Pure.
//
//   - Slots: slot i holds stream i's established connection, or null, and our own attempts for
//     it (a redial: one; probes of a silent path: a few at once, the first through wins). Our own
//     LONGPIPE_STREAMS slots are redialled when empty; slots beyond exist while the peer keeps them.
//   - Tie-break: when both ends dial one stream, both keep the connection dialled by the smaller
//     endpoint string; between two dialled by one side, the newer wins.
//   - Striping: DATA goes round robin over the streams whose output is below a high-water mark;
//     with LONGPIPE_SMALL_MESSAGE, small messages use stream 0 and large ones the others. DATA
//     avoids suspect streams (Connection::suspect) while others are not.
//   - Spill: slots from kFirstSpillStream on are spill streams, dialled with a new session's first
//     streams (LONGPIPE_SPILL_STREAMS). A DATA frame goes on one only while the window of the
//     stream it would take is full for it and below the path's BDP (a fresh connection's slow
//     start), and only on one whose window takes it whole now. The receiver's ARQ puts messages
//     from any stream back in sequence.
//   - Large spill (LONGPIPE_SPILL_LARGE): a frame larger than an initial window queues on the spill
//     stream whose window gets it out soonest, if that beats its own stream. Either kind spills
//     only while the spill streams' bytes plus the regular streams' flight stay within one judged
//     BDP, so that ten slow starts side by side cannot overfill the path and its queue.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "carrier/carrier.h"  // StreamWindow
#include "wire/wire_frame.h"

namespace lp {

class Connection;

class StreamScheduler {
 public:
  using WindowLookup = std::function<StreamWindow(const Connection&)>;

  // Stop encoding new DATA for a connection while this much output waits for the carrier: the
  // ARQ keeps the messages, so memory stays bounded by the window.
  static constexpr std::size_t kOutputHighWater = 1u << 20;

  // A frame larger than this leaves whole in no fresh connection's first flight (Linux's initial
  // window, 10 segments of Ethernet's 1448-byte MSS): only such frames queue on a spill stream
  // behind its window. Smaller ones spill only into room found now: queued behind a window a
  // 1 KiB frame waits a round trip it would not wait on its own stream (idle_restart.h).
  static constexpr std::size_t kLargeSpillFrame = 10 * 1448;
  // What the spill streams may hold (in flight, in their sockets, in our output) plus what the
  // regular streams have in flight, as a share of the judged BDP. One BDP: the emulated paths'
  // queue holds one BDP (netem/README.md; the usual router sizing rule, Villamizar & Song 1994),
  // so one BDP in flight fills the pipe and at most that queue; without a bound, large frames on
  // all spill streams overfill it (docs/engine/first-batch.md, "Large frames on the spill streams").
  static constexpr double kSpillBudgetBdpShare = 1.0;

  // `own_streams` is LONGPIPE_STREAMS; `small_message` LONGPIPE_SMALL_MESSAGE (0: striping);
  // `spill_large` LONGPIPE_SPILL_LARGE.
  StreamScheduler(std::size_t own_streams, std::size_t small_message, bool spill_large = true);

  std::size_t own_streams() const { return own_streams_; }
  std::size_t slots() const { return streams_.size(); }
  Connection* stream(std::size_t slot) const { return streams_[slot]; }
  // Our own connection attempts in progress for `slot`, oldest first (empty if none).
  const std::vector<Connection*>& attempts(std::size_t slot) const {
    static const std::vector<Connection*> kNone;
    return slot < dialling_.size() ? dialling_[slot] : kNone;
  }
  // Whether `connection` is one of our attempts in progress for its slot.
  bool is_attempt(const Connection& connection) const;
  // Whether `slot` has neither a connection nor an attempt of ours (a slot not made yet has none).
  bool free_to_dial(std::size_t slot) const {
    return (slot >= streams_.size() || streams_[slot] == nullptr) && attempts(slot).empty();
  }
  const std::vector<Connection*>& streams() const { return streams_; }

  std::size_t established() const;
  Connection* first() const;
  // Whether `connection` is the established connection of its stream slot.
  bool holds(const Connection& connection) const;
  // Our own slots with neither a connection nor a dial in progress.
  std::vector<std::size_t> slots_to_dial() const;

  // One more attempt of ours in progress for `slot`.
  void add_attempt(std::size_t slot, Connection* connection);
  // Forgets `connection` wherever it is (established or dialling); returns whether it was established.
  bool remove(const Connection& connection);
  // The session agreed on the datagram carrier (carrier_choice.h): from now on one own stream (the
  // control connection) and no split by size; connections already up in other slots stay.
  void use_control_stream_only() {
    own_streams_ = 1;
    small_message_ = 0;
  }
  // Makes room for a stream index announced by the peer (it may use more streams than we do).
  void ensure_slot(std::size_t slot);
  // Installs an established connection in its slot; returns the connection it displaced, if any.
  Connection* install(Connection& connection);

  // The tie-break: whether an established connection dialled by `existing_dialler` stays when
  // one dialled by `new_dialler` arrives for the same stream. Both ends decide alike.
  static bool keep_existing(const std::string& existing_dialler, const std::string& new_dialler);

  // The stream for the next DATA frame: round robin over the streams with room, or null.
  Connection* next_with_room() const;
  // With LONGPIPE_SMALL_MESSAGE: stream 0 for small messages, the next of the others for large
  // ones (even if its output is full); null when no such stream is up (the caller uses any).
  Connection* by_size(std::size_t packed_bytes);
  // Whether a DATA frame of `packed_bytes` would find room now on the stream it goes to (as
  // next_with_room() and by_size() choose it): then the session has something to encode.
  bool has_room_for(std::size_t packed_bytes) const;
  // A frame went out on `connection`: the round robin continues after it.
  void sent_on(const Connection& connection);

  static bool is_spill_slot(std::size_t slot) { return slot >= kFirstSpillStream; }
  // Established spill streams.
  std::size_t spill_established() const;
  // Bytes `window` would still send at once beyond what waits for it (`pending`: output of ours
  // the socket has not taken yet).
  static std::size_t window_room(const StreamWindow& window, std::size_t pending);
  // The decision: whether a frame of `frame_bytes` for a stream whose window is `window`, with
  // `pending` output waiting, should go on a spill stream: its window cannot send the frame now
  // and is still below `path_bdp` (beyond that a wait is the link's, not slow start's).
  static bool should_spill(const StreamWindow& window, std::size_t pending, std::size_t frame_bytes, double path_bdp);
  // Bytes a stream holds that its window has not yet acknowledged: in flight, unsent in the socket,
  // and our own output not yet written.
  static std::size_t held(const StreamWindow& window, std::size_t pending);
  // How many of its windows a stream needs to get out what it holds plus `frame_bytes` (a slow
  // start's round trips grow with it); a window of 0 (unknown) never gets it out.
  static double windows_to_send(const StreamWindow& window, std::size_t pending, std::size_t frame_bytes);
  // The spill budget: whether spilling `frame_bytes` keeps `spill_held` (the spill streams' held
  // bytes) plus `regular_in_flight` within kSpillBudgetBdpShare x `path_bdp`.
  static bool within_spill_budget(std::size_t spill_held, std::size_t regular_in_flight, std::size_t frame_bytes,
                                  double path_bdp);
  // Where that frame goes instead: the first established spill stream whose window sends it whole
  // now; else, for a frame above kLargeSpillFrame (with LONGPIPE_SPILL_LARGE), the spill stream
  // that needs the fewest windows to send it, if fewer than `preferred`; null when it should not
  // spill, the budget is spent, or no spill stream beats `preferred` (it waits for that one).
  Connection* spill_target(const Connection& preferred, std::size_t frame_bytes, double path_bdp,
                           const WindowLookup& window) const;

 private:
  // Whether new DATA may go on `connection`: a suspect stream (established before a silence; its
  // TCP may hold bytes for seconds in a backed-off retransmission timer) only when no stream is
  // fresh. After an outage the first replaced stream carries everything until the others are.
  bool carries(const Connection* connection) const;
  // Slots below kFirstSpillStream: the streams that carry DATA in turn.
  std::size_t regular_slots() const { return std::min(streams_.size(), kFirstSpillStream); }

  std::size_t own_streams_;
  std::size_t small_message_;
  bool spill_large_;
  std::vector<Connection*> streams_;
  std::vector<std::vector<Connection*>> dialling_;  // our own connection attempts in progress, per slot
  std::size_t next_stream_ = 0;         // round-robin cursor for striping DATA frames
  std::size_t next_large_stream_ = 0;   // the same among streams 1..
};

}  // namespace lp
