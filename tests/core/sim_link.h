// Test helpers for the ARQ: a simulated link driven by a fake clock and a seeded RNG, and a session
// of two Arq endpoints joined by two such links. Nothing here reads a clock or touches a socket.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <variant>
#include <vector>

#include "arq/arq.h"

namespace lp::test {

using namespace std::chrono_literals;

// How the simulated link misbehaves. Defaults: a perfect 25 ms FIFO pipe.
struct LinkProfile {
  ArqDuration delay = 25ms;        // one-way propagation delay
  ArqDuration jitter = 0ms;        // extra delay, uniform in [0, jitter]: reorders frames
  double loss = 0.0;               // probability a frame is dropped
  double duplicate = 0.0;          // probability a frame arrives twice (the copy with its own jitter)
};

// One direction of a link: frames go in at `now`, come out when the fake clock reaches their
// arrival time. Frames with equal arrival times come out in the order they went in.
template <typename Frame>
class SimLink {
 public:
  SimLink(LinkProfile profile, std::uint64_t seed) : profile_(profile), rng_(seed) {}

  void send(Frame frame, ArqTime now) {
    ++sent_;
    if (chance(profile_.loss)) {
      ++lost_;
      return;
    }
    if (chance(profile_.duplicate)) {
      ++duplicated_;
      in_flight_.emplace(arrival(now), frame);
    }
    in_flight_.emplace(arrival(now), std::move(frame));
  }

  // Frames that have arrived by `now`, in arrival order.
  std::vector<Frame> arrivals(ArqTime now) {
    std::vector<Frame> out;
    auto end = in_flight_.upper_bound(now);
    for (auto it = in_flight_.begin(); it != end; ++it) out.push_back(std::move(it->second));
    in_flight_.erase(in_flight_.begin(), end);
    return out;
  }

  std::optional<ArqTime> next_arrival() const {
    if (in_flight_.empty()) return std::nullopt;
    return in_flight_.begin()->first;
  }

  // The connection broke: whatever was in flight is gone.
  void cut() { in_flight_.clear(); }
  void set_profile(LinkProfile profile) { profile_ = profile; }

  std::uint64_t sent() const { return sent_; }
  std::uint64_t lost() const { return lost_; }
  std::uint64_t duplicated() const { return duplicated_; }

 private:
  bool chance(double p) { return p > 0 && std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  ArqTime arrival(ArqTime now) {
    auto jitter = ArqDuration::zero();
    if (profile_.jitter > ArqDuration::zero()) {
      jitter = ArqDuration(std::uniform_int_distribution<ArqDuration::rep>(0, profile_.jitter.count())(rng_));
    }
    return now + profile_.delay + jitter;
  }

  LinkProfile profile_;
  std::mt19937_64 rng_;
  std::multimap<ArqTime, Frame> in_flight_;
  std::uint64_t sent_ = 0, lost_ = 0, duplicated_ = 0;
};

// A data frame as the wire carries it (the Arq's ArqDataFrame only points into the sender's copy).
struct WireData {
  std::uint64_t seq = 0;
  ArqPayload payload;
};
using WireFrame = std::variant<WireData, ArqAck>;

// Test messages carry their own number, so the receiver can check order and content:
// 8 bytes of `number`, then `filler` bytes derived from it.
inline ArqPayload make_message(std::uint64_t number, std::size_t filler = 0) {
  ArqPayload payload(sizeof number + filler);
  std::memcpy(payload.data(), &number, sizeof number);
  for (std::size_t i = 0; i < filler; ++i) payload[sizeof number + i] = std::byte(number * 31 + i);
  return payload;
}

inline std::uint64_t message_number(const ArqPayload& payload) {
  std::uint64_t number = 0;
  std::memcpy(&number, payload.data(), std::min(sizeof number, payload.size()));
  return number;
}

// Fake clock readings: the time `since_start` after the simulation began.
inline ArqTime at(ArqDuration since_start) { return ArqTime{} + since_start; }

inline ArqConfig datagram_config() {
  ArqConfig config;
  config.mode = ArqMode::kDatagram;
  return config;
}

// Two Arq endpoints, A and B, joined by a link in each direction, with a fake clock. The test puts
// messages into an endpoint's outbox; run_until() moves them across as an engine would.
class SimSession {
 public:
  struct Endpoint {
    explicit Endpoint(const ArqConfig& config) : arq(config) {}
    Arq arq;
    std::vector<ArqPayload> outbox;           // waiting for the send window
    std::size_t next_outbox = 0;
    std::vector<ArqPayload> delivered;        // what receive() handed out, in order
    std::uint64_t max_held = 0;               // high-water mark of held out-of-order messages
    std::uint64_t max_held_bytes = 0;
    std::uint64_t max_in_flight = 0;          // high-water mark of unacknowledged messages
    std::uint64_t max_in_flight_bytes = 0;
    std::uint64_t window_stalls = 0;          // times can_accept() said no
    bool ack_rejected = false;
    bool data_refused = false;  // on_data refused a frame (far beyond the window)
  };

