// LinkModel: one direction of an emulated wide-area link, as a pure state machine (no I/O, no clock
// of its own: the caller passes the time). A packet offered to the link
//   1. waits in a tail-drop FIFO in front of the rate limiter (dropped-by-queue when it is full),
//   2. is serialised at the link rate,
//   3. may be lost on the way (dropped-by-loss: it used link capacity, as a corrupted frame does),
//   4. arrives after the propagation delay plus normal jitter, in sending order unless reordering
//      is allowed.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "loss_model.h"

namespace lp::netem {

using Nanoseconds = std::chrono::nanoseconds;
using Packet = std::vector<std::uint8_t>;

// The FIFO's capacity, in bytes or as time at the link rate (converted with the rate).
struct QueueLimit {
  enum class Unit { kBytes, kTime };
  Unit unit = Unit::kBytes;
  std::uint64_t bytes = 0;
  Nanoseconds time{0};
};

struct LinkParameters {
  Nanoseconds delay{0};   // one-way propagation delay
  Nanoseconds jitter{0};  // standard deviation of the normal jitter added to the delay
  bool allow_reordering = false;
  LossParameters loss;
  double rate_bits_per_second = 0;  // 0: no rate limit (and so no queue)
  QueueLimit queue;
};

struct LinkCounters {
  std::uint64_t forwarded_packets = 0;
  std::uint64_t forwarded_bytes = 0;
  std::uint64_t dropped_by_loss = 0;
  std::uint64_t dropped_by_queue = 0;
};

class LinkModel {
 public:
  enum class Verdict { kAccepted, kDroppedByLoss, kDroppedByQueue };

  LinkModel(const LinkParameters& parameters, std::uint64_t seed);

  // Offers a packet to the link at time `now` (times never go backwards).
  Verdict offer(Nanoseconds now, Packet packet);

  // When the next packet arrives at the far end, if any is on its way.
  std::optional<Nanoseconds> next_arrival() const;

  // Takes the next packet that has arrived by `now`, in arrival order; nullopt when none is due.
  // Counted as forwarded.
  std::optional<Packet> take_arrived(Nanoseconds now);

  // Bytes waiting for the rate limiter at `now` (the packet being serialised counts in part).
  std::uint64_t queued_bytes(Nanoseconds now) const;

  const LinkCounters& counters() const { return counters_; }
  std::size_t packets_in_flight() const { return in_flight_.size(); }

 private:
  struct InFlight {
    Nanoseconds arrival;
    std::uint64_t sequence;  // ties keep sending order
    Packet packet;
  };
  static bool arrives_later(const InFlight& a, const InFlight& b);

  Nanoseconds serialisation_time(std::size_t bytes) const;
  Nanoseconds queue_capacity_time() const;
  Nanoseconds propagation_delay();

  LinkParameters parameters_;
  LossModel loss_;
  std::mt19937_64 jitter_random_;
  std::normal_distribution<double> jitter_nanoseconds_;

  Nanoseconds link_free_at_{0};      // when the rate limiter finishes the last accepted packet
  Nanoseconds latest_arrival_{0};    // keeps arrivals in order when reordering is not allowed
  std::uint64_t next_sequence_ = 0;
  std::uint64_t bytes_in_flight_ = 0;
  std::vector<InFlight> in_flight_;  // a min-heap on arrival time
  LinkCounters counters_;
};

}  // namespace lp::netem
