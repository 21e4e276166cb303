// ArqSender: the sending half of the ARQ (one direction of a session). Holds a copy of every
// submitted message until it is acknowledged, decides what to (re)transmit and when.
#pragma once

#include <deque>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "arq/arq_types.h"
#include "arq/rtt_estimator.h"

namespace lp {

class ArqSender {
 public:
  explicit ArqSender(const ArqConfig& config);

  bool can_accept(std::size_t bytes) const;
  std::uint64_t submit(ArqPayload payload);
  std::optional<ArqDataFrame> poll_transmit(ArqTime now);
  // Payload bytes of the frame poll_transmit() would hand out next (nullopt: nothing may go now).
  // Timers that have not run yet are not applied (next_deadline() says when they are due).
  std::optional<std::size_t> next_transmit_bytes() const;
  bool on_ack(const ArqAck& ack, ArqTime now);
  void on_timer(ArqTime now);
  // Everything unacknowledged goes again, in order. In datagram mode the retransmission timer keeps
  // running while anything sent is unacknowledged (RFC 6298 5.1): whatever holds the re-sends back
  // (the pacer's window), a timeout still comes.
  void carrier_reset(ArqTime now);
  // The same when the peer could read none of the copies sent so far (datagrams sealed under keys
  // it never proved: a reseal). The next copy of each is its first readable one: its ACK is loss
  // evidence as a first transmission's is, and the repairs' tail counts from it. Karn's rule still
  // holds for RTT samples (an old copy may yet be read, when the reseal was a false alarm).
  void resend_unread(ArqTime now);

  std::optional<ArqTime> next_deadline() const;
  std::optional<ArqTime> oldest_unacked_since() const;
  bool peer_dead() const { return peer_dead_; }
  bool idle() const { return outstanding_.empty(); }
  std::uint64_t next_seq() const { return next_seq_; }
  // For the datagram carrier's repair symbols (tail_fec.h): the oldest unacknowledged sequence,
  // 1 + the highest ever transmitted, and a copy still held (sent, neither acknowledged nor SACKed;
  // nullptr otherwise) with its first transmission time.
  std::uint64_t base_seq() const { return base_seq_; }
  std::uint64_t transmitted_end() const { return highest_transmitted_end_; }
  const ArqPayload* held_copy(std::uint64_t seq, ArqTime& first_sent) const;
  // The sender fields of the statistics (receiver fields zero).
  ArqStats stats() const;

 private:
  struct Outstanding {
    ArqPayload payload;                     // released once SACKed (the receiver holds it)
    std::size_t bytes = 0;                  // payload size, for the byte window
    std::uint32_t transmissions = 0;
    std::uint64_t send_order = 0;           // position in the sequence of all transmissions
    ArqTime first_sent{};
    ArqTime last_sent{};
    std::uint32_t loss_evidence = 0;        // ACKs showing later-sent messages arrived
    std::uint64_t acked_after = 0;          // later-sent messages those ACKs acknowledged
    bool sacked = false;
    bool resent_before_tail = false;        // re-sent while new messages waited, no tail copies yet
    std::uint32_t unread_copies = 0;        // transmissions the peer could not read (resend_unread)
  };
  // What one ACK newly acknowledged, for the RTT sample and fast retransmit.
  struct Progress {
    // `orders`: the sender's scratch vector (no allocation per ACK on the bulk path), emptied here.
    explicit Progress(std::vector<std::uint64_t>& orders) : send_orders(orders) { send_orders.clear(); }
    ArqTime now{};
    bool any = false;
    std::uint64_t latest_send_order = 0;     // newest transmission among them
    std::vector<std::uint64_t>& send_orders; // of each (fast_retransmit_messages)
    std::optional<ArqTime> sample_sent;     // newest first-and-only transmission (Karn's rule)
  };

  Outstanding& at(std::uint64_t seq) { return outstanding_[seq - base_seq_]; }
  const Outstanding& at(std::uint64_t seq) const { return outstanding_[seq - base_seq_]; }
  bool valid_ack(const ArqAck& ack) const;
  void note_acknowledged(const Outstanding& message, Progress& progress);
  void apply_cumulative(std::uint64_t cumulative, Progress& progress);
  void apply_sack(const std::vector<ArqSackRange>& sack, Progress& progress);
  void fast_retransmit(Progress& progress);
  ArqDataFrame transmit(std::uint64_t seq, ArqTime now);
  bool tracks_loss() const { return config_.mode == ArqMode::kDatagram && config_.fast_retransmit_threshold != 0; }
  void queue_retransmission(std::uint64_t seq);
  // The next extra copy still worth sending (drops those acknowledged since), or nullopt.
  std::optional<std::uint64_t> next_tail_copy();
  void add_sacked_range(std::uint64_t begin, std::uint64_t end);
  // New messages ran out: the recent re-sends made before get the tail's copies too.
  void copy_recent_resends(ArqTime now);

  ArqConfig config_;
  RttEstimator rtt_;
  std::deque<Outstanding> outstanding_;   // seq base_seq_ .. next_seq_-1
  std::uint64_t base_seq_ = 0;            // oldest unacknowledged (= peer's cumulative ACK)
  std::uint64_t next_seq_ = 0;            // assigned to the next submitted message
  std::uint64_t next_unsent_ = 0;         // first message not yet transmitted (since last reset)
  std::uint64_t highest_transmitted_end_ = 0;  // 1 + highest seq ever transmitted
  std::uint64_t outstanding_bytes_ = 0;   // payload bytes held: unacknowledged and not SACKed
  std::uint64_t transmissions_ = 0;       // send_order source
  std::uint32_t peer_window_messages_;
  std::set<std::uint64_t> retransmit_queue_;
  // Extra copies of re-sends made at the tail (ArqConfig::tail_copies): seq, copies still to go.
  std::deque<std::pair<std::uint64_t, std::uint32_t>> tail_copies_;
  std::uint64_t resent_before_tail_ = 0;  // messages marked resent_before_tail
  // Fast retransmit's candidates (datagram mode): messages transmitted, not acknowledged, not
  // SACKed and not queued again, by send order (send_order -> seq). An ACK then visits only those
  // sent before its newest acknowledged message (the holes), not the whole window (thousands of
  // units on a long path, with an ACK every few datagrams).
  std::map<std::uint64_t, std::uint64_t> unacked_by_order_;
  std::vector<std::uint64_t> acked_send_orders_;  // Progress::send_orders of the ACK being applied
  // The SACKed sequence ranges above base_seq_, merged (begin -> end). Every ACK repeats the
  // ranges of the one before it; without this each ACK walked every SACKed unit again.
  std::map<std::uint64_t, std::uint64_t> sacked_ranges_;
  // RFC 6298's single retransmission timer (datagram mode): runs while messages are in flight,
  // restarted whenever an ACK acknowledges something new.
  std::optional<ArqTime> retransmit_timer_;
  // The smallest RTT sample: an ACK that comes sooner than this after a re-send is for an earlier
  // copy (RFC 8985, 6.2 step 2).
  std::optional<ArqDuration> min_rtt_;
  bool peer_dead_ = false;
  ArqStats counters_;                     // only the sender's counters are used
};

}  // namespace lp
