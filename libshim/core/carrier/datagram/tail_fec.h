// Forward error correction over the tail of a burst on the datagram carrier. Pure: no clock, no
// I/O; the channel (datagram_channel.h) and the tests drive it.
//
// Why the tail: a unit lost while new units still flow is found by the ACKs of later units and
// re-sent while the burst goes on, at no cost in time. A unit lost in the burst's last round trip
// is found only when those ACKs come back, after the last new unit left: its re-send arrives one
// more round trip late, a large share of a transfer on a long lossy path. So when the sender runs
// out of new units, it sends repair symbols (erasure_code.h) over the units first sent in the last
// round trip; the receiver recovers what those lost with them, half a round trip after they left,
// and acknowledges the recovered units as received ones. A repair that is itself lost is one fewer
// symbol: a block decodes while no more of its units and repairs are lost than it has repairs, and
// a block that cannot decode costs no more than without repairs (the ARQ re-sends its units).
//
// Symbols: length u16 | unit | zero padding, every symbol of a block as long as its longest unit's.
// Blocks: the tail's units in sequence order, in near-equal blocks of at most kMaxBlockUnits; each
// gets the repairs that keep its chance of losing more below kTailFailure / blocks (a tail under
// kFullShareUnits: its share) at the estimated loss x kLossMargin (loss_estimate()); none at 0.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <vector>

#include "arq/arq.h"
#include "wire/wire_frame.h"

namespace lp {

// One repair symbol to send (a REPAIR frame's fields, owning its bytes).
struct RepairSymbol {
  std::uint64_t first_sequence = 0;
  std::size_t data_count = 0;
  std::size_t index = 0;
  std::vector<std::byte> symbol;
  RepairFrame frame() const { return RepairFrame{first_sequence, data_count, index, symbol}; }
};

class TailFecSender {
 public:
  // Units per block. Encoding costs units x repairs x bytes and a block's repairs share out its
  // losses better the larger it is; 200 leaves the code room for 55 repairs per block
  // (k + repairs <= 255).
  static constexpr std::size_t kMaxBlockUnits = 200;
  // The tail: units first sent this long before (x the minimum RTT), still held by the sender
  // (unacknowledged: the ACKs of units sent earlier have come back), at most kMaxTailUnits of
  // them (~23 MB; a 540 ms round trip at 155 Mbit/s is ~7100 units), newest first.
  static constexpr double kTailRoundTrips = 1.25;
  static constexpr std::size_t kMaxTailUnits = 16384;
  // The chance that some block of a tail cannot decode: 2 %, at the loss rate x kLossMargin (the
  // estimate is the calm rounds' re-sends: 0.7-1.5 x the loss rate in datagram_pacer_test).
  static constexpr double kTailFailure = 0.02;
  static constexpr double kLossMargin = 1.25;
  // A tail of fewer units gets that share of kTailFailure: an application that answers each
  // message with one makes a tail of every answer, and one answer in a hundred not recovered costs
  // the batch a round trip. At 5 % loss a one-unit tail gets three copies.
  static constexpr double kFullShareUnits = 100;

  // Repairs for a block of `units` at `loss` (0..1): the fewest with P(more lost of units + repairs
  // than repairs) <= `failure`; 0 at no loss; at most what the code allows.
  static std::size_t repairs_for(std::size_t units, double loss, double failure);

