// ArqReceiver: the receiving half of the ARQ (one direction of a session). Accepts data frames in
// any order, hands each message out exactly once and in order, and decides when to acknowledge.
#pragma once

#include <deque>
#include <map>
#include <optional>

#include "arq/arq_types.h"

namespace lp {

class ArqReceiver {
 public:
  // Delivered message: next in order.
  struct Delivery {
    std::uint64_t seq = 0;
    ArqPayload payload;
  };

  explicit ArqReceiver(const ArqConfig& config);

  // In reliable-carrier mode a sender may run ahead of our window by this factor (its own window
  // may be configured larger, until our first ACK tells it ours); beyond, a frame is refused and
  // held messages stay bounded whatever the peer sends.
  static constexpr std::uint64_t kReliableCarrierWindowSlack = 4;

  // False if the frame was refused: beyond kReliableCarrierWindowSlack receive windows (reliable
  // carrier: nothing dropped there would come again, so the caller must reset the carrier).
  bool on_data(std::uint64_t seq, ArqPayload payload, ArqTime now);
  std::optional<Delivery> receive();
  bool ack_due(ArqTime now) const;
  ArqAck make_ack();
  void carrier_reset(ArqTime now) { want_ack(now, true); }

  std::optional<ArqTime> next_deadline() const;
  std::uint64_t next_expected() const { return next_expected_; }
  // A message received and not yet handed out by receive() (held out of order, or in order and
  // waiting), or nullptr: the datagram carrier's repair symbols are computed over such units.
  const ArqPayload* find(std::uint64_t seq) const;
  // SACK ranges the next ACK would carry (before max_sack_ranges).
  std::size_t held_ranges() const { return held_ranges_.size(); }
  // Fills in the receiver fields of `stats`.
  void add_stats(ArqStats& stats) const;

 private:
  // Counts the messages `seq` overtook (messages_skipped).
  void note_arrival(std::uint64_t seq);
  void accept_in_order(std::uint64_t seq, ArqPayload payload);
  void hold_out_of_order(std::uint64_t seq, ArqPayload payload);
  bool fits_window(std::uint64_t seq, std::size_t bytes) const;
  void want_ack(ArqTime now, bool at_once);

  ArqConfig config_;
  std::uint64_t next_expected_ = 0;              // = cumulative ACK
  std::uint64_t highest_end_ = 0;                // one past the highest message received
  std::map<std::uint64_t, ArqPayload> held_;     // out of order, all > next_expected_
  // The held sequence numbers as merged ranges (begin -> end): an ACK lists up to 640 of them, and
  // building it from held_ would walk every held unit (thousands on a long path) for every ACK.
  std::map<std::uint64_t, std::uint64_t> held_ranges_;
  std::uint64_t held_bytes_ = 0;
  std::deque<Delivery> ready_;                   // in order, waiting for receive()
  // ACK state: new in-order messages since the last ACK, since when an ACK has been owed, and
  // whether something (a hole, a duplicate, a reset) asks for it without delay.
  std::uint32_t unacked_messages_ = 0;
  std::optional<ArqTime> ack_owed_since_;
  bool ack_at_once_ = false;
  ArqStats counters_;                     // only the receiver's counters are used
};

}  // namespace lp
