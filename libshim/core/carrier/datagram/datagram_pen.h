// DatagramPen: datagrams that arrived before their session could open them, held for a moment.
// Pure: the caller passes the time (datagram_port.h does the I/O).
//
// A dialler on the datagram carrier sends its first DATA datagrams with its AUTH and IDENTIFY
// (docs/engine/datagram-carrier.md, "Datagrams as 0.5-RTT data"), on another socket, so the acceptor may read
// them before the IDENTIFY that brings their keys. Such a datagram, from the address of a
// connection still in its handshake, waits here until that session's keys are installed, then goes
// to it in arrival order. Anybody can send a datagram, so the pen is small and short-lived: what
// does not fit, or waits too long, is dropped and counted (the dialler's ARQ re-sends it).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "carrier/datagram/udp_carrier.h"  // DatagramAddress

namespace lp {

class DatagramPen {
 public:
  using Clock = std::chrono::steady_clock;
  // The datagram carrier's first window is 96 datagrams (pacer_tuning.h, kInitialWindowBytes):
  // room for two diallers' first flights at once; beyond, the ARQ re-sends.
  static constexpr std::size_t kMaxDatagrams = 192;
  // At most this many bytes (192 full datagrams of 1472 bytes: 283 KB), whatever their count.
  static constexpr std::size_t kMaxBytes = kMaxDatagrams * 1472;
  // A datagram travels with the IDENTIFY it overtook: it waits for one turn of the acceptor's loop,
  // or for TCP to re-send a lost IDENTIFY segment (its minimum RTO of 200 ms plus the round trip:
  // 740 ms at 540 ms). Longer and the ARQ's own re-send comes as soon.
  static constexpr Clock::duration kHoldTime = std::chrono::milliseconds(1000);

  struct Counters {
    std::uint64_t held = 0;        // taken in
    std::uint64_t released = 0;    // handed to their session
    std::uint64_t expired = 0;     // dropped after kHoldTime
    std::uint64_t overflowed = 0;  // dropped: the pen was full
  };

  // Holds a copy of `bytes` from `from`, which the kernel received at `arrival_ns`
  // (UdpCarrier::Sink); false (counted) if the pen is full.
  bool hold(const DatagramAddress& from, std::span<const std::byte> bytes, std::int64_t arrival_ns,
            Clock::time_point now);
  struct Released {
    std::vector<std::byte> bytes;
    std::int64_t arrival_ns;
  };
  // Takes the datagrams held from `from`, in arrival order (expired ones are dropped first).
  std::vector<Released> release(const DatagramAddress& from, Clock::time_point now);
  // Drops what waited longer than kHoldTime.
  void expire(Clock::time_point now);

  bool empty() const { return held_.empty(); }
  std::size_t size() const { return held_.size(); }
  std::size_t bytes() const { return bytes_; }
  const Counters& counters() const { return counters_; }

 private:
  struct Held {
    DatagramAddress from;
    Clock::time_point arrived;
    std::int64_t arrival_ns;
    std::vector<std::byte> bytes;
  };
  std::deque<Held> held_;  // arrival order
  std::size_t bytes_ = 0;
  Counters counters_;
};

}  // namespace lp
