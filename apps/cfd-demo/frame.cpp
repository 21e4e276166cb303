#include "frame.h"

#include <zlib.h>

#include <bit>
#include <ctime>

namespace lp::cfd {

namespace {

void put_u16(uint8_t* out, uint16_t v) {
  out[0] = static_cast<uint8_t>(v);
  out[1] = static_cast<uint8_t>(v >> 8);
}
void put_u32(uint8_t* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<uint8_t>(v >> (8 * i));
}
void put_u64(uint8_t* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint16_t get_u16(const uint8_t* in) { return static_cast<uint16_t>(in[0] | in[1] << 8); }
uint32_t get_u32(const uint8_t* in) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = v << 8 | in[i];
  return v;
}
uint64_t get_u64(const uint8_t* in) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | in[i];
  return v;
}

uint32_t crc32_of(const uint8_t* data, size_t size) {
  return static_cast<uint32_t>(::crc32_z(::crc32_z(0L, Z_NULL, 0), data, size));
}

}  // namespace

const char* field_kind_name(FieldKind kind) {
  switch (kind) {
    case FieldKind::kVorticity: return "vorticity";
    case FieldKind::kSpeed: return "speed";
  }
  return "unknown";
}

std::vector<uint8_t> Frame::encode() const {
  if (values.size() != static_cast<size_t>(width) * height) {
    throw FrameError("frame has " + std::to_string(values.size()) + " values for a " + std::to_string(width) + "x" +
                     std::to_string(height) + " field");
  }
  std::vector<uint8_t> bytes(kHeaderBytes + 4 * values.size());
  uint8_t* field = bytes.data() + kHeaderBytes;
  for (size_t i = 0; i < values.size(); ++i) put_u32(field + 4 * i, std::bit_cast<uint32_t>(values[i]));
  uint8_t* h = bytes.data();
  put_u32(h + 0, kMagic);
  put_u16(h + 4, kVersion);
  put_u16(h + 6, static_cast<uint16_t>(kind));
  put_u32(h + 8, frame_number);
  put_u32(h + 12, width);
  put_u32(h + 16, height);
  put_u32(h + 20, crc32_of(field, 4 * values.size()));
  put_u64(h + 24, step);
  put_u64(h + kSendTimeOffset, static_cast<uint64_t>(send_time_ns));
  return bytes;
}

Frame Frame::decode(std::span<const uint8_t> bytes) {
  if (bytes.size() < kHeaderBytes) {
    throw FrameError("frame of " + std::to_string(bytes.size()) + " bytes is shorter than its " +
                     std::to_string(kHeaderBytes) + "-byte header");
  }
  const uint8_t* h = bytes.data();
  if (get_u32(h) != kMagic) throw FrameError("not a frame (bad magic)");
  if (get_u16(h + 4) != kVersion) {
    throw FrameError("frame version " + std::to_string(get_u16(h + 4)) + ", expected " + std::to_string(kVersion));
  }
  Frame frame;
  const uint16_t kind = get_u16(h + 6);
  if (kind != static_cast<uint16_t>(FieldKind::kVorticity) && kind != static_cast<uint16_t>(FieldKind::kSpeed)) {
    throw FrameError("unknown field kind " + std::to_string(kind));
  }
  frame.kind = static_cast<FieldKind>(kind);
  frame.frame_number = get_u32(h + 8);
  frame.width = get_u32(h + 12);
  frame.height = get_u32(h + 16);
  frame.step = get_u64(h + 24);
  frame.send_time_ns = static_cast<int64_t>(get_u64(h + kSendTimeOffset));
  if (frame.width == 0 || frame.height == 0 || frame.width > kMaxSide || frame.height > kMaxSide ||
      static_cast<uint64_t>(frame.width) * frame.height > kMaxValues) {
    throw FrameError("frame size " + std::to_string(frame.width) + "x" + std::to_string(frame.height) +
                     " out of range (1.." + std::to_string(kMaxSide) + " per side)");
  }
  const size_t count = static_cast<size_t>(frame.width) * frame.height;
  if (bytes.size() != kHeaderBytes + 4 * count) {
    throw FrameError("frame of " + std::to_string(bytes.size()) + " bytes, expected " +
                     std::to_string(kHeaderBytes + 4 * count) + " for " + std::to_string(frame.width) + "x" +
                     std::to_string(frame.height));
  }
  const uint8_t* field = h + kHeaderBytes;
  if (crc32_of(field, 4 * count) != get_u32(h + 20)) throw FrameError("frame field fails its CRC-32 check");
  frame.values.resize(count);
  for (size_t i = 0; i < count; ++i) frame.values[i] = std::bit_cast<float>(get_u32(field + 4 * i));
  return frame;
}

void Frame::stamp_send_time(std::vector<uint8_t>& bytes, int64_t send_time_ns) {
  if (bytes.size() < kHeaderBytes) throw FrameError("cannot stamp a buffer shorter than a frame header");
  put_u64(bytes.data() + kSendTimeOffset, static_cast<uint64_t>(send_time_ns));
}

int64_t realtime_ns() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

}  // namespace lp::cfd
