// The pacer tests' simulated path (datagram_pacer_test*.cpp): datagram sizes on the wire, a path's
// profile, and the bottleneck: a rate-limited FIFO with a tail-drop queue, then random loss,
// jitter and duplication, on a fake clock.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <deque>
#include <optional>
#include <map>
#include <memory>
#include <random>

#include "carrier/carrier_choice.h"
#include "congestion/datagram_pacer.h"
#include "carrier/datagram/datagram_wire.h"
#include "sim_link.h"
#include "carrier/datagram/tail_fec.h"

using namespace std::chrono_literals;
using lp::Arq;
using lp::ArqAck;
using lp::ArqConfig;
using lp::ArqDuration;
using lp::ArqPayload;
using lp::ArqTime;
using lp::DatagramPacer;
using lp::test::at;
using lp::test::WireData;

namespace pacer_test {

// Bytes a datagram adds to its payload on the wire (IP, UDP, datagram and frame headers, tag).
constexpr std::size_t kOverhead = 72;
constexpr std::size_t kPayload = 1400;

struct PathProfile {
  double rate = 2.5e6;            // bottleneck, bytes per second (20 Mbit/s)
  ArqDuration delay = 25ms;       // one way, each direction
  std::size_t queue = 125'000;    // bottleneck queue, bytes (one bandwidth-delay product)
  double loss = 0;                // random, after the bottleneck
  ArqDuration jitter = 0ms;       // reorders
  double duplicate = 0;
  double ack_loss = 0;            // random, on the return path
};

// What crosses the forward path: a DATA unit, or a repair datagram (tail_fec.h).
struct Datagram {
  WireData data;
  std::shared_ptr<const lp::RepairSymbol> repair;
  ArqTime arrived{};  // set by the path: when it reached the receiver's socket
};

// An ACK and the arrival times it reports (as the datagram channel sends them).
struct TimedAck {
  ArqAck ack;
  DatagramPacer::Arrivals arrivals;
};

// The forward path: serialisation at `rate` behind a FIFO of at most `queue` bytes.
class Bottleneck {
 public:
  Bottleneck(PathProfile profile, std::uint64_t seed) : profile_(profile), rng_(seed) {}
  void set_rate(double rate) { profile_.rate = rate; }
  // Another flow into the same queue: packets of kCompetitorPacket bytes at a constant `rate`
  // from `now` on (it does not answer loss or delay: a stand-in for a second flow's sending rate).
  void add_competitor(double rate, ArqTime now) {
    competitor_rate_ = rate;
    next_competitor_ = now;
  }
  std::uint64_t competitor_drops() const { return competitor_drops_; }
  // A TCP CUBIC flow into the same queue from `now` on (below): it grows until the queue overflows.
  void add_cubic(ArqTime now, double max_window_bytes) {
    cubic_ = CubicFlow{};
    cubic_->max_window = max_window_bytes / kCompetitorPacket;
    cubic_send(now);
  }
  // Bytes the CUBIC flow got through the bottleneck (acknowledged), and its window (packets).
  std::uint64_t cubic_bytes() const { return cubic_ ? cubic_->delivered * kCompetitorPacket : 0; }
  double cubic_window() const { return cubic_ ? cubic_->cwnd : 0; }
  bool cubic_in_slow_start() const { return cubic_ && cubic_->slow_start; }

  void send(Datagram frame, std::size_t bytes, ArqTime now) {
    advance(now);
    if (!enqueue(bytes, now)) {
      ++tail_drops_;
      return;
    }
    if (chance(profile_.loss)) return;
    if (chance(profile_.duplicate)) in_flight_.emplace(arrival(), frame);
    in_flight_.emplace(arrival(), std::move(frame));
  }
  std::vector<Datagram> arrivals(ArqTime now) {
    std::vector<Datagram> out;
    auto end = in_flight_.upper_bound(now);
    for (auto it = in_flight_.begin(); it != end; ++it) {
      out.push_back(std::move(it->second));
      out.back().arrived = it->first;
    }
    in_flight_.erase(in_flight_.begin(), end);
    return out;
  }
  std::optional<ArqTime> next_arrival() const {
    return in_flight_.empty() ? std::nullopt : std::optional(in_flight_.begin()->first);
  }
  ArqDuration queue_delay(ArqTime now) {
    advance(now);
    return busy_until_ > now ? std::chrono::duration_cast<ArqDuration>(busy_until_ - now) : 0us;
  }
  std::uint64_t tail_drops() const { return tail_drops_; }

