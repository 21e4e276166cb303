#include "congestion/datagram_pacer.h"

#include <algorithm>
#include <cmath>

#include "path/path_estimator.h"

namespace lp {
namespace {

using std::chrono::duration_cast;

// A full datagram on the wire (IPv4 MTU 1500 - IP and UDP headers): the unit the windows below
// are counted in.
constexpr double kDatagramBytes = 1472;
// The rate estimate is the largest sample of this many rounds: long enough to ride out a round or
// two of ACK compression or a slow receiver, short enough to follow a narrowing path (BBR uses 10).
constexpr std::size_t kBandwidthWindowRounds = 10;
// 2/ln 2: the smallest gain that doubles what is delivered every round trip (BBR's start-up).
constexpr double kStartupGain = 2.885;
// Start-up ends when the rate grew less than this over kStartupFlatRounds rounds: the pipe is full.
constexpr double kStartupGrowth = 1.25;
constexpr int kStartupFlatRounds = 3;
// ... or as soon as a round's smallest RTT exceeds the minimum by an eighth of it, within [4, 16]
// ms (HyStart's delay increase, RFC 9406): the queue is filling, and one more doubling would
// overflow it; a burst of losses that large leaves more holes than an ACK's SACK ranges can name,
// and the recovery from it costs more round trips than start-up saves.
constexpr ArqDuration kStartupDelayMin = std::chrono::milliseconds(4);
constexpr ArqDuration kStartupDelayMax = std::chrono::milliseconds(16);
// ... judged also within the round, on the smallest RTT of each stretch of an eighth of the
// minimum RTT (67 ms on geo) and at least kStartupDelaySamples samples (RFC 9406's N_RTT_SAMPLE):
// every sample of a stretch must show the queue, so a loaded host's scheduling stall of a few
// ms, or one datagram's jitter, does not end start-up.
constexpr int kStartupDelayStretch = 8;
constexpr std::uint32_t kStartupDelaySamples = 8;
// Start-up's window: twice the estimate x the minimum RTT. Still doubles what is delivered per
// round trip (the estimate is what the last round delivered), but what start-up has in flight is
// at most the pipe plus one bandwidth-delay product of queue while the estimate is at or below the
// bottleneck: the smoothed RTT (which the queue inflates) and 2/ln 2 allowed up to 5.8 BDPs, and
// a one-BDP queue overflowed by tens of thousands of datagrams on geo before any exit acted.
constexpr double kStartupWindowGain = 2.0;
// Start-up's first window: 96 datagrams (~141 KB), more than TCP's 10 segments because a long path
// pays every doubling with a whole round trip (540 ms on geo), and a datagram path has no one else
// to share its first round with that TCP's small window would protect. It is what the tcp carrier
// sends in its first round trip too (10 initial windows, over its 2 streams and 8 spill streams),
// and it holds 100 x 1 KiB messages (one datagram each, ~1.1 KB on the wire): 64 datagrams left a
// new long path's 1 KiB first batch a round trip behind tcp's (libshim/README.md, "A new long path
// on datagrams").
constexpr double kInitialWindowBytes = 96 * kDatagramBytes;
// Never less than this in flight: enough ACKs per round to keep measuring.
constexpr double kMinWindowBytes = 4 * kDatagramBytes;
// Cruising window: two bandwidth-delay products, so delayed or thinned ACKs do not starve pacing.
constexpr double kCruiseWindowGain = 2.0;
// The probe of a cruise cycle: one round at 1.25 x finds more rate if the path has it, the next at
// 0.75 x drains the queue the probe built, then kCycleRounds - 2 rounds at the estimate.
constexpr double kProbeGain = 1.25;
constexpr double kDrainAfterProbeGain = 0.75;
constexpr std::uint64_t kCycleRounds = 8;
// A probe that raised the estimate by this much found room (a path that got faster, or an
// estimate a back-off left too low): the next probe follows at once instead of a cycle later,
// so the rate grows by kProbeGain every two rounds until the path is full.
constexpr double kProbeGrowth = 1.1;
// Drain ends when what is in flight fits one bandwidth-delay product, or after this many rounds:
// after heavy loss the ACKs of datagrams beyond the SACK ranges an ACK carries come late, and what
// the pacer counts in flight stays high for a while although the queue is gone.
constexpr int kMaxDrainRounds = 4;
// A standing queue: the smallest RTT of a round above the minimum by start-up's margin (an eighth
// of the minimum within [kStartupDelayMin, kStartupDelayMax]: 16 ms on geo) and by at least
// kQueueDelayFloor (a loaded host delays ACKs by milliseconds, which is not a queue on the path).
// Cruising at the estimate builds no queue, a probe round's is gone within the round after it,
// and the smallest RTT of a round is taken before a probe's queue builds; what stands is another
// flow's, or a path that got slower. Random loss raises no RTT: it never backs off for it.
// Before, the margin was a quarter of the minimum and 4 RTT deviations (up to half the minimum):
// a TCP CUBIC flow growing beside the cruise keeps its queue in a sawtooth whose deviation hid
// it, and was held at 15 % of geo (simulation, "a TCP CUBIC flow that starts with it"; 19 % with
// iperf3 on the emulated link); with this margin it gets 35 %.
constexpr ArqDuration kQueueDelayFloor = std::chrono::milliseconds(10);
// The window covers the smoothed RTT (so per-packet jitter does not shrink it below what the rate
// needs), but never more than this many minimum RTTs (a queue must not feed the window).
constexpr double kWindowRttCap = 2.0;
// ... for this many rounds running: jitter and a loaded host's scheduling delays raise a round's
// smallest RTT now and then; a standing queue raises it round after round.
constexpr int kQueueRounds = 3;
// How far above the minimum RTT a round's smallest RTT must stand to count as a queue (above).
ArqDuration standing_queue_margin(ArqDuration min_rtt) {
  return std::max(std::clamp(min_rtt / 8, kStartupDelayMin, kStartupDelayMax), kQueueDelayFloor);
}
// A back-off paces at this fraction of the rate delivered in the round that showed the queue (or
// the loss): below the bottleneck, so the queue drains, and close to it, so the path stays full.
constexpr double kDelayBackoffFactor = 0.85;
constexpr double kLossBackoffFactor = 0.75;
// After a back-off, wait this many rounds (the queue drains) before judging the delay again.
constexpr int kBackoffHoldRounds = 3;
// Heavy loss: more than a fifth of a round's datagrams lost, three rounds running (a probe that
// overfills the queue loses a burst in one or two rounds and drains itself). Random loss of a
// few percent (a satellite or radio link) stays far below, and costs no rate.
constexpr double kHeavyLossFraction = 0.2;
constexpr int kHeavyLossRounds = 3;
// Start-up ends on one round's heavy loss, so that round must have lost at least this many
// datagrams (BBRv2's full_loss_cnt): a round of an application sending a few small messages
// (lp-perf's answers, 1-3 datagrams a round) loses a third of it to one random loss. Taken for an
// overfilled path, that ended start-up and the flow cruised at its own tiny rate (0.12 Mbit/s on
// geo at 5 % loss: every batch of answers a round trip late).
constexpr std::uint64_t kHeavyLossMinDatagrams = 8;
// A datagram is lost once one sent this many sends after it has been acknowledged (the ARQ's fast
// retransmit threshold: reordering by fewer datagrams is not loss).
constexpr std::uint64_t kReorderThreshold = 3;
// ... and was sent at least a quarter of the minimum RTT (RACK's reordering window, RFC 8985),
// and at least this long, earlier than it: jitter of a millisecond reorders datagrams paced
// tens of microseconds apart.
constexpr ArqDuration kMinReorderWindow = std::chrono::milliseconds(2);
constexpr int kReorderDeviations = 4;
// The minimum RTT is forgotten after this long without a sample as small (a path that really got
// longer); idle time does not count, since no round ends without ACKs.
constexpr ArqDuration kMinRttWindow = std::chrono::seconds(10);
// Pacing catches up at most this much after the driver woke late (a loaded host): a late wake-up
// sends a little burst, never a window's worth. 2 ms gave up ~1 s of every 7 s batch of 100 MiB
// on geo-lossy under load 6 (pacing_behind_ms): 11-12k datagrams/s left where pacing allowed 13k.
// 10 ms at 155 Mbit/s is ~130 datagrams, a hundredth of geo's one-BDP queue. Start-up and drain
// keep it (start-up's delay test reads queues of 4-16 ms), and so does a send after a pause (there
// is nothing to make up).
constexpr ArqDuration kCatchUp = std::chrono::milliseconds(10);
// Cruising, a late wake-up while busy is made up as far as it refills the pipe: until one
// bandwidth-delay product (estimate x minimum RTT) is in flight again, since the ACKs that came
// during the stall took what the link carried meanwhile out of flight; beyond that a burst would
// stand in the bottleneck's queue (with a quarter of the minimum RTT and no such limit, geo-lossy's
// burst tails grew by 100-170 ms, the queue the bursts left). At most this share of the minimum RTT
// (135 ms on geo, ~1750 datagrams at 155 Mbit/s), should the estimate be high. With 10 ms the
// sender gave up 1-24 s of pacing per run of ten 1 MiB x 100 batches on geo-lossy at load 5-17, its
// thread runnable but waiting for a CPU 60-75 % of the time (libshim/README.md, "The sending thread
// on a loaded host").
constexpr double kCruiseCatchUpRttShare = 0.25;
// The pipe a catch-up refills is the smoothed RTT's, at most this many minimum RTTs: a quarter
// above the minimum (the delay back-off's threshold when the catch-up was measured; capped at the
// standing queue's margin of 16 ms on a 200 ms path, the simulated loaded host's catch-up set off
// 10 delay back-offs and carried 0.39 of the link, against 0.86 with this cap).
constexpr double kCatchUpRttCap = 1.25;
// ... and never more than this: a shallow bottleneck queue must take a catch-up burst whole.
constexpr ArqDuration kMaxCatchUp = std::chrono::milliseconds(150);
// Floor of the pacing rate (100 kbit/s): a collapsed estimate still probes its way back.
constexpr double kMinPacingRate = 12500;

// Warm start: pace at this share of the cached rate. The cache holds the best rate a session
// measured (no time window), and another flow may share the path now: starting a little below it
// still fills most of the pipe in the first round trip, and the ACKs then show the rest.
constexpr double kWarmStartShare = 0.85;
// The seeded window: the seed rate x RTT, with a quarter of room for ACK jitter so the window does
// not hold the pacing back; a wrong seed costs at most this much in flight before ACKs show it.
constexpr double kSeedWindowGain = 1.25;
// The seed is confirmed when a round trip of ACKs delivers at least this share of it; below, the
// path is slower than the cache says (the bottleneck delivers at its rate however fast we send).
constexpr double kSeedConfirmShare = 0.8;
// Start-up after a confirmed seed doubles the sending rate per round trip instead of start-up's
// 2/ln 2: the seed is usually close to the path, and 2.885 x it fills a one-BDP queue in half a
// round trip, long before the next round's delay test can stop it (measured in the simulation:
// as many drops as a cold start-up); 2 x fills it in one round trip. A seed too low still ramps
// faster than a cold start-up, which starts from its first window (kInitialWindowBytes).
constexpr double kSeedStartupGain = 2.0;
// A re-sent datagram acknowledged sooner than this share of the minimum RTT after the re-send was
// delivered by its earlier copy: the re-send was not needed (no loss). On geo a loaded host's
// 100 ms stall ended in a retransmission timeout that re-sent a whole window (6000-12000
// datagrams) the receiver already had; counted as loss, a loss-free path looked 1.8 % lossy.
constexpr double kResendAckRttShare = 0.9;
// Loss is judged over at least this many datagrams: a handful says nothing.
constexpr double kSeedEvidenceDatagrams = 16;

// Start-up jump (issue 11: a new path fills in far fewer round trips than doubling's ~10 on geo).
// The train: the first 64 datagrams of start-up's first window, each burst of them sent back to
// back (TCP sends its initial window so too; the rest of the window follows at start-up's pace). A
// bottleneck slower than the sender spreads a burst to its own rate: 64 datagrams of 1500 bytes
// take 4.9 ms at 155 Mbit/s, against 0.65 ms for the sender to hand them to the emulated link.
constexpr std::uint64_t kTrainDatagrams = 64;
// The event loop hands a burst to the socket in one turn: a datagram sent this long after the
// train's last begins the train's next burst.
constexpr ArqDuration kTrainGap = std::chrono::milliseconds(1);
static_assert(kTrainDatagrams * kDatagramBytes <= kInitialWindowBytes, "the train opens the first window");
// Fewer datagrams say too little.
constexpr std::uint64_t kMinTrainDatagrams = 16;
// The arrivals measured must cover at least half the train's bytes. They are the receiver's
// kernel's receive times, which the ACKs report (wire_frame.h, AckArrivals), not the ACKs' own:
// a receiver that stalled read what piled up in one turn and acknowledged it at once, which made a
// train timed by its ACKs look faster than the bottleneck (on the emulated geo link a stalled
// receiver turned 4.7 ms of arrivals into 0.15-0.7 ms of replies at load 9), and refusing such
// trains (an ACK covering more than a quarter of a burst, fewer than 8 ACKs) left a loaded host's
// start-up doubling from its first window for ~5 round trips (the CFD demo's 128x64 row, 3.9x).
constexpr std::uint64_t kTrainCoverDivisor = 2;
// The arrivals must be spread at least this much more than the sends were: else the train
// measured the sender (an application that handed its data over slowly), not the bottleneck.
constexpr double kTrainSpread = 2.0;
// ... and over at least this long: the sender itself hands a 64-datagram train to the emulated
// link in 0.65 ms (1.2 Gbit/s), so arrivals spread over less were bunched on the way (timed by
// the ACKs, before the arrival times: on geo under load 12-18 two of four trains read 8.9 and 12.1
// Gbit/s, the jump paced at half of it for a round trip and lost 1429 and 5669 datagrams at the
// queue). Rates above ~0.75 Gbit/s are not measured from a first window: start-up doubles there.
constexpr ArqDuration kMinTrainArrivalSpan = std::chrono::milliseconds(1);
// The jump paces at this share of the train's rate. A train measures the bottleneck's capacity,
// not what other flows leave of it (their packets barely interleave with a burst this short), so
// it stays below the whole: from there start-up (kJumpCeilingGain), with its delay test, finds the
// rest, and the jump is judged as a warm start's seed is (kSeedConfirmShare). Not half, as first
// built: a program that streams from its first send (the CFD demo's frames, 73 Mbit/s at 256x128)
// queues a round trip of data behind the first window, and half of geo (78 Mbit/s) never drained
// that queue before the jump was confirmed a round trip later: the frames' median was 2.4x one
// way + transmission in the simulation (2.8x in the demo), 1.3x at three quarters. Beside a flow
// that already takes 60 % of the link three quarters still overfill nothing (0.85 did: simulation),
// and beside CUBIC each keeps at least a quarter (simulation; libshim/README.md, "Start-up jump").
constexpr double kJumpShare = 0.75;
// Start-up after a confirmed jump paces at most this much above the larger of the train's rate and
// the estimate: the train measured the bottleneck, so doubling past it (as after a warm seed)
// only fills the queue: 2 x filled a one-BDP queue in one round trip, before the delay test could
// see it, and lost datagrams in the simulation. A quarter more finds out whether the train read
// low, and queues at most a quarter of a BDP per round trip, which the delay test stops.
constexpr double kJumpCeilingGain = 1.25;

// Draining and cruising before a busy round measured the path (its application only ever sent
// bursts smaller than the path, each acknowledged before the next: 100 x 1 KiB batches), the
// estimate is no lower than this share of the packet train's rate. Those bursts' delivery-rate
// samples measure the application (110 KB per round trip), not the path: at 135 ms and 10
// Mbit/s, start-up (pacing faster than half the train's rate, so no jump) left on its own
// bursts' queueing, cruised at 2.66 Mbit/s, and each 110 KB batch took a round trip longer (warm
// batches 1.75x the floor). The train measured the bottleneck's capacity; a little below it a
// burst leaves at the path's rate without a queue of its own. The first busy round while cruising,
// a back-off or a rejected seed ends the floor: the path was measured then.
constexpr double kTrainFloorShare = 0.9;

static_assert(kBandwidthWindowRounds == 10, "DatagramPacer::kRing holds kBandwidthWindowRounds");

double seconds_of(std::chrono::duration<double> d) { return d.count(); }

}  // namespace

const char* pacer_seed_name(DatagramPacer::Seed seed) {
  switch (seed) {
    case DatagramPacer::Seed::kNone: return "none";
    case DatagramPacer::Seed::kSeeded: return "seeded";
    case DatagramPacer::Seed::kConfirmed: return "confirmed";
    case DatagramPacer::Seed::kRejected: return "rejected";
  }
  return "?";
}

const char* train_refusal_name(DatagramPacer::TrainRefusal why) {
  switch (why) {
    case DatagramPacer::TrainRefusal::kSenderPaced: return "sender_paced";
    case DatagramPacer::TrainRefusal::kFewDatagrams: return "few_datagrams";
    case DatagramPacer::TrainRefusal::kLittleMeasured: return "little_measured";
    case DatagramPacer::TrainRefusal::kShortSpan: return "short_span";
    case DatagramPacer::TrainRefusal::kSlowerThanStartup: return "slower_than_startup";
    case DatagramPacer::TrainRefusal::kCount: break;
  }
  return "?";
}

const char* pacer_jump_name(const DatagramPacer& pacer) {
  switch (pacer.jump_state()) {
    case DatagramPacer::Jump::kOff: return "off";
    case DatagramPacer::Jump::kWaiting: return "waiting";
    case DatagramPacer::Jump::kTaken: return pacer_seed_name(pacer.seed_state());
  }
  return "?";
}

const char* pacer_phase_name(DatagramPacer::Phase phase) {
  switch (phase) {
    case DatagramPacer::Phase::kStartup: return "startup";
    case DatagramPacer::Phase::kDrain: return "drain";
    case DatagramPacer::Phase::kCruise: return "cruise";
  }
  return "?";
}

DatagramPacer::DatagramPacer(ArqDuration initial_rtt, bool start_jump, bool refill_catch_up)
    : initial_rtt_(std::max<ArqDuration>(initial_rtt, std::chrono::milliseconds(1))),
      pacing_gain_(kStartupGain),
      window_gain_(kStartupGain),
      jump_state_(start_jump ? Jump::kWaiting : Jump::kOff),
      refill_catch_up_(refill_catch_up) {}

double DatagramPacer::round_bandwidth_max() const { return *std::max_element(round_max_.begin(), round_max_.end()); }

double DatagramPacer::train_floor() const {
  if (!train_floor_open_ || phase_ == Phase::kStartup) return 0;
  return kTrainFloorShare * train_rate_;
}

double DatagramPacer::bandwidth() const {
  const double measured = std::max(round_bandwidth_max(), train_floor());
  if (seed_state_ == Seed::kSeeded) return std::max(measured, seed_rate_);
  // A cold start-up never goes below its first window per round trip: the first ACKs (one
  // datagram's sample) measured 0.17 Mbit/s on geo, and the window and pacing they set held the
  // second round to a quarter of the first window.
  const double first_window_rate = kInitialWindowBytes / seconds_of(min_rtt_.value_or(initial_rtt_));
  if (phase_ == Phase::kStartup && seed_state_ == Seed::kNone) return std::max(measured, first_window_rate);
  if (measured > 0) return measured;
  return first_window_rate;  // nothing measured yet
}

double DatagramPacer::pacing_rate() const {
  double rate = pacing_gain_ * bandwidth();
  if (phase_ == Phase::kStartup && jump_state_ == Jump::kTaken && seed_state_ == Seed::kConfirmed) {
    rate = std::min(rate, kJumpCeilingGain * std::max(train_rate_, bandwidth()));
  }
  return std::max(kMinPacingRate, rate);
}

std::size_t DatagramPacer::window_bytes() const {
  if (round_bandwidth_max() <= 0 && seed_state_ != Seed::kSeeded) return static_cast<std::size_t>(kInitialWindowBytes);
  const ArqDuration min_rtt = min_rtt_.value_or(initial_rtt_);
  if (phase_ == Phase::kStartup && seed_state_ != Seed::kSeeded) {
    return static_cast<std::size_t>(std::max(kMinWindowBytes, kStartupWindowGain * bandwidth() * seconds_of(min_rtt)));
  }
  const ArqDuration rtt = std::clamp(smoothed_rtt_.value_or(min_rtt), min_rtt, duration_cast<ArqDuration>(min_rtt * kWindowRttCap));
  const double bdp = bandwidth() * seconds_of(rtt);
  return static_cast<std::size_t>(std::max(kMinWindowBytes, window_gain_ * bdp));
}

void DatagramPacer::on_sent(ArqTime now, std::uint64_t id, std::size_t bytes) {
  const bool retransmission = highest_id_sent_ && id <= *highest_id_sent_;
  // The ARQ re-sends it. Its fast retransmit also fires on reordering, which is not congestion:
  // the old copy counts as lost only if the reordering window says so too (else it just leaves
  // the count in flight).
  if (auto it = outstanding_.find(id); it != outstanding_.end()) {
    if (newest_delivered_sent_at_ - it->second.sent_at >= reorder_window()) {
      mark_lost(it);
    } else {
      in_flight_ -= it->second.bytes;
      leave_train(it->second);
      send_order_.erase(it->second.send_index);
      outstanding_.erase(it);
    }
  }
  if (!highest_id_sent_ || id > *highest_id_sent_) highest_id_sent_ = id;
  if (in_flight_ == 0) {
    // Nothing in flight: the next delivery-rate interval starts now, not at the last delivery.
    first_sent_time_ = now;
    delivered_time_ = now;
  }
  round_sent_bytes_ += bytes;
  // A new path's first datagrams leave as a packet train (up to kTrainDatagrams), in bursts: what
  // the sender has leaves back to back, and a send after a pause (more than kTrainGap) begins the
  // train's next burst. The bottleneck spreads each burst to its own rate, so each is measured on
  // its own (measure_train): a program's small first message before its frames (the CFD producer)
  // adds a burst that measures nothing, and frames smaller than the train (32 KB at 128x64, 4 ms
  // apart) make one train of several bursts instead of none.
  if (jump_state_ == Jump::kWaiting && phase_ == Phase::kStartup && seed_state_ == Seed::kNone && !train_open_ &&
      train_outstanding_ == 0 && !train_acked_) {
    ++train_generation_;
    train_open_ = true;
    train_sent_ = 0;
    train_bursts_.clear();
  }
  const std::uint64_t train = train_open_ && !retransmission ? train_generation_ : 0;
  if (train) {
    if (train_bursts_.empty() || now - train_bursts_.back().last_sent > kTrainGap) {
      TrainBurst burst;
      burst.first_sent = now;
      train_bursts_.push_back(burst);
    }
    TrainBurst& burst = train_bursts_.back();
    ++burst.sent;
    burst.sent_bytes += bytes;
    burst.last_sent = now;
    ++train_sent_;
    ++train_outstanding_;
    if (train_sent_ >= kTrainDatagrams) train_open_ = false;
  }
  const std::uint64_t index = next_send_index_++;
  outstanding_[id] = Sent{index, now, bytes, delivered_, delivered_time_, first_sent_time_,
                          application_limited_until_ != 0, retransmission, train,
                          train ? train_bursts_.size() - 1 : 0};
  send_order_[index] = id;
  in_flight_ += bytes;
  const ArqTime start = std::max(next_send_, now - catch_up());
  const auto gap = duration_cast<ArqTime::duration>(std::chrono::duration<double>(bytes / pacing_rate()));
  if (!ran_dry_) {
    if (start > next_send_) behind_ += duration_cast<ArqDuration>(start - next_send_);
    // The part of this datagram's sending time that had passed when it left: made up in a burst.
    if (start < now && !train) caught_up_ += duration_cast<ArqDuration>(std::min(gap, now - start));
  }
  ran_dry_ = false;
  next_send_ = train ? start : start + gap;  // a train's datagrams leave back to back
}

void DatagramPacer::leave_train(const Sent& sent) {
  if (sent.train == train_generation_ && sent.train != 0 && train_outstanding_ > 0) --train_outstanding_;
}

ArqDuration DatagramPacer::catch_up() const {
  if (!refill_catch_up_ || ran_dry_ || phase_ != Phase::kCruise || !min_rtt_) return kCatchUp;
  // The pipe as ACKs see it (the smoothed RTT: a loaded receiver's late ACKs keep more in flight),
  // up to kCatchUpRttCap minimum RTTs.
  const ArqDuration rtt = std::clamp(smoothed_rtt_.value_or(*min_rtt_), *min_rtt_,
                                     duration_cast<ArqDuration>(*min_rtt_ * kCatchUpRttCap));
  const double room = bandwidth() * seconds_of(rtt) - static_cast<double>(in_flight_);
  const auto refill = duration_cast<ArqDuration>(std::chrono::duration<double>(std::max(0.0, room) / pacing_rate()));
  const ArqDuration most = std::min(kMaxCatchUp, duration_cast<ArqDuration>(*min_rtt_ * kCruiseCatchUpRttShare));
  return std::max(kCatchUp, std::min(refill, most));
}

void DatagramPacer::on_unacknowledged_sent(ArqTime now, std::size_t bytes) {
  const ArqTime start = std::max(next_send_, now - catch_up());
  next_send_ = start + duration_cast<ArqTime::duration>(std::chrono::duration<double>(bytes / pacing_rate()));
}

void DatagramPacer::mark_lost(std::map<std::uint64_t, Sent>::iterator it) {
  in_flight_ -= it->second.bytes;
  leave_train(it->second);
  round_lost_bytes_ += it->second.bytes;
  ++round_lost_datagrams_;
  lost_bytes_ += it->second.bytes;
  ++lost_datagrams_;
  send_order_.erase(it->second.send_index);
  outstanding_.erase(it);
}

void DatagramPacer::deliver(ArqTime now, std::map<std::uint64_t, Sent>::iterator it, std::optional<Sent>& newest) {
  const Sent& sent = it->second;
  delivered_ += sent.bytes;
  round_delivered_bytes_ += sent.bytes;
  in_flight_ -= sent.bytes;
  if (sent.train != 0 && sent.train == train_generation_) {
    leave_train(sent);
    ++ack_bursts_[sent.burst].datagrams;
    ack_bursts_[sent.burst].bytes += sent.bytes;
  } else {
    ++acked_outside_train_;
  }
  // A re-sent datagram's ACK may be for its earlier copy (Karn): it dates nothing.
  if (!sent.retransmission && (!newest || sent.send_index > newest->send_index)) newest = sent;
  // ... but an ACK sooner than a round trip after the re-send was for the earlier copy: that
  // re-send was spurious (a late wake-up's timeout, deep reordering), not the path's loss.
  if (sent.retransmission && now - sent.sent_at >= kResendAckRttShare * min_rtt_.value_or(initial_rtt_)) {
    round_resent_bytes_ += sent.bytes;
  }
  delivered_time_ = now;
  send_order_.erase(sent.send_index);
  outstanding_.erase(it);
}

void DatagramPacer::on_ack(ArqTime now, std::uint64_t cumulative, std::span<const ArqSackRange> sack,
                           std::optional<Arrivals> arrivals) {
  std::optional<Sent> newest;
  const std::uint64_t delivered_before = delivered_;
  ack_bursts_.assign(train_bursts_.size(), {});
  acked_outside_train_ = 0;
  while (!outstanding_.empty() && outstanding_.begin()->first < cumulative) deliver(now, outstanding_.begin(), newest);
  for (const ArqSackRange& range : sack) {
    for (auto it = outstanding_.lower_bound(range.begin); it != outstanding_.end() && it->first < range.end;) {
      auto next = std::next(it);
      deliver(now, it, newest);
      it = next;
    }
  }
  if (delivered_ > delivered_before) train_open_ = false;  // later datagrams are paced by what the ACKs show
  time_train_arrivals(now, arrivals);
  if (!newest) {
    // Only re-sent datagrams were acknowledged (a loss episode): no sample, but rounds go on.
    if (delivered_ > delivered_before && now - round_started_ >= min_rtt_.value_or(initial_rtt_)) end_round(now);
    return;
  }
  first_sent_time_ = newest->sent_at;
  if (application_limited_until_ != 0 && delivered_ > application_limited_until_) application_limited_until_ = 0;

  // Lost: sent kReorderThreshold sends and a reordering window before the newest delivered one
  // (RACK's rule: reordering within a quarter of the minimum RTT is not loss).
  newest_delivered_sent_at_ = std::max(newest_delivered_sent_at_, newest->sent_at);
  const ArqDuration window = reorder_window();
  while (!send_order_.empty() && send_order_.begin()->first + kReorderThreshold <= newest->send_index) {
    auto it = outstanding_.find(send_order_.begin()->second);
    if (newest->sent_at - it->second.sent_at < window) break;
    mark_lost(it);
  }

  {
    const ArqDuration rtt = duration_cast<ArqDuration>(now - newest->sent_at);
    // A packet train queues behind itself at the bottleneck (4.9 ms on geo, 38 ms of a 50 ms
    // round trip at 20 Mbit/s): its RTTs say nothing of a queue that stands.
    const bool queue_test = newest->train == 0;
    if (queue_test) round_min_rtt_ = std::min(round_min_rtt_.value_or(rtt), rtt);
    // RFC 6298's smoothing (1/8, 1/4): the path's jitter, for the window and the queue test.
    if (!smoothed_rtt_) {
      smoothed_rtt_ = rtt;
      rtt_deviation_ = rtt / 2;
    } else {
      const ArqDuration error = rtt > *smoothed_rtt_ ? rtt - *smoothed_rtt_ : *smoothed_rtt_ - rtt;
      rtt_deviation_ = (3 * rtt_deviation_ + error) / 4;
      smoothed_rtt_ = (7 * *smoothed_rtt_ + rtt) / 8;
    }
    if (!min_rtt_ || rtt <= *min_rtt_) {
      min_rtt_ = rtt;
      min_rtt_stamp_ = now;
    }
    // Start-up's delay test, within the round: the smallest RTT of each stretch of
    // kStartupDelayStretch. A round's smallest RTT is its first ACKs', sent before this round's
    // doubling queued anything: judged by it, the test came a round late, when start-up had
    // doubled once more into the queue.
    if (!stretch_min_rtt_ && queue_test) stretch_started_ = now;
    if (queue_test) {
      stretch_min_rtt_ = std::min(stretch_min_rtt_.value_or(rtt), rtt);
      ++stretch_samples_;
    }
    if (stretch_min_rtt_ && now - stretch_started_ >= std::max(kStartupDelayMin, *min_rtt_ / kStartupDelayStretch) &&
        stretch_samples_ >= kStartupDelaySamples) {
      const bool queue = queue_seen(*stretch_min_rtt_);
      stretch_min_rtt_.reset();
      stretch_samples_ = 0;
      if (queue && phase_ == Phase::kStartup && seed_state_ != Seed::kSeeded) leave_startup_on_queue();
    }
  }
  // The delivery rate over the datagram's flight (the longer of its send and ACK intervals, so
  // that neither a burst of sends nor a burst of ACKs inflates it).
  const auto interval = std::max(newest->sent_at - newest->first_sent_at_send, now - newest->delivered_time_at_send);
  if (interval > ArqTime::duration::zero() && (!min_rtt_ || interval >= *min_rtt_)) {
    double rate = static_cast<double>(delivered_ - newest->delivered_at_send) /
                  std::chrono::duration<double>(interval).count();
    // Until the drain is over, ACKs still come for what start-up sent into its queue.
    if (phase_ == Phase::kDrain && drain_rate_cap_ > 0) rate = std::min(rate, drain_rate_cap_);
    double& slot = round_max_[filter_round_ % kRing];
    if (!newest->application_limited || rate > round_bandwidth_max()) {
      slot = std::max(slot, rate);
      if (phase_ == Phase::kStartup && !queue_seen(duration_cast<ArqDuration>(now - newest->sent_at))) {
        startup_calm_rate_ = std::max(startup_calm_rate_, rate);
      }
    }
  }
  if (seed_state_ == Seed::kSeeded && !seed_judged_from_ && !newest->application_limited &&
      newest->send_index >= seed_from_send_index_) {
    // The seed is judged over the round trip of ACKs that starts with the first datagram sent while
    // the sender was busy: ACKs of pings before a burst, or of a burst's first part, measure less.
    seed_judged_from_ = now;
    seed_delivered_from_ = delivered_before;
    seed_lost_from_ = lost_bytes_;
    seed_application_limited_ = false;
  }
  judge_seed(now);
  if (jump_state_ == Jump::kWaiting && train_acked_ && train_outstanding_ == 0 && !train_open_) measure_train();
  // A round: until a datagram sent after the last one ended is acknowledged, or, while losses
  // leave only re-sent datagrams to date it, one minimum RTT.
  if (newest->send_index >= next_round_send_index_ || now - round_started_ >= 2 * min_rtt_.value_or(initial_rtt_)) {
    end_round(now);
  }
}

// Each burst's arrivals, as the ACKs report them: the receiver's times, not the ACKs'. Timed by
// its ACKs a train's last units waited for the ACK delay (kDatagramAckDelay, 1-2 ms at the event
// loop's resolution) and a loaded receiver's ACKs came late and lumped; by the ACKs' times the
// train on geo read 108-150 Mbit/s of 155 in four runs, and 68-271 under load 2-4.
void DatagramPacer::time_train_arrivals(ArqTime now, const std::optional<Arrivals>& arrivals) {
  const std::chrono::nanoseconds newest =
      arrivals ? arrivals->newest : duration_cast<std::chrono::nanoseconds>(now.time_since_epoch());
  std::size_t bursts_acked = 0;
  for (const AckedInBurst& acked : ack_bursts_) bursts_acked += acked.datagrams > 0;
  // The ACK's arrival times are its burst's alone if it delivered nothing else.
  const bool alone = bursts_acked == 1 && acked_outside_train_ == 0;
  for (std::size_t b = 0; b < ack_bursts_.size(); ++b) {
    const AckedInBurst& acked = ack_bursts_[b];
    if (acked.datagrams == 0) continue;
    train_acked_ = true;
    TrainBurst& burst = train_bursts_[b];
    if (!burst.arrivals_from) {
      // The burst's first ACK starts its clock: at the first arrival it reports, if every one it
      // counts is this burst's (what arrived after it is measured); else at its newest.
      if (alone && arrivals && arrivals->count >= 2 && arrivals->count == acked.datagrams) {
        burst.arrivals_from = arrivals->first;
        burst.measured_bytes = acked.bytes * (acked.datagrams - 1) / acked.datagrams;
      } else {
        burst.arrivals_from = newest;
      }
      burst.arrivals_to = newest;
      continue;
    }
    // What a later ACK delivered arrived after the previous one's newest and by its own newest:
    // unless it also delivered others (its newest may be theirs), or reports no later arrival
    // (a long ACK's further datagrams, datagram_channel.h).
    if (!alone || newest <= burst.arrivals_to) continue;
    burst.measured_bytes += acked.bytes;
    burst.arrivals_to = newest;
  }
}

void DatagramPacer::measure_train() {
  ++trains_;
  // Each burst on its own: its arrivals must be spread more than its sends (else it measured the
  // sender). The train is the sum of the bursts that pass.
  std::uint64_t sent = 0, sent_bytes = 0, bytes_measured = 0;
  std::chrono::nanoseconds arrival_span{0};
  for (const TrainBurst& burst : train_bursts_) {
    if (!burst.arrivals_from || burst.measured_bytes == 0) continue;
    const std::chrono::nanoseconds burst_arrival_span = burst.arrivals_to - *burst.arrivals_from;
    const ArqDuration burst_send_span = duration_cast<ArqDuration>(burst.last_sent - burst.first_sent);
    if (seconds_of(burst_arrival_span) < kTrainSpread * seconds_of(burst_send_span)) {
      refuse_train(TrainRefusal::kSenderPaced);
      continue;
    }
    sent += burst.sent;
    sent_bytes += burst.sent_bytes;
    bytes_measured += burst.measured_bytes;
    arrival_span += burst_arrival_span;
  }
  std::optional<TrainRefusal> refusal;
  if (sent < kMinTrainDatagrams) {
    refusal = TrainRefusal::kFewDatagrams;
  } else if (bytes_measured * kTrainCoverDivisor < sent_bytes) {
    refusal = TrainRefusal::kLittleMeasured;
  } else if (arrival_span < kMinTrainArrivalSpan) {
    refusal = TrainRefusal::kShortSpan;
  }
  train_acked_ = false;
  train_bursts_.clear();
  if (phase_ != Phase::kStartup || seed_state_ != Seed::kNone) return;
  // Not a measurement of the bottleneck: start-up doubles on, and the next burst is another train.
  if (refusal) return refuse_train(*refusal);
  train_rate_ = static_cast<double>(bytes_measured) / seconds_of(arrival_span);
  const double jump_rate = kJumpShare * train_rate_;
  // Only a jump: a train slower than start-up already paces says nothing new.
  if (jump_rate <= pacing_rate()) return refuse_train(TrainRefusal::kSlowerThanStartup);
  jump_state_ = Jump::kTaken;
  start_seeded(jump_rate);
}

void DatagramPacer::refuse_train(TrainRefusal why) { ++train_refusals_[static_cast<std::size_t>(why)]; }

bool DatagramPacer::queue_seen(ArqDuration smallest_rtt) const {
  return min_rtt_ && smallest_rtt > *min_rtt_ + std::clamp(*min_rtt_ / 8, kStartupDelayMin, kStartupDelayMax);
}

ArqDuration DatagramPacer::reorder_window() const {
  // RACK's quarter of the minimum RTT, widened to the path's jitter (kReorderDeviations mean
  // deviations: packets that left a few hundred microseconds apart swap places under jitter).
  return std::max({kMinReorderWindow, min_rtt_ ? *min_rtt_ / 4 : ArqDuration::zero(), kReorderDeviations * rtt_deviation_});
}

std::int64_t DatagramPacer::loss_ppm() const {
  if (static_cast<double>(calm_sent_bytes_) < PathEstimator::kMinLossSegments * kDatagramBytes) return -1;
  return static_cast<std::int64_t>(static_cast<double>(calm_resent_bytes_) * 1e6 / static_cast<double>(calm_sent_bytes_));
}

void DatagramPacer::on_timeout() {
  while (!outstanding_.empty()) mark_lost(outstanding_.begin());
}

void DatagramPacer::forget_in_flight() {
  outstanding_.clear();
  send_order_.clear();
  in_flight_ = 0;
  train_outstanding_ = 0;  // a train sealed under the old keys measures nothing
  train_open_ = false;
  train_acked_ = false;
  train_bursts_.clear();
}

void DatagramPacer::on_application_limited() {
  application_limited_until_ = std::max<std::uint64_t>(delivered_ + in_flight_, 1);
  ran_dry_ = true;
  round_application_limited_ = true;
  seed_application_limited_ = true;
}

bool DatagramPacer::seed_worth_taking(double rate, ArqDuration min_rtt) {
  // A seed below what a cold start-up sends in its first round trip would only slow it down.
  return min_rtt > ArqDuration::zero() && kWarmStartShare * rate * seconds_of(min_rtt) >= kInitialWindowBytes;
}

bool DatagramPacer::seed(double rate, ArqDuration min_rtt) {
  if (seed_state_ != Seed::kNone || delivered_ > 0 || lost_bytes_ > 0 || !seed_worth_taking(rate, min_rtt)) {
    return false;
  }
  initial_rtt_ = min_rtt;
  start_seeded(kWarmStartShare * rate);
  return true;
}

void DatagramPacer::start_seeded(double rate) {
  seed_state_ = Seed::kSeeded;
  seed_rate_ = rate;
  seed_from_send_index_ = next_send_index_;  // what left before was paced at another rate
  pacing_gain_ = 1.0;
  window_gain_ = kSeedWindowGain;
}

void DatagramPacer::judge_seed(ArqTime now) {
  if (seed_state_ != Seed::kSeeded || !seed_judged_from_) return;
  const double delivered = static_cast<double>(delivered_ - seed_delivered_from_);
  const double lost = static_cast<double>(lost_bytes_ - seed_lost_from_);
  const ArqDuration span = duration_cast<ArqDuration>(now - *seed_judged_from_);
  const double rate = span > ArqDuration::zero() ? delivered / seconds_of(span) : 0;
  // Heavy loss: the seed overfills the bottleneck's queue; the ACKs came at the bottleneck's rate.
  if (lost + delivered >= kSeedEvidenceDatagrams * kDatagramBytes && lost > kHeavyLossFraction * (lost + delivered)) {
    end_seed(Seed::kRejected, std::min(rate, seed_rate_));
    return;
  }
  if (span < min_rtt_.value_or(initial_rtt_)) return;
  if (rate >= kSeedConfirmShare * seed_rate_) {
    end_seed(Seed::kConfirmed, rate);
  } else if (!seed_application_limited_) {
    end_seed(Seed::kRejected, rate);
  } else {
    // The application sent less than the seed: that says nothing of the path. Judge the next
    // busy round trip.
    seed_judged_from_.reset();
  }
}

void DatagramPacer::end_seed(Seed verdict, double delivered_rate) {
  seed_state_ = verdict;
  if (verdict == Seed::kConfirmed) {
    // The path carries the seed: start-up goes on from what it delivered (a seed too low still
    // doubles per round trip from there, as a cold start would from its first window).
    double& slot = round_max_[filter_round_ % kRing];
    slot = std::max(slot, delivered_rate);
    full_bandwidth_ = bandwidth();
    flat_rounds_ = 0;
    pacing_gain_ = kSeedStartupGain;
    window_gain_ = kStartupGain;
    return;
  }
  // The path delivered far less than the seed: its rate is what it delivered, and the queue the
  // seed built drains before cruising at it.
  train_floor_open_ = false;
  round_max_.fill(0);
  round_max_[filter_round_ % kRing] = std::max(delivered_rate, kMinPacingRate);
  full_bandwidth_ = bandwidth();
  enter_drain();
}

void DatagramPacer::back_off(double new_rate) {
  train_floor_open_ = false;
  round_max_.fill(0);
  round_max_[(filter_round_ + 1) % kRing] = std::max(new_rate, kMinPacingRate);
  rounds_since_backoff_ = 0;
  phase_ = Phase::kDrain;
  drain_rounds_ = 0;
  pacing_gain_ = kDrainAfterProbeGain;
  window_gain_ = kCruiseWindowGain;
}

void DatagramPacer::leave_startup_on_queue() {
  // The rate delivered while start-up's queue stood is a FIFO's share of an overfilled bottleneck:
  // beside another flow, more than that flow leaves (cruising at it kept a queue growing until it
  // overflowed: 0.72 x a link of which 0.6 was free, in the simulation). The largest rate
  // delivered without a queue is what the path carried for us alone; probes find the rest.
  // Only after a jump: doubling's last calm samples lag a round behind (half the rate), and a cold
  // start-up's estimate is left as it was.
  if (jump_state_ == Jump::kTaken && startup_calm_rate_ > 0 && startup_calm_rate_ < round_bandwidth_max()) {
    round_max_.fill(0);
    round_max_[filter_round_ % kRing] = startup_calm_rate_;
    drain_rate_cap_ = startup_calm_rate_;
  }
  enter_drain();
}

void DatagramPacer::enter_drain() {
  phase_ = Phase::kDrain;
  drain_rounds_ = 0;
  rounds_since_backoff_ = 0;  // the queue and losses start-up left behind are its own, not the path's
  pacing_gain_ = 1 / kStartupGain;
  window_gain_ = kStartupGain;
}

void DatagramPacer::end_round(ArqTime now) {
  const double this_round = round_max_[filter_round_ % kRing];
  const double lost = static_cast<double>(round_lost_bytes_);
  const double total = lost + static_cast<double>(round_delivered_bytes_);
  const bool heavy_loss = total > 0 && lost / total > kHeavyLossFraction;
  heavy_loss_rounds_ = heavy_loss ? heavy_loss_rounds_ + 1 : 0;
  const bool startup_overfilled = heavy_loss && round_lost_datagrams_ >= kHeavyLossMinDatagrams;
  const bool delayed =
      min_rtt_ && round_min_rtt_ &&
      *round_min_rtt_ > *min_rtt_ + standing_queue_margin(*min_rtt_);
  delayed_rounds_ = delayed ? delayed_rounds_ + 1 : 0;
  // A probe's gain shows as room only without a queue in its round and the next: in a FIFO shared
  // with another flow, sending 1.25 x more always delivers more (a larger share of the queue),
  // which takes from that flow. Counted as room, the next probe followed at once, and a growing
  // CUBIC flow never got what it reached for.
  const bool queue_during_probe = delayed || delayed_before_;
  delayed_before_ = delayed;
  // Needed re-sends in rounds without a queue (the TCP sessions' measure: retransmissions while
  // the RTT stays below PathEstimator::kQueueRttRatio x the minimum): the path's random loss,
  // which the carrier choice weighs; a full queue's drops are left out. Not the loss counted
  // above: the ARQ's fast retransmit re-sends most random losses inside the reordering window,
  // which counts them as reordering (at 5 % simulated loss it counted 1 in 10 s).
  if (min_rtt_ && round_min_rtt_ && *round_min_rtt_ < *min_rtt_ * PathEstimator::kQueueRttRatio) {
    calm_sent_bytes_ += round_sent_bytes_;
    calm_resent_bytes_ += round_resent_bytes_;
  }
  round_sent_bytes_ = round_resent_bytes_ = 0;
  const bool startup_delay = round_min_rtt_ && queue_seen(*round_min_rtt_);
  // Only while cruising: start-up's queue is drained by the drain phase anyway.
  const bool queueing = phase_ == Phase::kCruise && delayed_rounds_ >= kQueueRounds && rounds_since_backoff_ >= kBackoffHoldRounds;
  // Forget a minimum RTT not seen again for kMinRttWindow: the path itself got longer.
  if (min_rtt_ && round_min_rtt_ && now - min_rtt_stamp_ > kMinRttWindow) {
    min_rtt_ = round_min_rtt_;
    min_rtt_stamp_ = now;
  }
  ++round_count_;
  ++rounds_since_backoff_;
  next_round_send_index_ = next_send_index_;
  round_started_ = now;
  // The estimate ages only over rounds in which the sender was busy: rounds of an application
  // that sends a few small messages between bursts would otherwise push the bursts' rate out of
  // the filter within 10 round trips, and the next burst would start from nothing.
  const bool busy_round = !round_application_limited_;
  if (busy_round && phase_ == Phase::kCruise) train_floor_open_ = false;  // the path measured while busy
  if (busy_round && phase_ != Phase::kStartup && seed_state_ != Seed::kSeeded) path_rate_ = std::max(path_rate_, bandwidth());
  if (busy_round) {
    ++filter_round_;
    round_max_[filter_round_ % kRing] = 0;
  }
  round_application_limited_ = application_limited_until_ != 0;
  round_delivered_bytes_ = round_lost_bytes_ = round_lost_datagrams_ = 0;
  round_min_rtt_.reset();
  // A seed is judged by judge_seed alone: start-up's exits would drain to the unjudged seed.
  if (seed_state_ == Seed::kSeeded) return;

  // Only a busy round can have overfilled the path (the flat-rounds exit below has the same rule).
  // In a round in which the application ran dry the queue or the losses are others' or chance:
  // the answering end of a request-response program (a round of one-unit answers, one ACK lost
  // and the ARQ's timeout marking all 100 lost, or a round delayed by a loaded host) left
  // start-up, and cruised at what its answers had delivered: 0.1-0.24 Mbit/s on geo at 5 % loss,
  // each later batch of 100 answers 0.3-0.7 s late.
  if (phase_ == Phase::kStartup && busy_round && (startup_overfilled || startup_delay)) {
    // Start-up overfilled the path: drain the queue it built and cruise at what it delivered.
    leave_startup_on_queue();
    return;
  }
  if (phase_ == Phase::kCruise && heavy_loss_rounds_ >= kHeavyLossRounds && rounds_since_backoff_ > kBackoffHoldRounds) {
    ++backoffs_for_loss_;
    heavy_loss_rounds_ = 0;
    back_off(kLossBackoffFactor * bandwidth());
    return;
  }
  if (queueing) {
    delayed_rounds_ = 0;
    // The rate the bottleneck delivered while the queue stood, not the older, larger estimate
    // (another flow took part of it); a round cut short by losses says less than half of it.
    ++backoffs_for_delay_;
    back_off(kDelayBackoffFactor * std::clamp(this_round, bandwidth() / 2, bandwidth()));
    return;
  }
  switch (phase_) {
    case Phase::kStartup:
      // A round in which the application ran out of data says nothing of the path (BBR's rule):
      // counting them ended start-up at the rate of 1 KiB bursts (1 Mbit/s on geo), and every
      // later burst was paced at it.
      if (bandwidth() >= full_bandwidth_ * kStartupGrowth) {
        full_bandwidth_ = bandwidth();
        flat_rounds_ = 0;
      } else if (busy_round && ++flat_rounds_ >= kStartupFlatRounds) {
        enter_drain();
      }
      break;
    case Phase::kDrain:
      if (static_cast<double>(in_flight_) <= bandwidth() * seconds_of(min_rtt_.value_or(initial_rtt_)) ||
          ++drain_rounds_ >= kMaxDrainRounds) {
        phase_ = Phase::kCruise;
        drain_rate_cap_ = 0;
        cycle_step_ = 0;
        pacing_gain_ = 1.0;
        window_gain_ = kCruiseWindowGain;
      }
      break;
    case Phase::kCruise:
      if (pacing_gain_ == kProbeGain) {
        // The probe's queue goes in the next round. A probe the application left short of data
        // built none: draining after it only slowed the next small batch (at 0.75 x, 34 ms late
        // at 10 Mbit/s, the paced-datagrams test of lp-perf's 1 KiB batches).
        pacing_gain_ = busy_round ? kDrainAfterProbeGain : 1.0;
        if (!busy_round) cycle_step_ = 0;
      } else if (pacing_gain_ == kDrainAfterProbeGain) {
        // The probe's own datagrams were acknowledged in this round: did they find room?
        const bool room = bandwidth() >= bandwidth_before_probe_ * kProbeGrowth && !queue_during_probe;
        pacing_gain_ = room ? kProbeGain : 1.0;
        if (room) bandwidth_before_probe_ = bandwidth();
        cycle_step_ = 0;
      } else if (++cycle_step_ >= kCycleRounds - 2 && !delayed) {
        // (Not into a standing queue: the delay test backs off from it instead.)
        pacing_gain_ = kProbeGain;
        bandwidth_before_probe_ = bandwidth();
      }
      break;
  }
}

}  // namespace lp
