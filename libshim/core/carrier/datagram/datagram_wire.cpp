#include "carrier/datagram/datagram_wire.h"

#include <cstring>
#include <exception>

namespace lp {
namespace {

constexpr std::byte kMagic0{'L'}, kMagic1{'D'};
constexpr std::uint8_t kDatagramVersion = 2;
// No frame inside a datagram is longer (the UDP maximum).
constexpr std::size_t kMaxFramePayload = 65536;

void put_u64(std::byte* at, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) at[i] = std::byte(value >> (56 - 8 * i));
}

std::uint64_t get_u64(const std::byte* at) {
  std::uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value = value << 8 | std::to_integer<std::uint64_t>(at[i]);
  return value;
}

}  // namespace

bool ReplayWindow::fresh(std::uint64_t sequence) const {
  if (!any_ || sequence > highest_) return true;
  if (highest_ - sequence >= kSize) return false;  // too old to tell: refused
  return (seen_[(sequence % kSize) / 64] >> (sequence % 64) & 1) == 0;
}

void ReplayWindow::mark(std::uint64_t sequence) {
  if (!any_ || sequence > highest_) {
    // Clear the bits of the sequences the window slides past.
    const std::uint64_t first = any_ ? highest_ + 1 : sequence;
    if (sequence - first >= kSize) {
      seen_.fill(0);
    } else {
      for (std::uint64_t s = first; s <= sequence; ++s) seen_[(s % kSize) / 64] &= ~(std::uint64_t{1} << (s % 64));
    }
    highest_ = sequence;
    any_ = true;
  }
  seen_[(sequence % kSize) / 64] |= std::uint64_t{1} << (sequence % 64);
}

DatagramCrypto::DatagramCrypto(const TrafficKeys& keys, bool outgoing, Protection protection)
    : sealer_(std::make_unique<FrameCipher>(outgoing ? keys.dialler_to_acceptor : keys.acceptor_to_dialler, protection,
                                            FrameCipher::Use::kSeal)),
      opener_(std::make_unique<FrameCipher>(outgoing ? keys.acceptor_to_dialler : keys.dialler_to_acceptor, protection,
                                            FrameCipher::Use::kOpen)) {}

void DatagramCrypto::seal(std::vector<std::byte>& datagram) {
  const std::uint64_t sequence = next_sequence_++;
  datagram[0] = kMagic0;
  datagram[1] = kMagic1;
  datagram[2] = std::byte{kDatagramVersion};
  datagram[3] = std::byte{0};
  put_u64(datagram.data() + 4, sequence);
  sealer_->seal_frame_at(datagram, kDatagramHeaderSize, sequence);
}

DatagramCrypto::Opened DatagramCrypto::open(std::span<std::byte> datagram) {
  if (datagram.size() < kDatagramHeaderSize + kFrameHeaderSize + kTagSize) {
    return {Verdict::kMalformed, "datagram of " + std::to_string(datagram.size()) + " bytes is too short", {}};
  }
  if (datagram[0] != kMagic0 || datagram[1] != kMagic1 || datagram[2] != std::byte{kDatagramVersion}) {
    return {Verdict::kMalformed, "not a LongPipe datagram (magic or version)", {}};
  }
  const std::uint64_t sequence = get_u64(datagram.data() + 4);
  if (!replay_.fresh(sequence)) return {Verdict::kReplayed, {}, {}};
  // The frame: exactly one, filling the rest of the datagram.
  const std::span<std::byte> body = datagram.subspan(kDatagramHeaderSize);
  std::optional<FrameView> frame;
  try {
    FrameReader reader(kMaxFramePayload);
    reader.set_tag_size(kTagSize);
    auto area = reader.write_area(body.size());
    std::memcpy(area.data(), body.data(), body.size());
    reader.commit(body.size());
    frame = reader.next();
    if (!frame || reader.has_partial_frame()) return {Verdict::kMalformed, "datagram does not hold exactly one frame", {}};
    // Point the view into the datagram itself (the reader goes with this scope).
    const std::size_t payload_at = kFrameHeaderSize;
    frame = FrameView{frame->type, body.subspan(payload_at, frame->payload.size()), body.first(kFrameHeaderSize),
                      body.subspan(payload_at + frame->payload.size(), kTagSize)};
  } catch (const std::exception& e) {  // MalformedFrame
    return {Verdict::kMalformed, e.what(), {}};
  }
  if (!opener_->open_at(sequence, frame->header, frame->payload, frame->tag)) return {Verdict::kUnauthentic, {}, {}};
  replay_.mark(sequence);
  return {Verdict::kOpened, {}, frame};
}

}  // namespace lp
