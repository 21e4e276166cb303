// Fuzz target: the ARQ (libshim/core/arq*) fed random frame sequences, as a peer's DATA and ACK
// frames reach it: sequence numbers old, new, repeated, far ahead or near 2^64; ACKs that
// acknowledge anything, with any SACK ranges; time jumps, carrier resets, delayed ACKs, both modes.
// Invariants checked beyond "no crash, no sanitizer report":
//   - the receiver hands out messages 0, 1, 2, ... exactly once, in order, each with the content
//     that was sent under its sequence number;
//   - every ACK it makes is well formed: cumulative = next expected, SACK ranges ascending,
//     disjoint, above the cumulative point, at most max_sack_ranges;
//   - the sender never counts more acknowledged or in flight than was submitted, and refuses an ACK
//     of a message never transmitted without changing state.
#include <algorithm>
#include <chrono>
#include <cstring>

#include "arq/arq.h"
#include "fuzz_input.h"

namespace {

using namespace std::chrono_literals;

// The content sent under a sequence number: 8 bytes of it, then seq % 40 bytes of a pattern.
lp::ArqPayload payload_for(std::uint64_t seq) {
  lp::ArqPayload payload(8 + seq % 40);
  for (int i = 0; i < 8; ++i) payload[i] = static_cast<std::byte>(seq >> (56 - 8 * i));
  for (std::size_t i = 8; i < payload.size(); ++i) payload[i] = static_cast<std::byte>(seq * 31 + i);
  return payload;
}

lp::ArqConfig config_from(lp::fuzz::FuzzInput& input) {
  lp::ArqConfig config;
  const std::uint8_t flags = input.u8();
  config.mode = flags & 1 ? lp::ArqMode::kDatagram : lp::ArqMode::kReliableCarrier;
  // Small windows, so that the limits are reached.
  config.send_window_messages = 1 + input.u8() % 64;
  config.send_window_bytes = 1 + input.u16();
  config.receive_window_messages = 1 + input.u8() % 64;
  config.receive_window_bytes = 1 + input.u16();
  config.max_sack_ranges = 1 + input.u8() % 16;
  config.ack_delay = flags & 2 ? lp::ArqDuration(20ms) : lp::ArqDuration::zero();
  config.ack_every_messages = 1 + input.u8() % 4;
  config.fast_retransmit_threshold = input.u8() % 4;
  config.max_transmissions = input.u8() % 8;
  return config;
}

void check_ack(const lp::ArqAck& ack, const lp::ArqConfig& config, std::uint64_t next_expected) {
  LP_FUZZ_CHECK(ack.cumulative == next_expected);
  LP_FUZZ_CHECK(ack.sack.size() <= config.max_sack_ranges);
  std::uint64_t floor = ack.cumulative;
  for (const auto& range : ack.sack) {
    LP_FUZZ_CHECK(range.begin > floor);  // a hole before every range: held messages are above it
    LP_FUZZ_CHECK(range.end > range.begin);
    floor = range.end;
  }
}

class Harness {
 public:
  explicit Harness(const lp::ArqConfig& config) : config_(config), arq_(config) {}

  void run(lp::fuzz::FuzzInput& input) {
    while (!input.empty()) {
      switch (input.u8() % 8) {
        case 0: data_near(input); break;
        case 1: data_anywhere(input); break;
        case 2: ack(input); break;
        case 3: drain(); break;
        case 4: now_ += std::chrono::milliseconds(input.u16() % 5000); break;
        case 5: arq_.carrier_reset(now_); break;
        case 6: submit_and_transmit(input); break;
        case 7: poll_ack(); break;
      }
      check_sender();
    }
    drain();
    poll_ack();
  }

 private:
  // A DATA frame close to what the receiver expects: old, current, or a little ahead.
  void data_near(lp::fuzz::FuzzInput& input) {
    const std::uint64_t base = expected_;
    const int offset = static_cast<int>(input.u8() % 96) - 16;
    if (offset < 0 && base < static_cast<std::uint64_t>(-offset)) return;
    const std::uint64_t seq = base + offset;
    // false: refused as too far ahead (the engine would close the connection); nothing is held.
    static_cast<void>(arq_.on_data(seq, payload_for(seq), now_));
  }

