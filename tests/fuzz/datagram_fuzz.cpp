// Fuzz target: the datagram carrier's receive path (libshim/core/datagram_wire.*, datagram_channel.*,
// and behind them frame_cipher, the frame decoders, the ARQ, the pacer and the tail-FEC receiver),
// which reads every UDP datagram anyone sends to the port. A DatagramChannel with its ARQ is keyed
// as the engine keys it (one or two connections' datagram keys, derived as the handshake derives them); the
// input is a mode byte (bit 0: integrity only; bit 1: two connections) and a list of operations:
//   - a raw datagram (a stranger's bytes, taken as they are);
//   - a frame the peer seals: the fuzzer chooses its type and payload, the harness seals it under
//     either connection's keys with the peer's next sequence number, as a peer holding the keys
//     would, so the parsers behind the authentication see the fuzzer's bytes; optionally one byte
//     altered in transit, or the datagram delivered twice;
//   - structured DATA, ACK and REPAIR frames the peer seals (small sequence numbers, so that units,
//     holes, acknowledgements and repair blocks meet);
//   - a message submitted to send, time passing with a pump (our own DATA, ACK and REPAIR
//     datagrams), the channel's reassembly of received units into messages.
// Beyond "no crash, no sanitizer report": on_datagram never throws; a stranger's datagram is never
// accepted; the peer's sealed datagram is never unauthentic, a second copy of an accepted one is a
// replay; an altered one is never accepted (but for the reserved header byte, which nothing
// reads); every datagram we send opens under the peer's keys and decodes; no reassembled message
// exceeds the limit.
#include <chrono>
#include <cstring>
#include <optional>
#include <vector>

#include "arq/arq.h"
#include "carrier/datagram/datagram_channel.h"
#include "carrier/datagram/datagram_wire.h"
#include "fuzz_input.h"
#include "wire/wire_frame.h"