 private:
  static constexpr std::size_t kCompetitorPacket = 1500;
  // Tail drop: a packet that would wait longer than the queue holds is dropped.
  bool enqueue(std::size_t bytes, ArqTime now) {
    const ArqTime start = std::max(now, busy_until_);
    if (std::chrono::duration<double>(start - now).count() * profile_.rate > static_cast<double>(profile_.queue)) return false;
    busy_until_ = start + std::chrono::duration_cast<ArqTime::duration>(std::chrono::duration<double>(bytes / profile_.rate));
    return true;
  }
  // TCP CUBIC as Linux runs it by default (RFC 9438: C = 0.4, beta = 0.7, fast convergence, the
  // Reno-friendly region; HyStart's delay test ends slow start, RFC 9406), ACK-clocked, one
  // window reduction per round trip of losses. Its packets share the tail-drop queue; a drop is
  // seen one round trip later (duplicate ACKs). Lost packets are not re-sent: it moves fresh ones,
  // and only what it delivered counts.
  struct CubicFlow {
    double cwnd = 10, ssthresh = 1e9, max_window = 1e9;
    bool slow_start = true;
    double w_max = 0, k = 0, origin = 0, w_est = 0;
    std::optional<ArqTime> epoch;
    std::uint64_t next_seq = 0, in_flight = 0, recovery_end = 0, round_end = 0, delivered = 0;
    ArqDuration min_rtt = ArqDuration::max();
    ArqDuration round_min_rtt = ArqDuration::max();
    int round_samples = 0;
  };
  struct CubicEvent {
    std::uint64_t seq;
    ArqTime sent;
    bool lost;
  };
  void cubic_send(ArqTime now) {
    CubicFlow& f = *cubic_;
    while (static_cast<double>(f.in_flight) < std::min(f.cwnd, f.max_window)) {
      const std::uint64_t seq = f.next_seq++;
      ++f.in_flight;
      const bool queued = enqueue(kCompetitorPacket, now);
      if (!queued) ++competitor_drops_;
      const bool lost = !queued || chance(profile_.loss);
      // Delivered: its ACK returns one way after it leaves the queue. Dropped: the duplicate ACKs
      // of the packets behind it tell the sender about a round trip after it was sent.
      cubic_events_.emplace(std::max(now, busy_until_) + 2 * profile_.delay, CubicEvent{seq, now, lost});
    }
  }
  void cubic_event(ArqTime now, const CubicEvent& event) {
    CubicFlow& f = *cubic_;
    --f.in_flight;
    if (event.lost) {
      if (event.seq >= f.recovery_end) {
        f.recovery_end = f.next_seq;
        f.slow_start = false;
        f.w_max = f.cwnd < f.w_max ? f.cwnd * (1 + kCubicBeta) / 2 : f.cwnd;  // fast convergence
        f.cwnd = std::max(2.0, f.cwnd * kCubicBeta);
        f.ssthresh = f.cwnd;
        f.epoch.reset();
      }
    } else {
      ++f.delivered;
      const ArqDuration rtt = std::chrono::duration_cast<ArqDuration>(now - event.sent);
      f.min_rtt = std::min(f.min_rtt, rtt);
      if (f.slow_start) {
        f.cwnd += 1;
        // HyStart: the first samples of a round above the minimum by an eighth of it in [4, 16] ms.
        if (f.round_samples < 8) {
          f.round_min_rtt = std::min(f.round_min_rtt, rtt);
          if (++f.round_samples == 8 && f.cwnd >= 16 &&
              f.round_min_rtt >= f.min_rtt + std::clamp<ArqDuration>(f.min_rtt / 8, 4ms, 16ms)) {
            f.slow_start = false;
            f.ssthresh = f.cwnd;
          }
        }
        if (event.seq >= f.round_end) {
          f.round_end = f.next_seq;
          f.round_samples = 0;
          f.round_min_rtt = ArqDuration::max();
        }
      } else if (event.seq >= f.recovery_end) {
        const double min_rtt = std::chrono::duration<double>(f.min_rtt).count();
        if (!f.epoch) {
          f.epoch = now;
          f.k = f.cwnd < f.w_max ? std::cbrt((f.w_max - f.cwnd) / kCubicC) : 0;
          f.origin = std::max(f.cwnd, f.w_max);
          f.w_est = f.cwnd;
        }
        const double t = std::chrono::duration<double>(now - *f.epoch).count() + min_rtt;
        const double target = f.origin + kCubicC * std::pow(t - f.k, 3);
        f.cwnd += target > f.cwnd ? (target - f.cwnd) / f.cwnd : 0.01 / f.cwnd;
        f.w_est += 3 * (1 - kCubicBeta) / (1 + kCubicBeta) / f.cwnd;
        f.cwnd = std::max(f.cwnd, f.w_est);
      }
    }
    cubic_send(now);
  }
  // The competitors' packets up to `now` join the queue in their turn.
  void advance(ArqTime now) {
    while (cubic_ && !cubic_events_.empty() && cubic_events_.begin()->first <= now) {
      const auto [when, event] = *cubic_events_.begin();
      cubic_events_.erase(cubic_events_.begin());
      cubic_event(when, event);
    }
    if (competitor_rate_ <= 0) return;
    const auto gap = std::chrono::duration_cast<ArqTime::duration>(std::chrono::duration<double>(kCompetitorPacket / competitor_rate_));
    for (; next_competitor_ <= now; next_competitor_ += gap) {
      if (!enqueue(kCompetitorPacket, next_competitor_)) ++competitor_drops_;
    }
  }
  bool chance(double p) { return p > 0 && std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  ArqTime arrival() {
    const auto jitter = profile_.jitter.count() > 0
                            ? ArqDuration(std::uniform_int_distribution<ArqDuration::rep>(0, profile_.jitter.count())(rng_))
                            : 0us;
    return busy_until_ + profile_.delay + jitter;
  }
  PathProfile profile_;
  std::mt19937_64 rng_;
  ArqTime busy_until_{};
  std::multimap<ArqTime, Datagram> in_flight_;
  std::uint64_t tail_drops_ = 0;
  double competitor_rate_ = 0;
  ArqTime next_competitor_{};
  std::uint64_t competitor_drops_ = 0;
  static constexpr double kCubicC = 0.4, kCubicBeta = 0.7;
  std::optional<CubicFlow> cubic_;
  std::multimap<ArqTime, CubicEvent> cubic_events_;
};

}  // namespace pacer_test