  // A DATA frame with any sequence number at all (a peer may claim anything).
  void data_anywhere(lp::fuzz::FuzzInput& input) {
    const std::uint64_t seq = input.u64();
    static_cast<void>(arq_.on_data(seq, payload_for(seq), now_));
  }

  // An ACK with fuzzer-chosen fields, relative to what was transmitted or not.
  void ack(lp::fuzz::FuzzInput& input) {
    lp::ArqAck ack;
    const std::uint8_t shape = input.u8();
    ack.cumulative = shape & 1 ? input.u64() : acked_floor_ + input.u8() % 48;
    ack.window_messages = input.u8() % 80;
    const std::size_t ranges = input.u8() % 20;
    std::uint64_t at = ack.cumulative;
    for (std::size_t i = 0; i < ranges; ++i) {
      lp::ArqSackRange range;
      if (shape & 2) {
        range.begin = input.u64();
        range.end = input.u64();
      } else {
        range.begin = at + input.u8() % 8;
        range.end = range.begin + input.u8() % 8;
        at = range.end;
      }
      ack.sack.push_back(range);
    }
    const lp::ArqStats before = arq_.stats();
    if (arq_.on_ack(ack, now_)) {
      acked_floor_ = std::max(acked_floor_, ack.cumulative);
    } else {
      const lp::ArqStats after = arq_.stats();
      // A refused ACK changes nothing the sender holds.
      LP_FUZZ_CHECK(after.in_flight_messages == before.in_flight_messages);
      LP_FUZZ_CHECK(after.messages_acked == before.messages_acked);
    }
  }

  void submit_and_transmit(lp::fuzz::FuzzInput& input) {
    const std::size_t count = input.u8() % 8;
    for (std::size_t i = 0; i < count; ++i) {
      const std::size_t bytes = 1 + input.u8();
      if (!arq_.can_accept(bytes)) break;
      arq_.submit(lp::ArqPayload(bytes, std::byte{0x5a}));
      ++submitted_;
    }
    const std::size_t sends = input.u8() % 16;
    for (std::size_t i = 0; i < sends; ++i) {
      auto frame = arq_.poll_transmit(now_);
      if (!frame) break;
      LP_FUZZ_CHECK(frame->seq < submitted_);
    }
  }

  void drain() {
    while (auto delivery = arq_.receive()) {
      LP_FUZZ_CHECK(delivery->seq == expected_);
      LP_FUZZ_CHECK(delivery->payload == payload_for(delivery->seq));
      ++expected_;
    }
  }

  void poll_ack() {
    drain();
    if (auto ack = arq_.poll_ack(now_)) check_ack(*ack, config_, expected_);
    check_ack(arq_.make_ack(), config_, expected_);
  }

  void check_sender() {
    const lp::ArqStats stats = arq_.stats();
    LP_FUZZ_CHECK(stats.messages_submitted == submitted_);
    LP_FUZZ_CHECK(stats.messages_acked <= submitted_);
    // In flight counts every message above the cumulative point, SACKed ones too.
    LP_FUZZ_CHECK(stats.in_flight_messages <= submitted_);
    LP_FUZZ_CHECK(stats.messages_delivered <= stats.messages_received);
  }

  lp::ArqConfig config_;
  lp::Arq arq_;
  lp::ArqTime now_ = lp::ArqTime{} + std::chrono::hours(1);
  std::uint64_t expected_ = 0;      // next sequence number the receiver must hand out
  std::uint64_t submitted_ = 0;
  std::uint64_t acked_floor_ = 0;   // highest cumulative point the sender accepted
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  lp::fuzz::FuzzInput input(data, size);
  const lp::ArqConfig config = config_from(input);
  Harness harness(config);
  harness.run(input);
  return 0;
}
