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
inline constexpr std::size_t kBandwidthWindowRounds = 10;
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
// minimum RTT (67 ms on geo) and at least kStartupDelaySamples samples (RFC 9406's N_RTT_SAMPLE):
// every sample of a stretch must show the queue, so a loaded host's scheduling stall of a few
// ms, or one datagram's jitter, does not end start-up.
inline constexpr int kStartupDelayStretch = 8;
inline constexpr std::uint32_t kStartupDelaySamples = 8;
// Start-up's window: twice the estimate x the minimum RTT. Still doubles what is delivered per
// round trip (the estimate is what the last round delivered), but what start-up has in flight is
// at most the pipe plus one bandwidth-delay product of queue while the estimate is at or below the
// bottleneck: the smoothed RTT (which the queue inflates) and 2/ln 2 allowed up to 5.8 BDPs, and
// a one-BDP queue overflowed by tens of thousands of datagrams on geo before any exit acted.
inline constexpr double kStartupWindowGain = 2.0;
// Start-up's first window: 96 datagrams (~141 KB), more than TCP's 10 segments because a long path
// pays every doubling with a whole round trip (540 ms on geo), and a datagram path has no one else
// to share its first round with that TCP's small window would protect. It is what the tcp carrier
// sends in its first round trip too (10 initial windows, over its 2 streams and 8 spill streams),
// and it holds 100 x 1 KiB messages (one datagram each, ~1.1 KB on the wire): 64 datagrams left a
// new long path's 1 KiB first batch a round trip behind tcp's (libshim/README.md, "A new long path
// on datagrams").
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
// of the minimum within [kStartupDelayMin, kStartupDelayMax]: 16 ms on geo) and by at least
// kQueueDelayFloor (a loaded host delays ACKs by milliseconds, which is not a queue on the path).
// Cruising at the estimate builds no queue, a probe round's is gone within the round after it,
// and the smallest RTT of a round is taken before a probe's queue builds; what stands is another
// flow's, or a path that got slower. Random loss raises no RTT: it never backs off for it.
// Before, the margin was a quarter of the minimum and 4 RTT deviations (up to half the minimum):
// a TCP CUBIC flow growing beside the cruise keeps its queue in a sawtooth whose deviation hid
// it, and was held at 15 % of geo (simulation, "a TCP CUBIC flow that starts with it"; 19 % with
// iperf3 on the emulated link); with this margin it gets 35 %.
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
// datagrams (BBRv2's full_loss_cnt): a round of an application sending a few small messages
// (lp-perf's answers, 1-3 datagrams a round) loses a third of it to one random loss. Taken for an
// overfilled path, that ended start-up and the flow cruised at its own tiny rate (0.12 Mbit/s on
// geo at 5 % loss: every batch of answers a round trip late).
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
// sends a little burst, never a window's worth. 2 ms gave up ~1 s of every 7 s batch of 100 MiB
// on geo-lossy under load 6 (pacing_behind_ms): 11-12k datagrams/s left where pacing allowed 13k.
// 10 ms at 155 Mbit/s is ~130 datagrams, a hundredth of geo's one-BDP queue. Start-up and drain
// keep it (start-up's delay test reads queues of 4-16 ms), and so does a send after a pause (there
// is nothing to make up).
inline constexpr ArqDuration kCatchUp = std::chrono::milliseconds(10);
// Cruising, a late wake-up while busy is made up as far as it refills the pipe: until one
// bandwidth-delay product (estimate x minimum RTT) is in flight again, since the ACKs that came
// during the stall took what the link carried meanwhile out of flight; beyond that a burst would
// stand in the bottleneck's queue (with a quarter of the minimum RTT and no such limit, geo-lossy's
// burst tails grew by 100-170 ms, the queue the bursts left). At most this share of the minimum RTT
// (135 ms on geo, ~1750 datagrams at 155 Mbit/s), should the estimate be high. With 10 ms the
// sender gave up 1-24 s of pacing per run of ten 1 MiB x 100 batches on geo-lossy at load 5-17, its
// thread runnable but waiting for a CPU 60-75 % of the time (libshim/README.md, "The sending thread
// on a loaded host").
inline constexpr double kCruiseCatchUpRttShare = 0.25;
// The pipe a catch-up refills is the smoothed RTT's, at most this many minimum RTTs: a quarter
// above the minimum (the delay back-off's threshold when the catch-up was measured; capped at the
// standing queue's margin of 16 ms on a 200 ms path, the simulated loaded host's catch-up set off
// 10 delay back-offs and carried 0.39 of the link, against 0.86 with this cap).
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
// Start-up after a confirmed seed doubles the sending rate per round trip instead of start-up's
// 2/ln 2: the seed is usually close to the path, and 2.885 x it fills a one-BDP queue in half a
// round trip, long before the next round's delay test can stop it (measured in the simulation:
// as many drops as a cold start-up); 2 x fills it in one round trip. A seed too low still ramps
// faster than a cold start-up, which starts from its first window (kInitialWindowBytes).
inline constexpr double kSeedStartupGain = 2.0;
// A re-sent datagram acknowledged sooner than this share of the minimum RTT after the re-send was
// delivered by its earlier copy: the re-send was not needed (no loss). On geo a loaded host's
// 100 ms stall ended in a retransmission timeout that re-sent a whole window (6000-12000
// datagrams) the receiver already had; counted as loss, a loss-free path looked 1.8 % lossy.
inline constexpr double kResendAckRttShare = 0.9;
// Loss is judged over at least this many datagrams: a handful says nothing.
inline constexpr double kSeedEvidenceDatagrams = 16;