namespace {

using Verdict = lp::DatagramChannel::Verdict;

constexpr std::size_t kSmallMaxMessage = 4096;
constexpr std::size_t kReservedByte = 3;  // magic "LD" | version | reserved | sequence (datagram_wire.h)  // LONGPIPE_MAX_MESSAGE: reassembly's limit reached often

const lp::TrafficKeys& keys(lp::Protection protection, int which) {
  static const auto derive = [](lp::Protection p, std::uint8_t nonce) {
    const auto traffic = lp::derive_traffic_keys("fuzzing key", std::vector<std::byte>(lp::kNonceSize, std::byte{nonce}),
                                                 std::vector<std::byte>(lp::kNonceSize, std::byte{2}), p);
    return lp::derive_datagram_keys(traffic, p);
  };
  static const lp::TrafficKeys encrypt[2] = {derive(lp::Protection::kEncrypt, 1), derive(lp::Protection::kEncrypt, 3)};
  static const lp::TrafficKeys integrity[2] = {derive(lp::Protection::kIntegrityOnly, 1),
                                               derive(lp::Protection::kIntegrityOnly, 3)};
  return protection == lp::Protection::kEncrypt ? encrypt[which] : integrity[which];
}

const lp::Config& config() {
  static const lp::Config instance = [] {
    lp::Config c;
    c.max_message = kSmallMaxMessage;
    return c;
  }();
  return instance;
}

lp::ArqConfig arq_config() {
  lp::ArqConfig arq;
  lp::configure_for_datagrams(arq, config());
  return arq;
}

// A frame of `type` around `payload`, in a datagram the peer seals under `crypto`.
std::vector<std::byte> sealed(lp::DatagramCrypto& crypto, std::uint8_t type, std::span<const std::byte> payload) {
  std::vector<std::byte> datagram;
  lp::begin_datagram(datagram);
  const std::uint32_t length = static_cast<std::uint32_t>(payload.size());
  const std::uint8_t header[lp::kFrameHeaderSize] = {0x4C, 0x50, lp::kProtocolVersion, type,
                                                     std::uint8_t(length >> 24), std::uint8_t(length >> 16),
                                                     std::uint8_t(length >> 8), std::uint8_t(length)};
  for (std::uint8_t b : header) datagram.push_back(std::byte{b});
  datagram.insert(datagram.end(), payload.begin(), payload.end());
  crypto.seal(datagram);
  return datagram;
}

// Our own datagram: it opens under the peer's keys and its frame decodes.
void check_ours(lp::DatagramCrypto& peer, std::vector<std::byte> datagram) {
  const lp::DatagramCrypto::Opened opened = peer.open(datagram);
  LP_FUZZ_CHECK(opened.verdict == lp::DatagramCrypto::Verdict::kOpened);
  switch (opened.frame->type) {
    case lp::FrameType::kData: lp::decode_data(opened.frame->payload, lp::kDatagramUnit); return;
    case lp::FrameType::kAck: lp::decode_ack(opened.frame->payload); return;
    case lp::FrameType::kRepair: lp::decode_repair(opened.frame->payload); return;
    default: LP_FUZZ_CHECK(!"we sent a frame of a type datagrams do not carry");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  lp::fuzz::FuzzInput input(data, size);
  const std::uint8_t mode = input.u8();
  const lp::Protection protection = mode & 1 ? lp::Protection::kIntegrityOnly : lp::Protection::kEncrypt;
  const bool two_connections = mode & 2;
  lp::Arq arq(arq_config());
  lp::DatagramChannel channel(config());
  // Our side accepted the connections (one, or two); we seal under the first. The peer dialled
  // them. Ciphers cost more to set up than most inputs take: only those used are made.
  channel.add_keys(1, keys(protection, 0), false, protection);
  if (two_connections) channel.add_keys(2, keys(protection, 1), false, protection);
  LP_FUZZ_CHECK(channel.seal_with(1));
  std::optional<lp::DatagramCrypto> peer[2];
  std::optional<lp::DatagramCrypto> our_side;  // opens what we send (the peer's view)
  const auto peer_under = [&](int which) -> lp::DatagramCrypto& {
    if (!peer[which]) peer[which].emplace(keys(protection, which), true, protection);
    return *peer[which];
  };

  lp::ArqTime now{};
  std::int64_t arrival_ns = 1'000'000'000;
  std::string why;
  std::vector<std::byte> payload;
  const auto deliver = [&](std::vector<std::byte> datagram) {
    arrival_ns += 1000;
    return channel.on_datagram(arq, datagram, arrival_ns, now, why);
  };
  while (!input.empty()) {
    const std::uint8_t op = input.u8();
    const std::uint8_t arg = input.u8();
    lp::DatagramCrypto& sealer = peer_under(two_connections ? arg >> 7 : 0);
    payload.clear();
    switch (op % 8) {
      case 0: {  // a stranger's datagram
        const auto bytes = input.bytes(input.u16() % (lp::kMaxDatagramSize + 64));
        LP_FUZZ_CHECK(deliver({bytes.begin(), bytes.end()}) != Verdict::kAccepted);
        break;
      }
      case 1: case 2: case 3: case 4: {  // a frame the peer seals
        if (op % 8 == 1) {  // any type, any payload
          const auto bytes = input.bytes(input.u16() % lp::kMaxDatagramSize);
          payload.assign(bytes.begin(), bytes.end());
        } else if (op % 8 == 2) {  // DATA: sequence near the start, a unit (flags byte, bytes)
          const std::uint64_t sequence = input.u8();
          lp::encode_data(payload, sequence, input.bytes(input.u16() % (lp::kDatagramUnit + 8)));
        } else if (op % 8 == 3) {  // ACK of small sequence numbers
          lp::AckFrame ack;
          ack.cumulative = input.u8();
          ack.window_messages = input.u16();
          ack.arrivals.newest_ns = input.u8() ? static_cast<std::uint64_t>(arrival_ns) + input.u16() : 0;
          ack.arrivals.first_ns = input.u16();
          ack.arrivals.count = input.u8();
          std::uint64_t at = ack.cumulative;
          for (std::size_t n = input.u8() % 8; n > 0; --n) {
            const std::uint64_t begin = at + 1 + input.u8() % 16;
            at = begin + 1 + input.u8() % 16;
            ack.ranges.push_back({begin, at});
          }
          lp::encode_ack(payload, ack);
        } else {  // REPAIR of a block of small sequence numbers
          const std::uint64_t first = input.u8();
          const std::size_t count = 1 + input.u8() % 16, index = input.u8() % 8;
          std::vector<std::byte> symbol(3 + input.u16() % 256);
          const auto bytes = input.bytes(symbol.size());
          std::copy(bytes.begin(), bytes.end(), symbol.begin());
          lp::encode_repair(payload, {first, count, index, symbol});
        }
        // The encoders wrote a frame header: the harness writes its own (any type for op 1).
        const std::uint8_t type = op % 8 == 1 ? arg & 0x7f : static_cast<std::uint8_t>(payload[3]);
        if (op % 8 != 1) payload.erase(payload.begin(), payload.begin() + lp::kFrameHeaderSize);
        std::vector<std::byte> datagram = sealed(sealer, type, payload);
        if (arg & 0x40 && op % 8 != 1) {  // one byte altered in transit: never accepted
          const std::size_t at = input.u16() % datagram.size();
          datagram[at] ^= static_cast<std::byte>(1 + input.u8() % 255);
          // Except the reserved header byte: read by nobody, so not authenticated (datagram_wire.h).
          LP_FUZZ_CHECK(deliver(datagram) != Verdict::kAccepted || at == kReservedByte);
          break;
        }
        const Verdict verdict = deliver(datagram);
        LP_FUZZ_CHECK(verdict != Verdict::kUnauthentic && verdict != Verdict::kReplayed);
        if (verdict == Verdict::kAccepted && arg & 0x20) LP_FUZZ_CHECK(deliver(datagram) == Verdict::kReplayed);
        break;
      }
      case 5: {  // the application sends a message (packed: at least its trailer)
        const std::size_t length = lp::kMessageTrailerSize + input.u16() % (3 * lp::kDatagramUnit);
        if (channel.can_accept(arq, length)) channel.submit(arq, lp::ArqPayload(length, std::byte{arg}));
        break;
      }
      case 6: {  // time passes; what we send goes to the peer
        now += std::chrono::microseconds(std::uint64_t{arg} << (input.u8() % 16));
        channel.pump(arq, now);
        (void)channel.next_deadline(arq, now);
        if (!channel.outgoing().empty() && !our_side) our_side.emplace(keys(protection, 0), true, protection);
        for (auto& datagram : channel.outgoing()) check_ours(*our_side, std::move(datagram));
        channel.outgoing().clear();
        break;
      }
      case 7: {  // the application reads
        std::vector<lp::ArqPayload> messages;
        (void)channel.take_received(arq, messages);
        for (const auto& message : messages) LP_FUZZ_CHECK(message.size() <= kSmallMaxMessage + lp::kMessageTrailerSize);
        break;
      }
    }
  }
  (void)channel.statistics();
  return 0;
}
