// The datagram pacer's constants (datagram_pacer.h), each with the reason for its value, shared by
// the units the pacer is made of. Private to congestion/.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "congestion/datagram_pacer.h"

namespace lp::pacer_tuning {

// A full datagram on the wire (IPv4 MTU 1500 - IP and UDP headers): the unit the windows below
// are counted in.
inline constexpr double kDatagramBytes = 1472;
// The rate estimate is the largest sample of this many rounds: long enough to ride out a round or
// two of ACK compression or a slow receiver, short enough to follow a narrowing path (BBR uses 10).
inline constexpr std::size_t kBandwidthWindowRounds = MaxRateFilter::kRounds;
// 2/ln 2: the smallest gain that doubles what is delivered every round trip (BBR's start-up).
inline constexpr double kStartupGain = 2.885;
// Start-up ends when the rate grew less than this over kStartupFlatRounds rounds: the pipe is full.
inline constexpr double kStartupGrowth = 1.25;
inline constexpr int kStartupFlatRounds = 3;
// ... or as soon as a round's smallest RTT exceeds the minimum by an eighth of it, within [4, 16]
// ms (HyStart's delay increase, RFC 9406): the queue is filling, and one more doubling would
// overflow it; a burst of losses that large leaves more holes than an ACK's SACK ranges can name,
// and the recovery from it costs more round trips than start-up saves.
inline constexpr ArqDuration kStartupDelayMin = std::chrono::milliseconds(4);
inline constexpr ArqDuration kStartupDelayMax = std::chrono::milliseconds(16);
// ... judged also within the round, on the smallest RTT of each stretch of an eighth of the
// minimum RTT and at least kStartupDelaySamples samples (RFC 9406's N_RTT_SAMPLE):
// every sample of a stretch must show the queue, so a loaded host's scheduling stall of a few
// ms, or one datagram's jitter, does not end start-up.
inline constexpr int kStartupDelayStretch = 8;
inline constexpr std::uint32_t kStartupDelaySamples = 8;
// Start-up's window: twice the estimate x the minimum RTT. Still doubles what is delivered per
// round trip (the estimate is what the last round delivered), but what start-up has in flight is
// at most the pipe plus one bandwidth-delay product of queue while the estimate is at or below the
// bottleneck; the smoothed RTT (which the queue inflates) and 2/ln 2 allow up to 5.8 BDPs, which
// overflows a one-BDP queue before any exit acts.
inline constexpr double kStartupWindowGain = 2.0;
// Start-up's first window: 96 datagrams (~141 KB), more than TCP's 10 segments because a long path
// pays every doubling with a whole round trip, and a datagram path has no one else to share its
// first round with that TCP's small window would protect. It is what the tcp carrier sends in its
// first round trip too (10 initial windows, over its 2 streams and 8 spill streams), and it holds
// 100 x 1 KiB messages (one datagram each, ~1.1 KB on the wire), so a new long path's small first
// batch is no later than tcp's (docs/engine/datagram-carrier.md, "A new path decided at CHALLENGE").
inline constexpr double kInitialWindowBytes = 96 * kDatagramBytes;
// Never less than this in flight: enough ACKs per round to keep measuring.
inline constexpr double kMinWindowBytes = 4 * kDatagramBytes;
// Cruising window: two bandwidth-delay products, so delayed or thinned ACKs do not starve pacing.
inline constexpr double kCruiseWindowGain = 2.0;
// The probe of a cruise cycle: one round at 1.25 x finds more rate if the path has it, the next at
// 0.75 x drains the queue the probe built, then kCycleRounds - 2 rounds at the estimate.
inline constexpr double kProbeGain = 1.25;
inline constexpr double kDrainAfterProbeGain = 0.75;
inline constexpr std::uint64_t kCycleRounds = 8;
// A probe that raised the estimate by this much found room (a path that got faster, or an
// estimate a back-off left too low): the next probe follows at once instead of a cycle later,
// so the rate grows by kProbeGain every two rounds until the path is full.
inline constexpr double kProbeGrowth = 1.1;
// Drain ends when what is in flight fits one bandwidth-delay product, or after this many rounds:
// after heavy loss the ACKs of datagrams beyond the SACK ranges an ACK carries come late, and what
// the pacer counts in flight stays high for a while although the queue is gone.
inline constexpr int kMaxDrainRounds = 4;
// A standing queue: the smallest RTT of a round above the minimum by start-up's margin (an eighth
// of the minimum within [kStartupDelayMin, kStartupDelayMax]) and by at least kQueueDelayFloor (a
// loaded host delays ACKs by milliseconds, which is not a queue on the path).
// Cruising at the estimate builds no queue, a probe round's is gone within the round after it,
// and the smallest RTT of a round is taken before a probe's queue builds; what stands is another
// flow's, or a path that got slower. Random loss raises no RTT: it never backs off for it.
// Not a quarter of the minimum and 4 RTT deviations: a TCP CUBIC flow growing beside the cruise
// keeps its queue in a sawtooth whose deviation hides it, and gets far less than its share.
inline constexpr ArqDuration kQueueDelayFloor = std::chrono::milliseconds(10);
// The window covers the smoothed RTT (so per-packet jitter does not shrink it below what the rate
// needs), but never more than this many minimum RTTs (a queue must not feed the window).
inline constexpr double kWindowRttCap = 2.0;
// ... for this many rounds running: jitter and a loaded host's scheduling delays raise a round's
// smallest RTT now and then; a standing queue raises it round after round.
inline constexpr int kQueueRounds = 3;
// How far above the minimum RTT a round's smallest RTT must stand to count as a queue (above).
inline ArqDuration standing_queue_margin(ArqDuration min_rtt) {
  return std::max(std::clamp(min_rtt / 8, kStartupDelayMin, kStartupDelayMax), kQueueDelayFloor);
}
// A back-off paces at this fraction of the rate delivered in the round that showed the queue (or
// the loss): below the bottleneck, so the queue drains, and close to it, so the path stays full.
inline constexpr double kDelayBackoffFactor = 0.85;
inline constexpr double kLossBackoffFactor = 0.75;
// After a back-off, wait this many rounds (the queue drains) before judging the delay again.
inline constexpr int kBackoffHoldRounds = 3;
// Heavy loss: more than a fifth of a round's datagrams lost, three rounds running (a probe that
// overfills the queue loses a burst in one or two rounds and drains itself). Random loss of a
// few percent (a satellite or radio link) stays far below, and costs no rate.
inline constexpr double kHeavyLossFraction = 0.2;
inline constexpr int kHeavyLossRounds = 3;
// Start-up ends on one round's heavy loss, so that round must have lost at least this many
// datagrams (BBRv2's full_loss_cnt): a round of an application sending a few small messages (1-3
// datagrams a round) loses a third of it to one random loss; taken for an overfilled path, that
// ends start-up and the flow cruises at its own tiny rate.
inline constexpr std::uint64_t kHeavyLossMinDatagrams = 8;
// A datagram is lost once one sent this many sends after it has been acknowledged (the ARQ's fast
// retransmit threshold: reordering by fewer datagrams is not loss).
inline constexpr std::uint64_t kReorderThreshold = 3;
// ... and was sent at least a quarter of the minimum RTT (RACK's reordering window, RFC 8985),
// and at least this long, earlier than it: jitter of a millisecond reorders datagrams paced
// tens of microseconds apart.
inline constexpr ArqDuration kMinReorderWindow = std::chrono::milliseconds(2);
inline constexpr int kReorderDeviations = 4;
// The minimum RTT is forgotten after this long without a sample as small (a path that really got
// longer); idle time does not count, since no round ends without ACKs.
inline constexpr ArqDuration kMinRttWindow = std::chrono::seconds(10);
// Pacing catches up at most this much after the driver woke late (a loaded host): a late wake-up
// sends a little burst, never a window's worth; much less gives up a real share of the pacing on
// a loaded host. 10 ms at 155 Mbit/s is ~130 datagrams, a hundredth of a 540 ms path's one-BDP
// queue. Start-up and drain keep it (start-up's delay test reads queues of 4-16 ms), and so does a
// send after a pause (there is nothing to make up).
inline constexpr ArqDuration kCatchUp = std::chrono::milliseconds(10);
// Cruising, a late wake-up while busy is made up as far as it refills the pipe: until one
// bandwidth-delay product (estimate x minimum RTT) is in flight again, since the ACKs that came
// during the stall took what the link carried meanwhile out of flight; beyond that a burst would
// stand in the bottleneck's queue. At most this share of the minimum RTT, should the estimate be
// high: a sending thread that waits for a CPU much of the time gives up seconds of pacing with
// kCatchUp alone (docs/engine/datagram-carrier.md, "The sending thread on a loaded host").
inline constexpr double kCruiseCatchUpRttShare = 0.25;
// The pipe a catch-up refills is the smoothed RTT's, at most this many minimum RTTs: a quarter
// above the minimum. Capped at the standing queue's margin instead, a loaded host's catch-ups set
// off delay back-offs and carry far less of the link.
inline constexpr double kCatchUpRttCap = 1.25;
// ... and never more than this: a shallow bottleneck queue must take a catch-up burst whole.
inline constexpr ArqDuration kMaxCatchUp = std::chrono::milliseconds(150);
// Floor of the pacing rate (100 kbit/s): a collapsed estimate still probes its way back.
inline constexpr double kMinPacingRate = 12500;

// Warm start: pace at this share of the cached rate. The cache holds the best rate a session
// measured (no time window), and another flow may share the path now: starting a little below it
// still fills most of the pipe in the first round trip, and the ACKs then show the rest.
inline constexpr double kWarmStartShare = 0.85;
// The seeded window: the seed rate x RTT, with a quarter of room for ACK jitter so the window does
// not hold the pacing back; a wrong seed costs at most this much in flight before ACKs show it.
inline constexpr double kSeedWindowGain = 1.25;
// The seed is confirmed when a round trip of ACKs delivers at least this share of it; below, the
// path is slower than the cache says (the bottleneck delivers at its rate however fast we send).
inline constexpr double kSeedConfirmShare = 0.8;
// Start-up after a confirmed seed doubles the rate per round trip instead of 2/ln 2: the seed is
// usually close to the path, and 2.885 x it fills a one-BDP queue in half a round trip, before the
// delay test can stop it; 2 x takes a round trip. A low seed still beats a cold start-up.
inline constexpr double kSeedStartupGain = 2.0;
// A re-sent datagram acknowledged sooner than this share of the minimum RTT after the re-send was
// delivered by its earlier copy (no loss): a loaded host's stall can end in a timeout that re-sends
// a window the receiver already has, which, counted as loss, makes a loss-free path look lossy.
inline constexpr double kResendAckRttShare = 0.9;
// Loss is judged over at least this many datagrams: a handful says nothing.
inline constexpr double kSeedEvidenceDatagrams = 16;

// Start-up jump: a new path fills in far fewer round trips than doubling's ~10 on a long one.
// The train: the first 64 datagrams of start-up's first window, each burst of them sent back to
// back (TCP sends its initial window so too; the rest of the window follows at start-up's pace). A
// bottleneck slower than the sender spreads a burst to its own rate: 64 datagrams of 1500 bytes
// take 4.9 ms at 155 Mbit/s, against 0.65 ms for the sender to hand them to the emulated link.
inline constexpr std::uint64_t kTrainDatagrams = 64;
// The event loop hands a burst to the socket in one turn: a datagram sent this long after the
// train's last begins the train's next burst.
inline constexpr ArqDuration kTrainGap = std::chrono::milliseconds(1);
static_assert(kTrainDatagrams * kDatagramBytes <= kInitialWindowBytes, "the train opens the first window");
// Fewer datagrams say too little.
inline constexpr std::uint64_t kMinTrainDatagrams = 16;
// The arrivals measured must cover at least half the train's bytes. They are the receiver kernel's
// receive times (wire_frame.h, AckArrivals), not the ACKs': a stalled receiver acknowledges what
// piled up at once, which makes a train timed by its ACKs look faster than the bottleneck.
inline constexpr std::uint64_t kTrainCoverDivisor = 2;
// The arrivals must be spread at least this much more than the sends were: else the train
// measured the sender (an application that handed its data over slowly), not the bottleneck.
inline constexpr double kTrainSpread = 2.0;
// ... and over at least this long: the sender itself hands a 64-datagram train over in ~0.65 ms
// (1.2 Gbit/s), so arrivals spread over less were bunched on the way, and a jump at such a rate
// overfills the queue. Above ~0.75 Gbit/s start-up doubles instead.
inline constexpr ArqDuration kMinTrainArrivalSpan = std::chrono::milliseconds(1);
// The jump paces at this share of the train's rate. A train measures the bottleneck's capacity,
// not what other flows leave of it, so it stays below the whole: start-up (kJumpCeilingGain)
// finds the rest, and the jump is judged as a warm seed is (kSeedConfirmShare). Not half: a
// program that streams from its first send queues data behind the first window that half the
// bottleneck never drains in time. Three quarters overfill nothing beside a flow that takes 60 %
// of the link, and beside CUBIC each keeps a quarter (docs/engine/datagram-carrier.md, "Start-up jump").
inline constexpr double kJumpShare = 0.75;
// Start-up after a confirmed jump paces at most this much above the larger of the train's rate and
// the estimate: the train measured the bottleneck, so doubling past it only fills the queue before
// the delay test can see it. A quarter more finds out whether the train read low, and queues at
// most a quarter of a BDP per round trip, which the delay test stops.
inline constexpr double kJumpCeilingGain = 1.25;

// Until a busy round measured the path (bursts smaller than the path, each acknowledged before the
// next, measure the application, and cruising at their rate makes each batch a round trip longer),
// the estimate is no lower than this share of the train's rate: a little below it a burst leaves
// at the path's rate without a queue of its own. The first busy round while cruising, a back-off
// or a rejected seed ends the floor.
inline constexpr double kTrainFloorShare = 0.9;

inline double seconds_of(std::chrono::duration<double> d) { return d.count(); }

}  // namespace lp::pacer_tuning
