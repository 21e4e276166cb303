// DatagramPacer: the congestion and pacing controller of the datagram (UDP) carrier, one per
// session. Pure: no clock reads, no I/O; the caller passes `now` (tests use a fake clock).
//
// It decides whether the next datagram may leave now (a window of bytes in flight, and a pacing
// rate), and when it may if not. It is told each datagram sent (an id: the ARQ sequence number; a
// re-sent id means its earlier copy was lost), each ACK (cumulative point and SACK ranges),
// retransmission timeouts, and when the sender ran out of data (application-limited).
//
// The model, in the spirit of BBR v1 but smaller:
//   - Delivery-rate samples from ACKs; the bottleneck rate is the largest sample of the last
//     kBandwidthWindowRounds round trips. Samples taken while application-limited only raise it.
//   - The window is cwnd_gain x rate x min RTT. It never decays while idle (rounds count ACKed
//     datagrams, not time), so a burst after a pause goes at the rate the path last carried,
//     unlike TCP's restart after idle.
//   - Start-up paces at 2/ln 2 x the rate (doubling what is delivered every round trip) until the
//     rate stops growing by kStartupGrowth for kStartupFlatRounds rounds; a drain phase empties the
//     queue it built, and cruising paces at the rate with a short probe (x kProbeGain, then
//     x kDrainAfterProbeGain) every kCycleRounds rounds, or at once again while probes find room.
//   - Random loss is not congestion: delivery-rate samples already exclude what was lost, so a
//     few percent of loss costs a few percent of rate, not a halving as in TCP Reno or CUBIC.
//   - It backs off (rate x kBackoffFactor, the estimate's history forgotten) when a round's
//     smallest RTT rises above the minimum by a margin (a standing queue), or when more than
//     kHeavyLossFraction of a round's datagrams are lost for kHeavyLossRounds rounds (a policer or
//     an overflowing queue). Start-up ends on one such round with kHeavyLossMinDatagrams lost.
//   - A warm start (seed(), from the path cache) replaces start-up's first round trips: it paces
//     at a share of the cached rate, window that rate x the cached RTT, until a round trip of ACKs
//     shows what the path delivers. Near the seed: start-up goes on from there. Far less, or heavy
//     loss: the estimate becomes the measured rate and a drain empties the seed's queue.
//   - A start-up jump (LONGPIPE_START_JUMP; off in the constructor's default) on a new path: the
//     first datagrams (up to 64) leave as a packet train of back-to-back bursts; the arrival times
//     the ACKs report (Arrivals) measure the bottleneck's rate after one round trip, however late
//     a loaded receiver answered. The pacer then paces at three quarters of it, judged as a warm
//     seed is, instead of doubling for ten round trips. Too little measured, or arrivals bunched
//     on the way: no jump.
//   - Until a busy round measured the path after start-up, the estimate is at least nine tenths of
//     the train's rate: small bursts measure the application, not the path.
//   - Loss is inferred as the ARQ infers it: a datagram is lost once one sent kReorderThreshold
//     sends after it has been acknowledged, on a retransmission timeout, or when its id is re-sent.
//
// Every tunable is a named constant in pacer_tuning.h with its reason.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "arq/arq_types.h"
#include "congestion/congestion_controller.h"
#include "congestion/delivery_rate.h"
#include "congestion/pacer_phases.h"
#include "congestion/pacer_seed.h"
#include "congestion/packet_train.h"
#include "congestion/path_filters.h"

namespace lp {

class DatagramPacer final : public CongestionController {
 public:
  using Phase = PacerPhases::Phase;  // the phase machine: pacer_phases.h
  // A warm start's fate: none offered, pacing at the seed, the path delivered it, or not (pacer_seed.h).
  using Seed = PacerSeed::State;
  // The start-up jump: switched off, waiting for a packet train's ACKs, or taken (its fate is then
  // the seed's: seeded until judged, confirmed or rejected).
  enum class Jump { kOff, kWaiting, kTaken };

  // `initial_rtt`: the path's round trip as configured (LONGPIPE_RTT) until one is measured.
  // `start_jump`: LONGPIPE_START_JUMP.
  // `refill_catch_up`: LONGPIPE_PACING_CATCH_UP (catch_up()).
  explicit DatagramPacer(ArqDuration initial_rtt, bool start_jump = false, bool refill_catch_up = false);