// Start-up jump (issue 11: a new path fills in far fewer round trips than doubling's ~10 on geo).
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
// The arrivals measured must cover at least half the train's bytes. They are the receiver's
// kernel's receive times, which the ACKs report (wire_frame.h, AckArrivals), not the ACKs' own:
// a receiver that stalled read what piled up in one turn and acknowledged it at once, which made a
// train timed by its ACKs look faster than the bottleneck (on the emulated geo link a stalled
// receiver turned 4.7 ms of arrivals into 0.15-0.7 ms of replies at load 9), and refusing such
// trains (an ACK covering more than a quarter of a burst, fewer than 8 ACKs) left a loaded host's
// start-up doubling from its first window for ~5 round trips (the CFD demo's 128x64 row, 3.9x).
inline constexpr std::uint64_t kTrainCoverDivisor = 2;
// The arrivals must be spread at least this much more than the sends were: else the train
// measured the sender (an application that handed its data over slowly), not the bottleneck.
inline constexpr double kTrainSpread = 2.0;
// ... and over at least this long: the sender itself hands a 64-datagram train to the emulated
// link in 0.65 ms (1.2 Gbit/s), so arrivals spread over less were bunched on the way (timed by
// the ACKs, before the arrival times: on geo under load 12-18 two of four trains read 8.9 and 12.1
// Gbit/s, the jump paced at half of it for a round trip and lost 1429 and 5669 datagrams at the
// queue). Rates above ~0.75 Gbit/s are not measured from a first window: start-up doubles there.
inline constexpr ArqDuration kMinTrainArrivalSpan = std::chrono::milliseconds(1);
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
inline constexpr double kJumpShare = 0.75;
// Start-up after a confirmed jump paces at most this much above the larger of the train's rate and
// the estimate: the train measured the bottleneck, so doubling past it (as after a warm seed)
// only fills the queue: 2 x filled a one-BDP queue in one round trip, before the delay test could
// see it, and lost datagrams in the simulation. A quarter more finds out whether the train read
// low, and queues at most a quarter of a BDP per round trip, which the delay test stops.
inline constexpr double kJumpCeilingGain = 1.25;

// Draining and cruising before a busy round measured the path (its application only ever sent
// bursts smaller than the path, each acknowledged before the next: 100 x 1 KiB batches), the
// estimate is no lower than this share of the packet train's rate. Those bursts' delivery-rate
// samples measure the application (110 KB per round trip), not the path: at 135 ms and 10
// Mbit/s, start-up (pacing faster than half the train's rate, so no jump) left on its own
// bursts' queueing, cruised at 2.66 Mbit/s, and each 110 KB batch took a round trip longer (warm
// batches 1.75x the floor). The train measured the bottleneck's capacity; a little below it a
// burst leaves at the path's rate without a queue of its own. The first busy round while cruising,
// a back-off or a rejected seed ends the floor: the path was measured then.
inline constexpr double kTrainFloorShare = 0.9;

static_assert(kBandwidthWindowRounds == 10, "DatagramPacer::kRing holds kBandwidthWindowRounds");

inline double seconds_of(std::chrono::duration<double> d) { return d.count(); }

}  // namespace lp::pacer_tuning
