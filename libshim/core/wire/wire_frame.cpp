#include "wire/wire_frame.h"

#include <cstdint>
#include <cstring>
#include <limits>

namespace lp {
namespace {

constexpr std::size_t kAckFixedSize = 8 + 4 + (8 + 4 + 2) + 2;

// Big-endian appends to a byte vector.
class ByteWriter {
 public:
  explicit ByteWriter(std::vector<std::byte>& out) : out_(out) {}
  void u8(std::uint8_t v) { out_.push_back(static_cast<std::byte>(v)); }
  void u16(std::uint16_t v) { put(v, 2); }
  void u32(std::uint32_t v) { put(v, 4); }
  void u64(std::uint64_t v) { put(v, 8); }
  void bytes(std::span<const std::byte> b) { out_.insert(out_.end(), b.begin(), b.end()); }
  void text(const std::string& s) {
    const auto* p = reinterpret_cast<const std::byte*>(s.data());
    out_.insert(out_.end(), p, p + s.size());
  }

 private:
  void put(std::uint64_t v, int size) {
    for (int shift = (size - 1) * 8; shift >= 0; shift -= 8) out_.push_back(static_cast<std::byte>(v >> shift));
  }
  std::vector<std::byte>& out_;
};

// Big-endian reads from a payload; reading past its end throws MalformedFrame.
class ByteReader {
 public:
  ByteReader(std::span<const std::byte> in, const char* what) : in_(in), what_(what) {}
  std::uint8_t u8() { return static_cast<std::uint8_t>(get(1)); }
  std::uint16_t u16() { return static_cast<std::uint16_t>(get(2)); }
  std::uint32_t u32() { return static_cast<std::uint32_t>(get(4)); }
  std::uint64_t u64() { return get(8); }
  std::span<const std::byte> bytes(std::size_t count) {
    need(count);
    auto out = in_.subspan(offset_, count);
    offset_ += count;
    return out;
  }
  std::size_t remaining() const { return in_.size() - offset_; }
  void expect_end() const {
    if (remaining() != 0) {
      throw MalformedFrame(std::string(what_) + " frame has " + std::to_string(remaining()) + " trailing bytes");
    }
  }

 private:
  void need(std::size_t count) const {
    if (count > remaining()) throw MalformedFrame(std::string(what_) + " frame is truncated");
  }
  std::uint64_t get(std::size_t size) {
    need(size);
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < size; ++i) v = (v << 8) | static_cast<std::uint8_t>(in_[offset_ + i]);
    offset_ += size;
    return v;
  }
  std::span<const std::byte> in_;
  const char* what_;
  std::size_t offset_ = 0;
};

// Appends a frame header; the payload follows with `payload_size` bytes.
void begin_frame(std::vector<std::byte>& out, FrameType type, std::size_t payload_size) {
  ByteWriter w(out);
  w.u16(kFrameMagic);
  w.u8(kProtocolVersion);
  w.u8(static_cast<std::uint8_t>(type));
  w.u32(static_cast<std::uint32_t>(payload_size));
}

bool known_type(std::uint8_t type) {
  return type >= static_cast<std::uint8_t>(FrameType::kHello) &&
         type <= static_cast<std::uint8_t>(FrameType::kRepair);
}

// Largest payload a frame of this type can legitimately have, whatever the connection's state.
std::size_t type_payload_limit(FrameType type, std::size_t max_data_payload) {
  switch (type) {
    case FrameType::kHello: return kMaxHandshakePayload;
    case FrameType::kChallenge: return kNonceSize + 2;
    case FrameType::kIdentify: return kIdentifyPayloadSize;
    case FrameType::kAuth: return kMacSize;
    case FrameType::kData: return max_data_payload;
    case FrameType::kAck: return kAckFixedSize + kMaxAckRanges * 16;
    case FrameType::kKeepalive: return 0;
    case FrameType::kClose: return 1 + kMaxCloseText;
    case FrameType::kRepair: return kRepairFixedSize + kMaxRepairSymbol;
  }
  return 0;
}

Protection decode_protection(std::uint8_t value, const char* what) {
  if (value != static_cast<std::uint8_t>(Protection::kEncrypt) &&
      value != static_cast<std::uint8_t>(Protection::kIntegrityOnly)) {
    throw MalformedFrame(std::string(what) + " asks for unknown protection " + std::to_string(value));
  }
  return static_cast<Protection>(value);
}

}  // namespace

const char* frame_type_name(FrameType type) {
  switch (type) {
    case FrameType::kHello: return "HELLO";
    case FrameType::kChallenge: return "CHALLENGE";
    case FrameType::kAuth: return "AUTH";
    case FrameType::kData: return "DATA";
    case FrameType::kAck: return "ACK";
    case FrameType::kKeepalive: return "KEEPALIVE";
    case FrameType::kClose: return "CLOSE";
    case FrameType::kIdentify: return "IDENTIFY";
    case FrameType::kRepair: return "REPAIR";
  }
  return "?";
}

