// Start-up's packet train (the start-up jump, datagram_pacer.h): a new path's first datagrams, sent
// back to back in bursts, timed by the receiver's arrivals (the ACKs' Arrivals), measure the
// bottleneck's rate. Pure; the pacer decides when a train opens and what its reading is worth.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "congestion/congestion_controller.h"

namespace lp {

class PacketTrain {
 public:
  // Why bursts and trains are not taken for a measurement of the bottleneck, for the statistics: a
  // burst whose arrivals were no more spread than its sends; a train whose passing bursts held too
  // few datagrams, or whose measured arrivals covered too little of it or too short a time; one
  // slower than start-up already paced (the pacer's judgement).
  enum class Refusal { kSenderPaced, kFewDatagrams, kLittleMeasured, kShortSpan, kSlowerThanStartup, kCount };
  // A datagram's place: its train (0: none) and the burst in it.
  struct Place {
    std::uint64_t train = 0;
    std::size_t burst = 0;
  };
  // What a train measured once all of it was acknowledged: the bursts refused as sender-paced, and
  // the train's refusal or its rate (bytes per second).
  struct Reading {
    std::uint64_t sender_paced = 0;
    std::optional<Refusal> refusal;
    double rate = 0;
  };

  // No train is open, outstanding or awaiting its measurement.
  bool idle() const { return !open_ && outstanding_ == 0 && !acked_; }
  void open();
  // A datagram left: its place (in the open train unless it is a re-send). Up to kTrainDatagrams.
  Place on_sent(ArqTime now, std::size_t bytes, bool retransmission);
  // A datagram of `place` was lost or re-sent, or (on_delivered) acknowledged by the ACK begun.
  void leave(const Place& place) {
    if (place.train == generation_ && place.train != 0 && outstanding_ > 0) --outstanding_;
  }
  void begin_ack();
  void on_delivered(const Place& place, std::size_t bytes);
  // The ACK delivered something: later datagrams are paced by what the ACKs show.
  void close() { open_ = false; }
  // After the ACK's deliveries: when they arrived, by the receiver's clock.
  void time_arrivals(ArqTime now, const std::optional<CongestionController::Arrivals>& arrivals);
  // Acknowledged, none outstanding: measure() may read it.
  bool complete() const { return acked_ && outstanding_ == 0 && !open_; }
  Reading measure();
  // What is in flight will never be acknowledged (new keys): the train measures nothing.
  void forget();

 private:
  // One burst: datagrams sent back to back, and when they arrived: `measured_bytes` arrived after
  // `arrivals_from` until `arrivals_to`.
  struct Burst {
    ArqTime first_sent{}, last_sent{};
    std::uint64_t sent = 0, sent_bytes = 0;
    std::optional<std::chrono::nanoseconds> arrivals_from;
    std::chrono::nanoseconds arrivals_to{0};
    std::uint64_t measured_bytes = 0;
  };
  struct AckedInBurst {
    std::uint64_t datagrams = 0, bytes = 0;
  };
  bool open_ = false;             // the datagrams sent now join the train
  bool acked_ = false;            // an ACK came for the current train
  std::uint64_t generation_ = 0;  // the current train (Place::train)
  std::uint64_t sent_ = 0;        // datagrams of the current train
  std::uint64_t outstanding_ = 0; // neither delivered nor lost yet
  std::vector<Burst> bursts_;
  std::vector<AckedInBurst> ack_bursts_;  // of the ACK being handled, by burst
  std::uint64_t acked_outside_ = 0;       // ... and its datagrams of no burst (re-sends, later ones)
};

}  // namespace lp