  // Until the pacer knows the path's loss (DatagramPacer::loss_ppm; -1 before), the share of
  // transmissions ACKs showed missing (ArqStats::messages_seen_missing) among those they told of
  // (units in flight are no evidence), from a prior of kPriorLoss worth kPriorTransmissions: a new
  // session's first tails get repairs too (a lost one-unit answer costs its batch a round trip),
  // and a loss-free path's evidence outweighs it soon. Not the fast re-sends: the units repairs
  // recovered are seldom re-sent, so those would size repairs for what the repairs left.
  static constexpr double kPriorLoss = 0.02;
  static constexpr double kPriorTransmissions = 50;
  // On a path the warm-start cache knows to lose more than kPriorLoss (validated by the handshake's
  // round trip), the prior is the loss measured there, worth this many transmissions: a session of
  // small messages sizes its first batches' repairs for the path's loss rather than learn it batch
  // by batch, late. Only ever higher than kPriorLoss: the cached loss is a pacer's re-sends without
  // a queue (which leave out what repairs recovered) or TCP's, a floor of the path's loss.
  static constexpr double kKnownPriorTransmissions = 200;
  // The path's loss towards us (ArqStats::messages_skipped over the units received) counts too,
  // once this many units came: an end that answers each message with one would size its repairs
  // from its own ACKs' evidence, which its repairs' success hides (the peer acknowledges recovered
  // units as received, no hole shown), so its estimate falls and its tails go short. Paths lose
  // much alike both ways; where they do not, the larger is the safe side (repairs cost bytes).
  static constexpr double kMinReceivedEvidence = 100;
  // The loss rate (0..1) to size repairs for; `known_loss_ppm`: the cache's (-1: none).
  static double loss_estimate(std::int64_t pacer_loss_ppm, const ArqStats& stats, std::int64_t known_loss_ppm = -1);

  // The sender ran out of new units at `now`: repair symbols over the tail not yet protected
  // (empty when nothing new was sent since the last call or `loss` is 0).
  std::vector<RepairSymbol> protect_tail(const Arq& arq, ArqTime now, ArqDuration min_rtt, double loss);
  // Whether units were sent since the last protect_tail: a tail is owed its repairs once the
  // sender runs out of new units.
  bool owes_repairs(const Arq& arq) const { return arq.transmitted_end() > protected_end_; }
  // Units from `seq` on go again as a first flight (Arq::resend_unread): their tail is owed
  // repairs anew.
  void protect_again_from(std::uint64_t seq) { protected_end_ = std::min(protected_end_, seq); }

 private:
  std::uint64_t protected_end_ = 0;  // units below were covered by an earlier tail (or were old)
};

class TailFecReceiver {
 public:
  // Units handed out in order that are kept for blocks reaching below the cumulative point (a
  // block has a missing unit at or above it, so its first unit is less than a block back).
  static constexpr std::size_t kKeptUnits = 255;
  // Repair symbols held for blocks not yet decodable: 4096 (~5.8 MB), oldest blocks dropped first.
  static constexpr std::size_t kMaxHeldRepairs = 4096;

  // A repair symbol (authenticated). Decodes its block when enough is there: the units recovered
  // go to arq.on_data as received ones. False: it contradicts the block's other symbols (size,
  // or a recovered unit's length): the caller counts it malformed.
  bool on_repair(Arq& arq, const RepairFrame& repair, ArqTime now);
  // A DATA unit was accepted: a block waiting for it may decode now.
  void on_data(Arq& arq, std::uint64_t seq, ArqTime now);
  // The channel took unit `seq` from the ARQ (in order): kept while a block may still need it.
  void on_delivered(std::uint64_t seq, ArqPayload unit);

  std::uint64_t recovered_units() const { return recovered_; }
  std::uint64_t repairs_received() const { return repairs_received_; }

 private:
  struct Block {
    std::size_t data_count = 0;
    std::size_t symbol_size = 0;
    std::map<std::size_t, std::vector<std::byte>> repairs;  // index -> symbol
  };
  const ArqPayload* unit(const Arq& arq, std::uint64_t seq) const;
  // Decodes the block if it can; true when it is done with (decoded, or nothing missing).
  bool try_decode(Arq& arq, std::uint64_t first, Block& block, ArqTime now, bool& malformed);

  std::map<std::uint64_t, Block> blocks_;  // by first sequence
  std::size_t held_repairs_ = 0;
  std::deque<ArqPayload> kept_;            // units kept_end_ - kept_.size() .. kept_end_ - 1
  std::uint64_t kept_end_ = 0;
  std::uint64_t recovered_ = 0;
  std::uint64_t repairs_received_ = 0;
};

}  // namespace lp