HelloFrame decode_hello(std::span<const std::byte> payload) {
  ByteReader r(payload, "HELLO");
  HelloFrame hello;
  auto nonce = r.bytes(kNonceSize);
  hello.nonce.assign(nonce.begin(), nonce.end());
  hello.stream = r.u8();
  if (hello.stream >= kMaxStreams) {
    throw MalformedFrame("HELLO stream index " + std::to_string(hello.stream) + " is outside 0.." +
                         std::to_string(kMaxStreams - 1));
  }
  hello.protection = decode_protection(r.u8(), "HELLO");
  const std::size_t length = r.u16();
  if (length == 0 || length > kMaxEndpointSize) {
    throw MalformedFrame("HELLO endpoint length " + std::to_string(length) + " is outside 1.." +
                         std::to_string(kMaxEndpointSize));
  }
  auto endpoint = r.bytes(length);
  hello.endpoint.assign(reinterpret_cast<const char*>(endpoint.data()), endpoint.size());
  for (char c : hello.endpoint) {
    if (c <= ' ' || c > '~') throw MalformedFrame("HELLO endpoint has a non-printable character");
  }
  r.expect_end();
  return hello;
}

ChallengeFrame decode_challenge(std::span<const std::byte> payload) {
  ByteReader r(payload, "CHALLENGE");
  ChallengeFrame challenge;
  auto nonce = r.bytes(kNonceSize);
  challenge.nonce.assign(nonce.begin(), nonce.end());
  challenge.protection = decode_protection(r.u8(), "CHALLENGE");
  challenge.carrier_offer = static_cast<std::uint8_t>(r.u8());
  r.expect_end();
  return challenge;
}

std::vector<std::byte> decode_fixed(std::span<const std::byte> payload, std::size_t size, const char* what) {
  ByteReader r(payload, what);
  auto bytes = r.bytes(size);
  r.expect_end();
  return {bytes.begin(), bytes.end()};
}

DataFrame decode_data(std::span<const std::byte> payload, std::size_t max_message) {
  ByteReader r(payload, "DATA");
  DataFrame data;
  data.sequence = r.u64();
  if (r.remaining() < kMessageTrailerSize) throw MalformedFrame("DATA frame is shorter than a message header");
  const std::size_t body = r.remaining() - kMessageTrailerSize;
  if (body > max_message) {
    throw MalformedFrame("DATA body of " + std::to_string(body) + " bytes exceeds LONGPIPE_MAX_MESSAGE (" +
                         std::to_string(max_message) + ")");
  }
  data.message = r.bytes(r.remaining());
  return data;
}

RepairFrame decode_repair(std::span<const std::byte> payload) {
  ByteReader r(payload, "REPAIR");
  RepairFrame repair;
  repair.first_sequence = r.u64();
  repair.data_count = r.u8();
  repair.index = r.u8();
  if (repair.data_count == 0) throw MalformedFrame("REPAIR covers no units");
  if (repair.data_count + repair.index > 255) throw MalformedFrame("REPAIR index beyond the code's 255 symbols");
  if (repair.first_sequence > std::numeric_limits<std::uint64_t>::max() - repair.data_count) throw MalformedFrame("REPAIR block beyond the sequence space");
  // A symbol holds a unit's length (2 bytes) and at least its flags byte.
  if (r.remaining() < 3 || r.remaining() > kMaxRepairSymbol) throw MalformedFrame("REPAIR symbol of a wrong size");
  repair.symbol = r.bytes(r.remaining());
  return repair;
}

AckFrame decode_ack(std::span<const std::byte> payload) {
  ByteReader r(payload, "ACK");
  AckFrame ack;
  ack.cumulative = r.u64();
  ack.window_messages = r.u32();
  ack.arrivals.newest_ns = r.u64();
  ack.arrivals.first_ns = r.u32();
  ack.arrivals.count = r.u16();
  const std::size_t count = r.u16();
  if (count > kMaxAckRanges) throw MalformedFrame("ACK has " + std::to_string(count) + " ranges (limit 256)");
  if (r.remaining() != count * 16) throw MalformedFrame("ACK range count disagrees with the frame length");
  ack.ranges.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    AckRange range{r.u64(), r.u64()};
    if (range.begin < ack.cumulative || range.end <= range.begin) throw MalformedFrame("ACK has an invalid range");
    ack.ranges.push_back(range);
  }
  return ack;
}

CloseFrame decode_close(std::span<const std::byte> payload) {
  ByteReader r(payload, "CLOSE");
  CloseFrame close;
  const auto reason = r.u8();
  if (reason < static_cast<std::uint8_t>(CloseReason::kShutdown) ||
      reason > static_cast<std::uint8_t>(CloseReason::kIdentityRefused)) {
    throw MalformedFrame("CLOSE has unknown reason " + std::to_string(reason));
  }
  close.reason = static_cast<CloseReason>(reason);
  auto text = r.bytes(r.remaining());
  close.text.assign(reinterpret_cast<const char*>(text.data()), text.size());
  for (char& c : close.text) {
    if (c < ' ' || c > '~') c = '?';
  }
  return close;
}