  // Whether a datagram may leave now: the window has room and the pacing time has come.
  bool can_send(ArqTime now) const { return window_open() && now >= next_send_time(); }
  bool window_open() const { return in_flight_ < window_bytes(); }
  // When pacing lets the next datagram go (it may already have passed).
  ArqTime next_send_time() const { return next_send_ - kPacingSlack; }

  // CongestionController; `id` is the ARQ sequence number.
  void on_sent(ArqTime now, std::uint64_t id, std::size_t bytes) override;
  // A datagram no ACK will name (a repair symbol, tail_fec.h) left at `now`: it takes its share of
  // the pacing rate, not of the window (it is never acknowledged, so it would stay in flight).
  void on_unacknowledged_sent(ArqTime now, std::size_t bytes);
  void on_ack(ArqTime now, std::uint64_t cumulative, std::span<const ArqSackRange> sack,
              std::optional<Arrivals> arrivals = std::nullopt) override;
  void on_timeout() override;
  // The session's datagram keys changed (a new control connection): what is in flight was sealed
  // under keys the peer drops, so it will never be acknowledged. Stops counting it in flight
  // without calling it loss (the path lost nothing; no back-off, no loss statistics).
  void forget_in_flight();
  // A validated warm start (path cache): the path's cached bottleneck rate (bytes per second) and
  // minimum RTT. Taken only before the first ACK (later the pacer has its own measurement);
  // returns whether it was.
  // (Before the first ACK, it takes an entry PacerSeed::worth_taking accepts.)
  bool seed(double rate, ArqDuration min_rtt);
  // The sender has nothing more to send although it may: rate samples until what is in flight now
  // is delivered measure the application, not the path.
  void on_application_limited() override;

  // The state, for the statistics and the tests.
  Phase phase() const { return phases_.phase(); }
  Seed seed_state() const { return seed_.state(); }
  Jump jump_state() const { return jump_state_; }
  // The seed came from a cache entry (a warm start), not from a packet train (a jump).
  bool warm_seed() const { return seed_.state() != Seed::kNone && jump_state_ != Jump::kTaken; }
  // The bottleneck rate the packet train measured (bytes per second; 0 = none yet).
  double train_rate() const { return train_rate_; }
  std::uint64_t trains() const { return trains_; }
  using TrainRefusal = PacketTrain::Refusal;
  std::uint64_t train_refusals(TrainRefusal why) const { return train_refusals_[static_cast<std::size_t>(why)]; }
  double bandwidth() const;                       // bytes per second (estimate of the bottleneck)
  double pacing_rate() const override;                  // bytes per second
  std::size_t window_bytes() const override;
  std::size_t in_flight() const { return in_flight_; }
  std::optional<ArqDuration> min_rtt() const { return rtt_.min(); }
  std::uint64_t rounds() const { return round_count_; }
  std::uint64_t backoffs_for_delay() const { return phases_.backoffs_for_delay(); }
  std::uint64_t backoffs_for_loss() const { return phases_.backoffs_for_loss(); }
  std::uint64_t lost_datagrams() const { return lost_datagrams_; }
  // What the pacer learnt of the path, for the warm-start cache (path_cache.h): the largest
  // estimate at the end of a round in which the sender was busy, once start-up was over (0 = none
  // yet: start-up's estimate is still growing, and an application-limited one is the
  // application's), and the loss of rounds in which no queue stood (a queue's drops are
  // congestion; the carrier choice asks for loss that congestion does not explain) as the ARQ
  // re-sent it (re-sends its earlier copy made needless left out), in bytes per million sent, once
  // PathEstimator::kMinLossSegments datagrams were sent so (-1 before).
  double path_rate() const { return path_rate_; }
  std::int64_t loss_ppm() const;
  // Send time given up in all while busy: how much later than pacing allowed datagrams left,
  // beyond what catch_up() makes up (the driver woke late, or the window was full).
  ArqDuration behind() const { return behind_; }
  // Send time made up in all: how late datagrams were that left in a catch-up burst.
  ArqDuration caught_up() const { return caught_up_; }
  // How much of a late wake-up's sending time the next datagram may make up: kCatchUp, or (with
  // refill_catch_up) cruising while busy what refills the pipe (estimate x smoothed RTT in flight,
  // kCruiseCatchUpRttShare of the minimum RTT at most, and kMaxCatchUp).
  ArqDuration catch_up() const;

