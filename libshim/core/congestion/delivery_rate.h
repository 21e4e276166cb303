// Delivery-rate sampling (BBR's "delivered", "delivered_time", "first_sent_time"; ngtcp2_rst):
// what each datagram finds at its send, and the rate its ACK then measures. Pure.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>

#include "arq/arq_types.h"

namespace lp {

class DeliveryRateSampler {
 public:
  // The state a datagram leaves in, kept with it until its ACK.
  struct AtSend {
    std::uint64_t delivered = 0;     // delivered() when it left
    ArqTime delivered_time{};        // when delivered() last grew before it left
    ArqTime first_sent_time{};       // send time of the datagram most recently delivered then
    bool application_limited = false;
  };

  // A datagram leaves with `in_flight` bytes already out (0: the interval starts now).
  AtSend on_sent(ArqTime now, std::size_t in_flight) {
    if (in_flight == 0) first_sent_time_ = delivered_time_ = now;
    return {delivered_, delivered_time_, first_sent_time_, application_limited_until_ != 0};
  }
  void on_delivered(ArqTime now, std::size_t bytes) {
    delivered_ += bytes;
    delivered_time_ = now;
  }
  // The newest datagram an ACK delivered left at `sent_at`.
  void on_newest_delivered(ArqTime sent_at) {
    first_sent_time_ = sent_at;
    if (application_limited_until_ != 0 && delivered_ > application_limited_until_) application_limited_until_ = 0;
  }
  // The rate delivered over that datagram's flight: the longer of its send and ACK intervals (so
  // that neither a burst of sends nor a burst of ACKs inflates it), none if shorter than `floor`.
  std::optional<double> rate(ArqTime now, ArqTime sent_at, const AtSend& at_send, std::optional<ArqDuration> floor) const {
    const auto interval = std::max(sent_at - at_send.first_sent_time, now - at_send.delivered_time);
    if (interval <= ArqTime::duration::zero() || (floor && interval < *floor)) return std::nullopt;
    return static_cast<double>(delivered_ - at_send.delivered) / std::chrono::duration<double>(interval).count();
  }
  // Nothing more to send: samples until `in_flight` more bytes are delivered measure the application.
  void on_application_limited(std::size_t in_flight) {
    application_limited_until_ = std::max<std::uint64_t>(delivered_ + in_flight, 1);
  }
  bool application_limited() const { return application_limited_until_ != 0; }
  std::uint64_t delivered() const { return delivered_; }

 private:
  std::uint64_t delivered_ = 0;
  ArqTime delivered_time_{};
  ArqTime first_sent_time_{};
  std::uint64_t application_limited_until_ = 0;  // a delivered() mark; 0 = not limited
};

}  // namespace lp