void encode_hello(std::vector<std::byte>& out, std::span<const std::byte> nonce, std::size_t stream,
                  Protection protection, const std::string& endpoint) {
  begin_frame(out, FrameType::kHello, nonce.size() + 1 + 1 + 2 + endpoint.size());
  ByteWriter w(out);
  w.bytes(nonce);
  w.u8(static_cast<std::uint8_t>(stream));
  w.u8(static_cast<std::uint8_t>(protection));
  w.u16(static_cast<std::uint16_t>(endpoint.size()));
  w.text(endpoint);
}

void encode_challenge(std::vector<std::byte>& out, std::span<const std::byte> nonce, Protection protection,
                      std::uint8_t carrier_offer) {
  begin_frame(out, FrameType::kChallenge, nonce.size() + 2);
  ByteWriter w(out);
  w.bytes(nonce);
  w.u8(static_cast<std::uint8_t>(protection));
  w.u8(carrier_offer);
}

void encode_fixed(std::vector<std::byte>& out, FrameType type, std::span<const std::byte> bytes) {
  begin_frame(out, type, bytes.size());
  ByteWriter(out).bytes(bytes);
}

void encode_data(std::vector<std::byte>& out, std::uint64_t sequence, std::span<const std::byte> message) {
  begin_frame(out, FrameType::kData, kSequenceSize + message.size());
  ByteWriter w(out);
  w.u64(sequence);
  w.bytes(message);
}

void encode_repair(std::vector<std::byte>& out, const RepairFrame& repair) {
  begin_frame(out, FrameType::kRepair, kRepairFixedSize + repair.symbol.size());
  ByteWriter w(out);
  w.u64(repair.first_sequence);
  w.u8(static_cast<std::uint8_t>(repair.data_count));
  w.u8(static_cast<std::uint8_t>(repair.index));
  w.bytes(repair.symbol);
}

void encode_ack(std::vector<std::byte>& out, const AckFrame& ack) {
  const std::size_t count = ack.ranges.size() < kMaxAckRanges ? ack.ranges.size() : kMaxAckRanges;
  begin_frame(out, FrameType::kAck, kAckFixedSize + count * 16);
  ByteWriter w(out);
  w.u64(ack.cumulative);
  w.u32(ack.window_messages);
  w.u64(ack.arrivals.newest_ns);
  w.u32(ack.arrivals.first_ns);
  w.u16(ack.arrivals.count);
  w.u16(static_cast<std::uint16_t>(count));
  for (std::size_t i = 0; i < count; ++i) {
    w.u64(ack.ranges[i].begin);
    w.u64(ack.ranges[i].end);
  }
}

void encode_keepalive(std::vector<std::byte>& out) { begin_frame(out, FrameType::kKeepalive, 0); }

void encode_close(std::vector<std::byte>& out, CloseReason reason, const std::string& text) {
  const std::string clipped = text.substr(0, kMaxCloseText);
  begin_frame(out, FrameType::kClose, 1 + clipped.size());
  ByteWriter w(out);
  w.u8(static_cast<std::uint8_t>(reason));
  w.text(clipped);
}

std::span<std::byte> FrameReader::write_area(std::size_t minimum) {
  if (begin_ == end_) begin_ = end_ = 0;
  if (buffer_.size() - end_ < minimum) {
    // Move the unconsumed bytes to the front before growing.
    if (begin_ > 0) {
      std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    }
    if (buffer_.size() - end_ < minimum) buffer_.resize(end_ + minimum);
  }
  return {buffer_.data() + end_, buffer_.size() - end_};
}

std::optional<FrameView> FrameReader::next() {
  const std::size_t available = end_ - begin_;
  if (available < kFrameHeaderSize) return std::nullopt;
  ByteReader r(std::span<const std::byte>(buffer_.data() + begin_, kFrameHeaderSize), "header");
  const auto magic = r.u16();
  const auto version = r.u8();
  const auto type = r.u8();
  const std::size_t length = r.u32();
  if (magic != kFrameMagic) throw MalformedFrame("bad magic (not a LongPipe peer?)");
  if (version != kProtocolVersion) {
    throw MalformedFrame("protocol version " + std::to_string(version) + " (this side speaks " +
                         std::to_string(kProtocolVersion) + ")");
  }
  if (!known_type(type)) throw MalformedFrame("unknown frame type " + std::to_string(type));
  const auto frame_type = static_cast<FrameType>(type);
  const std::size_t limit = std::min(type_payload_limit(frame_type, max_payload_), max_payload_);
  if (length < tag_size_) throw MalformedFrame(std::string(frame_type_name(frame_type)) + " frame lacks its tag");
  if (length - tag_size_ > limit) {
    throw MalformedFrame(std::string(frame_type_name(frame_type)) + " payload of " +
                         std::to_string(length - tag_size_) + " bytes exceeds the limit of " + std::to_string(limit));
  }
  if (available < kFrameHeaderSize + length) return std::nullopt;
  std::byte* const frame = buffer_.data() + begin_;
  FrameView view{frame_type, {frame + kFrameHeaderSize, length - tag_size_}, {frame, kFrameHeaderSize},
                 {frame + kFrameHeaderSize + length - tag_size_, tag_size_}};
  begin_ += kFrameHeaderSize + length;
  return view;
}

}  // namespace lp