  // Pacing releases datagrams up to this early: the event loop wakes at millisecond resolution,
  // so a millisecond's worth leaves per wake-up and timer wake-ups stay at most ~1000/s.
  static constexpr ArqDuration kPacingSlack{1000};

 private:
  struct Sent {
    std::uint64_t send_index;         // order of transmission (ids of re-sent datagrams are old)
    ArqTime sent_at;
    std::size_t bytes;
    DeliveryRateSampler::AtSend at_send;
    bool retransmission;              // its id was sent before: no RTT sample (Karn)
    PacketTrain::Place train;
  };
  void deliver(ArqTime now, std::map<std::uint64_t, Sent>::iterator it, std::optional<Sent>& newest);
  void mark_lost(std::map<std::uint64_t, Sent>::iterator it);
  void end_round(ArqTime now);
  void back_off(double new_rate);
  void leave_startup_on_queue();
  ArqDuration reorder_window() const;
  double train_floor() const;  // kTrainFloorShare x the train's rate, until the path was measured busy
  void judge_seed(ArqTime now);
  void end_seed(Seed verdict, double delivered_rate);
  void start_seeded(double rate);
  void measure_train();
  void refuse_train(TrainRefusal why);

  ArqDuration initial_rtt_;
  PacerPhases phases_;
  std::map<std::uint64_t, Sent> outstanding_;  // by id
  std::map<std::uint64_t, std::uint64_t> send_order_;  // send_index -> id, of outstanding_
  std::optional<std::uint64_t> highest_id_sent_;
  ArqTime newest_delivered_sent_at_{};  // send time of the most recently sent datagram delivered
  std::uint64_t next_send_index_ = 0;
  std::size_t in_flight_ = 0;
  ArqTime next_send_{};

  DeliveryRateSampler sampler_;
  RttFilter rtt_;
  MaxRateFilter rate_filter_;  // over the rounds in which the sender was not application-limited

  // Rounds: one ends when a datagram sent after the previous end is acknowledged.
  std::uint64_t round_count_ = 0;
  bool round_application_limited_ = false;       // the sender ran out of data during this round
  std::uint64_t next_round_send_index_ = 0;
  ArqTime round_started_{};
  std::uint64_t round_delivered_bytes_ = 0;
  std::uint64_t round_lost_bytes_ = 0;
  std::uint64_t round_lost_datagrams_ = 0;
  std::optional<ArqDuration> round_min_rtt_;
  std::optional<ArqDuration> stretch_min_rtt_;  // start-up's delay test within a round
  std::uint32_t stretch_samples_ = 0;
  ArqTime stretch_started_{};

  double startup_calm_rate_ = 0;                 // start-up's largest rate sample without a queue

  // Warm start or jump: pacing at the seed's rate until a round trip of ACKs shows whether the
  // path delivers it.
  PacerSeed seed_;

  // The packet train of the start-up jump: its bursts, and the ACKs that came for them.
  Jump jump_state_;
  PacketTrain train_;
  double train_rate_ = 0;
  bool train_floor_open_ = true;        // train_floor() applies (no busy cruise round, back-off or rejection yet)
  std::uint64_t trains_ = 0;
  std::array<std::uint64_t, static_cast<std::size_t>(TrainRefusal::kCount)> train_refusals_{};
  std::uint64_t lost_bytes_ = 0;

  std::uint64_t lost_datagrams_ = 0;
  double path_rate_ = 0;
  std::uint64_t round_sent_bytes_ = 0;    // sent in this round
  std::uint64_t round_resent_bytes_ = 0;  // re-sends delivered in this round that were needed
  std::uint64_t calm_sent_bytes_ = 0;     // the same over the rounds without a queue
  std::uint64_t calm_resent_bytes_ = 0;
  ArqDuration behind_{0};
  ArqDuration caught_up_{0};
  bool refill_catch_up_;
  bool ran_dry_ = true;  // nothing to send since the last datagram: a pause, not lateness
};

// The jump's state for the statistics: off, waiting, or (taken) its seed's fate.
const char* pacer_jump_name(const DatagramPacer& pacer);
const char* train_refusal_name(DatagramPacer::TrainRefusal why);

}  // namespace lp