  SimSession(const ArqConfig& config, LinkProfile a_to_b, LinkProfile b_to_a, std::uint64_t seed)
      : a_(config), b_(config), a_to_b_(a_to_b, seed), b_to_a_(b_to_a, seed * 7919 + 1) {}

  Endpoint& a() { return a_; }
  Endpoint& b() { return b_; }
  SimLink<WireFrame>& a_to_b() { return a_to_b_; }
  SimLink<WireFrame>& b_to_a() { return b_to_a_; }
  ArqTime now() const { return now_; }

  // Both connections broke and were re-established (reliable-carrier mode).
  void reset_carrier() {
    a_to_b_.cut();
    b_to_a_.cut();
    a_.arq.carrier_reset(now_);
    b_.arq.carrier_reset(now_);
  }

  // Runs the engine loop until `done` holds or `limit` of fake time passes; true if done.
  bool run_until(const std::function<bool()>& done, ArqDuration limit) {
    const ArqTime end = now_ + limit;
    // A loop that never lets fake time pass would hang the test: bound it.
    for (std::uint64_t turn = 0; turn < kMaxTurns; ++turn) {
      step(a_, a_to_b_);
      step(b_, b_to_a_);
      if (done()) return true;
      const auto next = next_event();
      if (!next || *next > end) {
        now_ = std::max(now_, end);  // nothing happens until then
        return false;
      }
      now_ = std::max(now_, *next);
      receive(b_, a_to_b_.arrivals(now_));
      receive(a_, b_to_a_.arrivals(now_));
    }
    return false;
  }

  bool run_until_all_delivered(ArqDuration limit) {
    return run_until([this] { return everything_delivered(a_, b_) && everything_delivered(b_, a_); }, limit);
  }

  // Advances the fake clock without running anything (a silent period).
  void advance(ArqDuration by) { now_ += by; }

 private:
  static bool everything_delivered(const Endpoint& from, const Endpoint& to) {
    return to.delivered.size() == from.outbox.size() && from.arq.all_acknowledged();
  }

  // What an engine does for one endpoint on each loop turn: timers, new messages, frames, ACKs.
  void step(Endpoint& end, SimLink<WireFrame>& out) {
    end.arq.on_timer(now_);
    while (end.next_outbox < end.outbox.size()) {
      if (!end.arq.can_accept(end.outbox[end.next_outbox].size())) {
        ++end.window_stalls;
        break;
      }
      end.arq.submit(end.outbox[end.next_outbox++]);
    }
    const ArqStats stats = end.arq.stats();
    end.max_in_flight = std::max(end.max_in_flight, stats.in_flight_messages);
    end.max_in_flight_bytes = std::max(end.max_in_flight_bytes, stats.in_flight_bytes);
    while (auto frame = end.arq.poll_transmit(now_)) {
      out.send(WireData{frame->seq, ArqPayload(frame->payload.begin(), frame->payload.end())}, now_);
    }
    if (auto ack = end.arq.poll_ack(now_)) out.send(*ack, now_);
  }

  void receive(Endpoint& end, std::vector<WireFrame> frames) {
    for (WireFrame& frame : frames) {
      if (auto* data = std::get_if<WireData>(&frame)) {
        if (!end.arq.on_data(data->seq, std::move(data->payload), now_)) end.data_refused = true;
      } else if (!end.arq.on_ack(std::get<ArqAck>(frame), now_)) {
        end.ack_rejected = true;
      }
    }
    const ArqStats stats = end.arq.stats();
    end.max_held = std::max(end.max_held, stats.held_out_of_order_messages);
    end.max_held_bytes = std::max(end.max_held_bytes, stats.held_out_of_order_bytes);
    while (auto delivery = end.arq.receive()) end.delivered.push_back(std::move(delivery->payload));
  }

  std::optional<ArqTime> next_event() const {
    std::optional<ArqTime> next;
    for (auto candidate : {a_to_b_.next_arrival(), b_to_a_.next_arrival(), a_.arq.next_deadline(),
                           b_.arq.next_deadline()}) {
      if (candidate && (!next || *candidate < *next)) next = candidate;
    }
    return next;
  }

  static constexpr std::uint64_t kMaxTurns = 10'000'000;

  Endpoint a_, b_;
  SimLink<WireFrame> a_to_b_, b_to_a_;
  ArqTime now_{};
};

// Queues `count` test messages at an endpoint, message i with (i * 37) % (max_filler + 1) filler bytes.
inline void queue_messages(SimSession::Endpoint& end, std::size_t count, std::size_t max_filler) {
  const std::size_t first = end.outbox.size();
  for (std::size_t i = first; i < first + count; ++i) end.outbox.push_back(make_message(i, (i * 37) % (max_filler + 1)));
}

// What `from` queued reached `to` exactly once, in order, byte for byte.
inline bool delivered_exactly(const SimSession::Endpoint& from, const SimSession::Endpoint& to) {
  return to.delivered == from.outbox;
}

}  // namespace lp::test
