// A seed of the datagram pacer (datagram_pacer.h): a warm start's rate from the path cache, or the
// start-up jump's from a packet train. The pacer paces at it until a round trip of busy ACKs shows
// whether the path delivers it. Pure: it keeps the seed's state and the span it is judged over,
// and is told the time, what was delivered and lost, and the round trip; the pacer carries out
// the verdict on its estimate and phases. Its constants are pacer_tuning.h's.
#pragma once

#include <cstdint>
#include <optional>

#include "arq/arq_types.h"

namespace lp {

class PacerSeed {
 public:
  // None offered, pacing at the seed, the path delivered it, or not.
  enum class State { kNone, kSeeded, kConfirmed, kRejected };
  // The verdict on a seed: `delivered` and `lost` bytes over `span` of a busy round trip's ACKs,
  // `round_trip` the minimum RTT. kSeeded: too early to say; kNone: the application sent too
  // little to say, judge the next busy round trip; else the seed's fate, and the rate delivered.
  struct Evidence {
    double delivered = 0, lost = 0;
    ArqDuration span{0}, round_trip{0};
    double seed_rate = 0;
    bool application_limited = false;
  };
  struct Verdict {
    State state;
    double rate;
  };
  static Verdict verdict(const Evidence& evidence);
  // Whether a cached entry is worth seeding: its share of the rate over the round trip is above
  // what a cold start-up sends in its first round trip. LONGPIPE_CARRIER=auto asks it before
  // choosing datagrams for a known path (carrier_choice.h).
  static bool worth_taking(double rate, ArqDuration min_rtt);

  // Pacing at `rate` (bytes per second), judged on the ACKs of datagrams sent from the pacer's
  // send index `from_send_index` on (what left before was paced at another rate).
  void start(double rate, std::uint64_t from_send_index);
  // An ACK's newest datagram (its send index, whether it left application-limited), with the
  // bytes delivered before this ACK and lost so far: the judged span starts at the first ACK of a
  // datagram sent while the sender was busy (ACKs of pings before a burst measure less).
  void on_acked(ArqTime now, std::uint64_t send_index, bool application_limited, std::uint64_t delivered_before,
                std::uint64_t lost);
  // The sender ran out of data: the span judged so far says nothing of the path.
  void on_application_limited() { application_limited_ = true; }
  // Judges the span at `now` (bytes delivered and lost in all so far, the minimum RTT): the
  // confirmed or rejected verdict once there is one (the state takes it); nothing while it is too
  // early, or when the application sent too little (the next busy span is judged).
  std::optional<Verdict> judge(ArqTime now, std::uint64_t delivered, std::uint64_t lost, ArqDuration round_trip);

  State state() const { return state_; }
  double rate() const { return rate_; }

 private:
  State state_ = State::kNone;
  double rate_ = 0;
  std::optional<ArqTime> judged_from_;
  std::uint64_t delivered_from_ = 0;
  std::uint64_t lost_from_ = 0;
  bool application_limited_ = false;  // the judged span says nothing of the path
  std::uint64_t from_send_index_ = 0;
};

const char* pacer_seed_name(PacerSeed::State seed);

}  // namespace lp
