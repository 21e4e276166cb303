#include "link_model.h"

#include <algorithm>
#include <cmath>

namespace lp::netem {

namespace {

// Upper bound on the bytes travelling through one direction's delay line. It bounds the emulator's
// memory when there is no rate limit (and so no queue): 128 MiB holds 1 Gbit/s for a full second.
constexpr std::uint64_t kMaxBytesInFlight = 128ull << 20;

constexpr double kNanosecondsPerSecond = 1e9;
constexpr double kBitsPerByte = 8;

}  // namespace

LinkModel::LinkModel(const LinkParameters& parameters, std::uint64_t seed)
    : parameters_(parameters),
      loss_(parameters.loss, seed),
      // A separate stream for jitter: changing the loss setting does not change the delays drawn.
      jitter_random_(seed ^ 0x9e3779b97f4a7c15ull),
      jitter_nanoseconds_(0.0, static_cast<double>(parameters.jitter.count())) {}

bool LinkModel::arrives_later(const InFlight& a, const InFlight& b) {
  if (a.arrival != b.arrival) return a.arrival > b.arrival;
  return a.sequence > b.sequence;
}

Nanoseconds LinkModel::serialisation_time(std::size_t bytes) const {
  if (parameters_.rate_bits_per_second <= 0) return Nanoseconds{0};
  return Nanoseconds{static_cast<std::int64_t>(
      std::llround(bytes * kBitsPerByte * kNanosecondsPerSecond / parameters_.rate_bits_per_second))};
}

Nanoseconds LinkModel::queue_capacity_time() const {
  const QueueLimit& queue = parameters_.queue;
  if (queue.unit == QueueLimit::Unit::kTime) return queue.time;
  return serialisation_time(queue.bytes);
}

Nanoseconds LinkModel::propagation_delay() {
  if (parameters_.jitter.count() == 0) return parameters_.delay;
  const auto jittered = parameters_.delay.count() + std::llround(jitter_nanoseconds_(jitter_random_));
  return Nanoseconds{std::max<std::int64_t>(0, jittered)};  // a packet cannot arrive before it left
}

std::uint64_t LinkModel::queued_bytes(Nanoseconds now) const {
  if (parameters_.rate_bits_per_second <= 0 || link_free_at_ <= now) return 0;
  const double backlog_seconds = static_cast<double>((link_free_at_ - now).count()) / kNanosecondsPerSecond;
  return static_cast<std::uint64_t>(backlog_seconds * parameters_.rate_bits_per_second / kBitsPerByte);
}

LinkModel::Verdict LinkModel::offer(Nanoseconds now, Packet packet) {
  // The FIFO in front of the rate limiter: the backlog (time until the limiter is free) plus this
  // packet's own serialisation must fit in the queue's capacity, else the packet is tail-dropped.
  const Nanoseconds start = std::max(now, link_free_at_);
  const Nanoseconds transmit = serialisation_time(packet.size());
  const bool rate_limited = parameters_.rate_bits_per_second > 0;
  if ((rate_limited && (start - now) + transmit > queue_capacity_time()) ||
      bytes_in_flight_ + packet.size() > kMaxBytesInFlight) {
    ++counters_.dropped_by_queue;
    return Verdict::kDroppedByQueue;
  }
  link_free_at_ = start + transmit;

  if (loss_.lose_next_packet()) {
    ++counters_.dropped_by_loss;
    return Verdict::kDroppedByLoss;
  }

  Nanoseconds arrival = link_free_at_ + propagation_delay();
  if (!parameters_.allow_reordering) arrival = std::max(arrival, latest_arrival_);
  latest_arrival_ = std::max(latest_arrival_, arrival);

  bytes_in_flight_ += packet.size();
  in_flight_.push_back(InFlight{arrival, next_sequence_++, std::move(packet)});
  std::push_heap(in_flight_.begin(), in_flight_.end(), arrives_later);
  return Verdict::kAccepted;
}

std::optional<Nanoseconds> LinkModel::next_arrival() const {
  if (in_flight_.empty()) return std::nullopt;
  return in_flight_.front().arrival;
}

std::optional<Packet> LinkModel::take_arrived(Nanoseconds now) {
  if (in_flight_.empty() || in_flight_.front().arrival > now) return std::nullopt;
  std::pop_heap(in_flight_.begin(), in_flight_.end(), arrives_later);
  Packet packet = std::move(in_flight_.back().packet);
  in_flight_.pop_back();
  bytes_in_flight_ -= packet.size();
  ++counters_.forwarded_packets;
  counters_.forwarded_bytes += packet.size();
  return packet;
}

}  // namespace lp::netem
